/**
 * The Transport port over TCP: the Raft peer links, and the stream half of gossip.
 *
 * Connections. Each node keeps at most one outbound connection per peer, opened on the first
 * `send` to it, and uses it only to send; what a peer sends arrives on the peer's own outbound
 * connection (our inbound one). So between two nodes there are two connections, one per
 * direction, and order per direction is TCP's order. The connecting side opens with a `hello`
 * frame (its id, the cluster name, the id it means to reach, its address); the accepting side
 * answers `welcome` or `refused` with the reason (tcp-handshake.ts). Messages queue from the
 * first send and leave once the welcome is in.
 *
 * Delivery (the port's contract, and how it is kept):
 * - Stream order and at-most-once: one connection per direction, frames written in queue order.
 * - When a connection breaks, its queued messages are dropped, the peer is reported through
 *   `onPeerReset` (once per outage), and the link backs off: a delay that doubles from
 *   `reconnectDelayMsMin` to `reconnectDelayMsMax`, jittered with the `Random` passed in.
 *   Messages sent during the back-off are dropped (the protocols retry; stale messages would
 *   only arrive late), and the first of them makes the link reconnect when the delay ends.
 * - Backpressure: frames go to the socket only while `socket.write` accepts them; after a
 *   refusal the link waits for 'drain'. Frames waiting meanwhile are bounded per peer by
 *   `queueBytesMax` and `queueMessagesMax`; beyond, new messages are dropped and counted.
 * - Nothing thrown for an unreachable or unknown peer: dropped and counted in `metrics()`.
 * - `sendDatagram` sends on the stream: reliable is a valid kind of best effort. NetTransport
 *   pairs this transport with a UDP socket for real datagrams.
 * - An inbound connection is reported through `onPeerReset` when it ends without a goodbye
 *   frame and not by our doing (the peer died, closed its transport, or the network broke).
 *   A deliberate idle close sends a goodbye frame first and is not reported.
 * - The handler is called from socket events only, never from inside `send`.
 *
 * Untrusted input: every inbound frame's length is checked before buffering; before the
 * handshake completes only small frames are accepted; decoded values go through the caller's
 * total validator; any violation closes that connection only, is logged and counted, and the
 * node keeps serving. An HTTP request gets a 400 response that names the port's purpose.
 *
 * Authentication (`authentication`, tcp-transport-auth.ts): mutual TLS, where a connection's
 * peer id is the one its verified certificate names; or a cluster secret proven by a mutual
 * HMAC challenge; or none. A connection becomes a peer's inbound link only once it has proven
 * itself, so a second connection claiming an authenticated peer's id cannot displace that
 * peer's link unless it proves the same. Every refused handshake is counted by reason
 * (`handshakesRefusedByReason`) and logged, one line per reason and remote host per minute.
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { assert } from '../core/assert.js';
import { formatConfigProblems } from '../core/config.js';
import type { NodeId } from '../core/ids.js';
import { randomFloat, type Random } from '../core/random.js';
import { ConfigInvalidError, CoordError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import { SILENT_LOGGER, type Logger } from '../ports/logger.js';
import type { Timer, TimerHandle } from '../ports/timer.js';
import type { Transport, TransportHandler } from '../ports/transport.js';
import {
  FrameDecoder, MessageCodec, goodbyeFrame, httpRefusalResponse, type FrameError,
} from './frame-codec.js';
import { FrameQueue } from './frame-queue.js';
import { validateSafely, type MessageValidator } from './message-validators.js';
import {
  LOOPBACK_HOST, formatPeerAddress, isPeerPort, parsePeerAddress, samePeerAddress,
  type PeerAddress,
} from './peer-address.js';
import { SystemClock } from './system-clock.js';
import {
  HANDSHAKE_FRAME_BYTES_MAX, WIRE_VERSION, parseHandshakeReply, parseHello, parseProof,
  type Challenge, type Hello, type HandshakeReply, type Proof,
} from './tcp-handshake.js';
import {
  HANDSHAKE_NONCE_BYTES, NO_PEER_AUTHENTICATION, NonceMemory, PEER_SECRET_BYTES_MIN,
  RateLimitedLog, describeTlsHandshakeError, handshakeProof, memberIdOfCertificate,
  peerTlsSetup, proofMatches,
  zeroRefusalCounts, type HandshakeRefusalReason, type HandshakeTranscript, type PeerAuthentication,
  type RefusalCounts,
} from './tcp-transport-auth.js';
import {
  TCP_TRANSPORT_DEFAULTS, validateTcpTransportConfig, type TcpTransportConfig,
} from './tcp-transport-config.js';

export interface TcpTransportOptions<M> {
  /** This node's id, sent in every hello. */
  readonly localId: NodeId;
  /** Where to listen. Default host: 127.0.0.1 (loopback only); port 0 lets the OS pick. */
  readonly listen?: { readonly host?: string; readonly port?: number };
  /**
   * The address peers should use to reach us, sent in hellos. Default: the bound address. Set
   * it when listening on a wildcard host (0.0.0.0, ::), which is never sent.
   */
  readonly advertiseAddress?: PeerAddress;
  /** The initial address book; change it later with `setPeerAddress`. */
  readonly peers?: ReadonlyMap<NodeId, PeerAddress>;
  /** Total shape check of decoded messages (RAFT_MESSAGE_VALIDATOR, SWIM_MESSAGE_VALIDATOR). */
  readonly validate: MessageValidator<M>;
  /** Jitter of reconnect delays (seeded in tests, OS-seeded in production). */
  readonly random: Random;
  readonly config?: Partial<TcpTransportConfig>;
  readonly logger?: Logger;
  /** Default: the system timers. */
  readonly timer?: Timer;
  /** For rate-limiting log lines. Default: the system clock. */
  readonly clock?: Clock;
  /**
   * How peers prove who they are (tcp-transport-auth.ts). Both sides of a link must use the
   * same kind. Default: none (the caller decides where that is acceptable: loopback, gossip).
   */
  readonly authentication?: PeerAuthentication;
}

export interface SetPeerAddressOptions {
  /**
   * The node at this address may have any id: the handshake does not check it. For seeds known
   * only by address (gossip join); messages from that node arrive under its real id.
   */
  readonly anyId?: boolean;
}

/** Counters (since start) and gauges (now), as a plain object for /metrics. */
export interface TcpTransportMetrics {
  /** Messages written to sockets, and their bytes including frame headers. */
  messagesSent: number;
  bytesSent: number;
  /** Valid messages received (delivered, or dropped for lack of a handler), with headers. */
  messagesReceived: number;
  bytesReceived: number;
  droppedUnknownPeer: number;
  /** Sent while the link backed off, or queued when its connect failed or it broke. */
  droppedUnreachable: number;
  droppedQueueFull: number;
  /** Encoded larger than `frameBytesMax`. */
  droppedTooLarge: number;
  droppedEncodeFailed: number;
  /** Sent after `close()`, or queued at `close()`. */
  droppedClosed: number;
  droppedNoHandler: number;
  /** Inbound framing or payload errors, all kinds (each closed its connection). */
  decodeErrors: number;
  framesTooLarge: number;
  httpRequestsRefused: number;
  /** Decoded values the validator refused (each closed its connection). */
  invalidMessages: number;
  /**
   * Inbound handshakes we refused (any reason, authentication included) or that never
   * completed in time; `handshakesRefusedByReason` splits them by reason.
   */
  handshakesRefused: number;
  handshakesRefusedByReason: RefusalCounts;
  /** Our hellos that peers refused, or answered with something else than a welcome. */
  handshakesRejectedByPeer: number;
  /**
   * Peers we connected to that failed to prove who they are (their certificate did not
   * verify or named another member, or their HMAC proof was wrong). Each closed the link.
   */
  outboundAuthFailures: number;
  connectsSucceeded: number;
  connectsFailed: number;
  /** Connect attempts after an earlier connection to that peer (or a failed attempt). */
  reconnects: number;
  peerResetsReported: number;
  idleCloses: number;
  inboundRefusedAtLimit: number;
  inboundConnections: number;
  outboundConnections: number;
  queuedMessages: number;
  queuedBytes: number;
}

type LinkState = 'idle' | 'connecting' | 'open' | 'backoff';

interface AddressEntry {
  readonly address: PeerAddress;
  readonly anyId: boolean;
}

/** Our outbound side towards one peer. */
interface OutboundLink {
  readonly peer: NodeId;
  readonly entry: AddressEntry;
  state: LinkState;
  socket: net.Socket | undefined;
  readonly queue: FrameQueue;
  waitingDrain: boolean;
  flushScheduled: boolean;
  failedAttempts: number;
  everOpened: boolean;
  resetReported: boolean;
  wantedDuringBackoff: boolean;
  sentSinceIdleCheck: boolean;
  /** The one timer of the current state: handshake deadline, idle check or back-off. */
  timer: TimerHandle | undefined;
  /** Why we are closing the current socket, when it is our doing (for the log). */
  failure: string | undefined;
  /** The failure was logged already (rate-limited): the close does not log it again. */
  failureLogged: boolean;
  /** Our nonce in the current hello (cluster-secret authentication). */
  nonce: Buffer | undefined;
  /** The id the peer proved (its certificate's, or its challenge's): welcome must agree. */
  provenId: NodeId | undefined;
}

/** A connection a peer opened to us. */
interface InboundConnection {
  readonly socket: net.Socket;
  readonly decoder: FrameDecoder;
  readonly remote: string;
  /** `proof`: a challenge was sent, the connector's proof is awaited (cluster secret). */
  state: 'hello' | 'proof' | 'open' | 'closing';
  peer: NodeId | undefined;
  /** The member id its verified certificate names (TLS). */
  certifiedId: NodeId | undefined;
  /** The hello and our challenge's nonce, while the proof is awaited (cluster secret). */
  hello: Hello | undefined;
  acceptorNonce: Buffer | undefined;
  goodbye: boolean;
  closedByUs: boolean;
  timer: TimerHandle | undefined;
}

/** Jittered exponential back-off: uniform in [d/2, d), d = min(max, min * 2^failedAttempts). */
export function reconnectDelayMs(
  failedAttempts: number, delayMsMin: number, delayMsMax: number, random: Random,
): number {
  const base = Math.min(delayMsMax, delayMsMin * 2 ** Math.min(failedAttempts, 30));
  return base / 2 + randomFloat(random) * (base / 2);
}

/** A socket we end on purpose is destroyed after this long if the peer does not close it. */
const LINGER_MS_MAX = 2000;
/** TCP keep-alive probes after this much silence find half-open connections. Unit: ms. */
const KEEPALIVE_DELAY_MS = 15_000;
/** Hosts that mean "every interface": fine to listen on, useless as an address to reach. */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::', '']);
/** One log line per refusal reason and remote host per this long. Unit: ms. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;
/** Distinct (reason, host) keys the refusal log remembers. Bounds its memory. */
const REFUSAL_LOG_KEYS_MAX = 256;
/**
 * Hello nonces remembered to name a replay. Unit: nonces (44 bytes each as keys: ~200 KiB).
 * A replay older than this still fails: the acceptor's own nonce is fresh every time.
 */
const HELLO_NONCES_MAX = 4096;

export class TcpTransport<M> implements Transport<M> {
  readonly localId: NodeId;
  readonly config: TcpTransportConfig;
  private readonly codec = new MessageCodec();
  private readonly book = new Map<NodeId, AddressEntry>();
  private readonly links = new Map<NodeId, OutboundLink>();
  private readonly inbound = new Set<InboundConnection>();
  private readonly inboundByPeer = new Map<NodeId, InboundConnection>();
  /** Sockets we ended on purpose, with their destroy deadline. */
  private readonly lingering = new Map<net.Socket, TimerHandle>();
  private readonly counters: TcpTransportMetrics = zeroMetrics();
  private readonly log: Logger;
  private readonly timer: Timer;
  private readonly validate: MessageValidator<M>;
  private readonly random: Random;
  private handler: TransportHandler<M> | undefined;
  private closed = false;
  private readonly advertised: PeerAddress;
  private readonly auth: PeerAuthentication;
  /** For connecting (TLS only). */
  private readonly clientContext: tls.SecureContext | undefined;
  private readonly refusalLog: RateLimitedLog;
  private readonly helloNonces = new NonceMemory(HELLO_NONCES_MAX);

  /**
   * Starts listening; resolves once the port is bound. Rejects with CONCLAVE_UNAVAILABLE, or
   * CONCLAVE_CONFIG_INVALID (config, or TLS files that do not load or do not name `localId`).
   */
  static async listen<M>(options: TcpTransportOptions<M>): Promise<TcpTransport<M>> {
    const host = options.listen?.host ?? LOOPBACK_HOST;
    const port = options.listen?.port ?? 0;
    const config = { ...TCP_TRANSPORT_DEFAULTS, ...options.config };
    const problems = validateTcpTransportConfig(config);
    if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
    const auth = options.authentication ?? NO_PEER_AUTHENTICATION;
    if (auth.kind === 'secret' && auth.secret.length < PEER_SECRET_BYTES_MIN) {
      throw new ConfigInvalidError(`the cluster secret has ${auth.secret.length} bytes; ` +
        `at least ${PEER_SECRET_BYTES_MIN} are needed`);
    }
    const setup = auth.kind === 'tls'
      ? peerTlsSetup(auth, options.localId, config.handshakeTimeoutMs) : undefined;
    const server = setup === undefined ? net.createServer({ noDelay: true })
      : tls.createServer({ ...setup.serverOptions, noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        const where = formatPeerAddress({ host, port });
        reject(new CoordError('CONCLAVE_UNAVAILABLE',
          `cannot listen for peers on ${where}: ${error.code ?? error.message}`, { cause: error }));
      });
      server.listen(port, host, () => resolve());
    });
    const bound = server.address() as net.AddressInfo;
    return new TcpTransport(options, config, server, { host, port: bound.port },
      setup?.clientContext);
  }

  private constructor(
    options: TcpTransportOptions<M>,
    config: TcpTransportConfig,
    private readonly server: net.Server,
    private readonly bound: PeerAddress,
    clientContext: tls.SecureContext | undefined,
  ) {
    this.localId = options.localId;
    this.config = Object.freeze(config);
    this.validate = options.validate;
    this.random = options.random;
    this.timer = options.timer ?? new SystemClock();
    this.log = (options.logger ?? SILENT_LOGGER)
      .child({ component: 'tcp-transport', node: this.localId });
    this.advertised = options.advertiseAddress ?? bound;
    this.auth = options.authentication ?? NO_PEER_AUTHENTICATION;
    this.clientContext = clientContext;
    const clock = options.clock ?? new SystemClock();
    this.refusalLog = new RateLimitedLog(this.log, () => clock.monotonicMs(),
      REFUSAL_LOG_INTERVAL_MS, REFUSAL_LOG_KEYS_MAX);
    for (const [id, address] of options.peers ?? []) this.setPeerAddress(id, address);
    if (server instanceof tls.Server) this.listenTls(server);
    else server.on('connection', (socket) => this.onConnection(socket));
    server.on('error', (error) => this.log.error({ err: error.message }, 'peer listener failed'));
    this.log.info({ address: formatPeerAddress(bound), authentication: this.auth.kind },
      'listening for peers');
  }

  /**
   * TLS: the listener bounds all connections, TLS handshakes in progress included
   * (`maxConnections`); a connection joins `inbound` once its TLS handshake completed.
   */
  private listenTls(server: tls.Server): void {
    server.maxConnections = this.config.inboundConnectionsMax;
    server.on('drop', () => {
      this.counters.inboundRefusedAtLimit++;
      this.refusalLog.warn('limit', { limit: this.config.inboundConnectionsMax },
        'inbound connection refused: at limit');
    });
    server.on('secureConnection', (socket: tls.TLSSocket) => this.onConnection(socket));
    server.on('tlsClientError', (error: Error, socket: tls.TLSSocket) => {
      if (this.closed) return;
      const timedOut = /timed out|timeout/i.test(error.message);
      this.countRefusal(timedOut ? 'timeout' : 'tls-failed');
      const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
      this.refusalLog.warn(`tls-failed|${socket.remoteAddress ?? '?'}`, { remote },
        `peer handshake refused: ${describeTlsHandshakeError(error)}`);
    });
  }

  /** The bound listen address (with the port the OS picked when 0 was asked). */
  get address(): PeerAddress {
    return this.bound;
  }

  /** The address sent to peers in hellos. */
  get advertiseAddress(): PeerAddress {
    return this.advertised;
  }

  /** A snapshot of the counters and gauges. */
  metrics(): TcpTransportMetrics {
    let queuedMessages = 0;
    let queuedBytes = 0;
    let outboundConnections = 0;
    for (const link of this.links.values()) {
      queuedMessages += link.queue.size;
      queuedBytes += link.queue.bytes;
      if (link.state === 'open') outboundConnections++;
    }
    return {
      ...this.counters, inboundConnections: this.inbound.size, outboundConnections,
      queuedMessages, queuedBytes,
      handshakesRefusedByReason: { ...this.counters.handshakesRefusedByReason },
    };
  }

  /** The address book entry of `id`. */
  peerAddress(id: NodeId): PeerAddress | undefined {
    return this.book.get(id)?.address;
  }

  /**
   * Adds, changes (`address`) or removes (`undefined`) a peer. A change closes the link to the
   * old address (its queued messages are dropped); the next send connects to the new one.
   * Untrusted text must go through `parsePeerAddress` first.
   */
  setPeerAddress(
    id: NodeId, address: PeerAddress | undefined, options: SetPeerAddressOptions = {},
  ): void {
    assert(address === undefined || (isPeerPort(address.port) && address.host.length > 0),
      () => `setPeerAddress(${id}): not a peer address: ${JSON.stringify(address)}`);
    const current = this.book.get(id);
    const anyId = options.anyId ?? false;
    if (samePeerAddress(current?.address, address) && current?.anyId === anyId) return;
    if (address === undefined) this.book.delete(id);
    else this.book.set(id, { address: { host: address.host, port: address.port }, anyId });
    const link = this.links.get(id);
    if (link !== undefined) {
      this.links.delete(id);
      this.closeLinkOnPurpose(link, 'peer address changed');
    }
  }

  setHandler(handler: TransportHandler<M>): void {
    this.handler = handler;
  }

  send(to: NodeId, message: M): void {
    if (this.closed) {
      this.counters.droppedClosed++;
      return;
    }
    const entry = this.book.get(to);
    if (entry === undefined) {
      this.counters.droppedUnknownPeer++;
      return;
    }
    const link = this.linkTo(to, entry);
    link.sentSinceIdleCheck = true;
    if (link.state === 'backoff') {
      link.wantedDuringBackoff = true;
      this.counters.droppedUnreachable++;
      return;
    }
    const frame = this.encode(to, message);
    if (frame === undefined) return;
    if (link.queue.size >= this.config.queueMessagesMax ||
        link.queue.bytes + frame.length > this.config.queueBytesMax) {
      this.counters.droppedQueueFull++;
      return;
    }
    link.queue.push(frame);
    if (link.state === 'idle') this.connect(link);
    else if (link.state === 'open') this.scheduleFlush(link);
  }

  /** Sent on the stream (see the module comment). */
  sendDatagram(to: NodeId, message: M): void {
    this.send(to, message);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.server.close();
    for (const link of this.links.values()) {
      link.timer?.cancel();
      this.counters.droppedClosed += link.queue.clear();
      link.socket?.destroy();
      link.socket = undefined;
    }
    this.links.clear();
    for (const connection of this.inbound) {
      connection.timer?.cancel();
      connection.closedByUs = true;
      connection.socket.destroy();
    }
    this.inbound.clear();
    this.inboundByPeer.clear();
    for (const [socket, deadline] of this.lingering) {
      deadline.cancel();
      socket.destroy();
    }
    this.lingering.clear();
    this.log.info({}, 'closed');
  }

  private encode(to: NodeId, message: M): Buffer | undefined {
    const encoded = this.codec.encodeFrame(message, this.config.frameBytesMax);
    if (encoded.ok) return encoded.bytes;
    if (encoded.error.kind === 'payload-too-large') this.counters.droppedTooLarge++;
    else this.counters.droppedEncodeFailed++;
    this.log.warn({ peer: to, kind: encoded.error.kind },
      `message dropped: ${encoded.error.message}`);
    return undefined;
  }

  private linkTo(peer: NodeId, entry: AddressEntry): OutboundLink {
    let link = this.links.get(peer);
    if (link === undefined) {
      link = {
        peer, entry, state: 'idle', socket: undefined, queue: new FrameQueue(), waitingDrain: false,
        flushScheduled: false, failedAttempts: 0, everOpened: false, resetReported: false,
        wantedDuringBackoff: false, sentSinceIdleCheck: false, timer: undefined, failure: undefined,
        failureLogged: false, nonce: undefined, provenId: undefined,
      };
      this.links.set(peer, link);
    }
    return link;
  }

  // ---- outbound: connect, handshake, flush, back-off ----

  private connect(link: OutboundLink): void {
    if (link.failedAttempts > 0 || link.everOpened) this.counters.reconnects++;
    link.state = 'connecting';
    link.failure = undefined;
    link.failureLogged = false;
    link.nonce = undefined;
    link.provenId = undefined;
    const address = link.entry.address;
    const socket = this.clientContext === undefined ? new net.Socket()
      : tls.connect({ host: address.host, port: address.port, secureContext: this.clientContext,
        // The member id in the certificate is what is checked (onLinkSecure), not host names.
        rejectUnauthorized: false, checkServerIdentity: () => undefined });
    link.socket = socket;
    const decoder = new FrameDecoder(HANDSHAKE_FRAME_BYTES_MAX);
    let errorCode: string | undefined;
    socket.on('error', (error: NodeJS.ErrnoException) => (errorCode = error.code ?? error.message));
    socket.on('close', () => this.onLinkClosed(link, socket, errorCode));
    socket.on('data', (chunk: Buffer) => this.onLinkData(link, socket, decoder, chunk));
    socket.on('drain', () => {
      if (link.socket !== socket) return;
      link.waitingDrain = false;
      this.flush(link);
    });
    link.timer = this.timer.setTimer(this.config.handshakeTimeoutMs,
      () => this.failLink(link, socket, `no welcome within ${this.config.handshakeTimeoutMs} ms`));
    try {
      socket.setNoDelay(true);
      if (socket instanceof tls.TLSSocket) {
        socket.once('secureConnect', () => this.onLinkSecure(link, socket));
      } else {
        socket.connect({ host: address.host, port: address.port });
        socket.write(this.handshakeFrame(this.hello(link)));
      }
    } catch (error) {
      // Reported through the socket's own 'error' and 'close' events, never synchronously.
      socket.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private hello(link: OutboundLink): Hello {
    const hello: { -readonly [K in keyof Hello]: Hello[K] } = {
      kind: 'conclave-hello', version: WIRE_VERSION, cluster: this.config.clusterName,
      from: this.localId,
    };
    if (!WILDCARD_HOSTS.has(this.advertised.host)) {
      hello.address = formatPeerAddress(this.advertised);
    }
    if (!link.entry.anyId) hello.to = link.peer;
    if (this.auth.kind === 'secret') {
      link.nonce = randomBytes(HANDSHAKE_NONCE_BYTES);
      hello.nonce = link.nonce;
    }
    return hello;
  }

  /** TLS is up: the peer's certificate must name the member we mean to reach. */
  private onLinkSecure(link: OutboundLink, socket: tls.TLSSocket): void {
    if (link.socket !== socket || this.closed) return;
    const identity = memberIdOfCertificate(socket);
    const where = formatPeerAddress(link.entry.address);
    // The reason is told to the acceptor (a graceful close lets it finish verifying ours), so
    // that both sides log why.
    if ('error' in identity) {
      this.failLinkAuth(link, socket, `${identity.error} (connecting to ${where})`,
        `the connecting member ${this.localId} refused your certificate: ${identity.error}`);
      return;
    }
    if (!link.entry.anyId && identity.id !== link.peer) {
      this.failLinkAuth(link, socket,
        `the certificate at ${where} names member ${identity.id}, not ${link.peer}`,
        `the connecting member ${this.localId} expected ${link.peer} here, not ${identity.id}`);
      return;
    }
    link.provenId = identity.id;
    socket.write(this.handshakeFrame(this.hello(link)));
  }

  /**
   * The peer failed to prove who it is: counted, logged (rate-limited), link closed. `tell`:
   * the reason is sent to the acceptor first, so that both sides log it.
   */
  private failLinkAuth(link: OutboundLink, socket: net.Socket, why: string,
    tell?: string): void {
    this.counters.outboundAuthFailures++;
    this.refusalLog.warn(`out|${link.peer}|${why}`,
      { peer: link.peer, address: formatPeerAddress(link.entry.address) },
      `peer failed authentication: ${why}`);
    const farewell = tell === undefined ? undefined
      : this.handshakeFrame({ kind: 'conclave-refused', reason: tell });
    this.failLink(link, socket, why, farewell);
    link.failureLogged = true;
  }

  /** Cluster secret: check the acceptor's proof, then prove ourselves. */
  private onChallenge(link: OutboundLink, socket: net.Socket, challenge: Challenge): void {
    const where = formatPeerAddress(link.entry.address);
    if (this.auth.kind !== 'secret' || link.nonce === undefined) {
      this.counters.handshakesRejectedByPeer++;
      this.failLink(link, socket, `the peer at ${where} asks for the cluster-secret handshake; ` +
        'this member has no --peer-secret-file');
      return;
    }
    if (link.provenId !== undefined) {
      this.failLinkAuth(link, socket, `the peer at ${where} sent a second challenge`);
      return;
    }
    if (!link.entry.anyId && challenge.from !== link.peer) {
      this.counters.handshakesRejectedByPeer++;
      this.failLink(link, socket,
        `the node at this address is ${challenge.from}, not ${link.peer}`);
      return;
    }
    const transcript: HandshakeTranscript = {
      version: WIRE_VERSION, cluster: this.config.clusterName, connector: this.localId,
      acceptor: challenge.from, connectorNonce: link.nonce, acceptorNonce: challenge.nonce,
    };
    if (!proofMatches(challenge.proof, handshakeProof(this.auth.secret, 'acceptor', transcript))) {
      this.failLinkAuth(link, socket, `HMAC mismatch: wrong cluster secret (the peer at ${where} ` +
        'does not hold this cluster\'s secret)',
      'HMAC mismatch: wrong cluster secret (your proof did not verify here)');
      return;
    }
    link.provenId = challenge.from;
    const proof: Proof = {
      kind: 'conclave-proof', proof: handshakeProof(this.auth.secret, 'connector', transcript),
    };
    socket.write(this.handshakeFrame(proof));
  }

  private handshakeFrame(value: Hello | HandshakeReply | Proof): Buffer {
    const encoded = this.codec.encodeFrame(value, HANDSHAKE_FRAME_BYTES_MAX);
    assert(encoded.ok, () => `handshake frame cannot be encoded: ${JSON.stringify(value)}`);
    return encoded.bytes;
  }

  private onLinkData(
    link: OutboundLink, socket: net.Socket, decoder: FrameDecoder, chunk: Buffer,
  ): void {
    if (link.socket !== socket || this.closed) return;
    const out = decoder.push(chunk);
    if (out.error !== undefined) {
      this.counters.handshakesRejectedByPeer++;
      this.failLink(link, socket, `bad answer to hello: ${out.error.message}`);
      return;
    }
    for (const payload of out.payloads) {
      if (link.state !== 'connecting') {
        this.failLink(link, socket, 'peer sent data after its welcome');
        return;
      }
      const decoded = this.codec.decodePayload(payload);
      const reply = decoded.ok
        ? parseHandshakeReply(decoded.value)
        : { error: decoded.error.message };
      if ('error' in reply || reply.kind === 'conclave-refused') {
        this.counters.handshakesRejectedByPeer++;
        const why = 'error' in reply ? reply.error : `refused: ${reply.reason}`;
        this.refusalLog.warn(`out|${link.peer}|${why}`,
          { peer: link.peer, address: formatPeerAddress(link.entry.address) },
          `peer did not accept our hello: ${why}`);
        this.failLink(link, socket, why);
        link.failureLogged = true;
        return;
      }
      if (reply.kind === 'conclave-challenge') {
        this.onChallenge(link, socket, reply);
        if (link.failure !== undefined) return;
        continue;
      }
      if (this.auth.kind !== 'none' && link.provenId === undefined) {
        this.failLinkAuth(link, socket, 'the peer welcomed us without proving it holds the ' +
          'cluster secret (is it running with --insecure?)');
        return;
      }
      const expected = link.provenId ?? (link.entry.anyId ? undefined : link.peer);
      if (expected !== undefined && reply.from !== expected) {
        this.counters.handshakesRejectedByPeer++;
        this.failLink(link, socket, `the node at this address is ${reply.from}, not ${expected}`);
        return;
      }
      this.onLinkOpen(link, socket, reply.from);
    }
  }

  private onLinkOpen(link: OutboundLink, socket: net.Socket, remoteId: NodeId): void {
    link.timer?.cancel();
    link.state = 'open';
    link.failedAttempts = 0;
    link.everOpened = true;
    link.resetReported = false;
    link.waitingDrain = false;
    socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
    this.counters.connectsSucceeded++;
    this.log.info({ peer: link.peer, remoteId, address: formatPeerAddress(link.entry.address) },
      'connected to peer');
    this.armIdleCheck(link);
    this.flush(link);
  }

  private scheduleFlush(link: OutboundLink): void {
    if (link.flushScheduled) return;
    link.flushScheduled = true;
    // Everything sent in this turn of the event loop leaves in one writev.
    queueMicrotask(() => {
      link.flushScheduled = false;
      this.flush(link);
    });
  }

  private flush(link: OutboundLink): void {
    const socket = link.socket;
    if (link.state !== 'open' || link.waitingDrain || socket === undefined || this.closed) return;
    socket.cork();
    for (let frame = link.queue.shift(); frame !== undefined; frame = link.queue.shift()) {
      this.counters.messagesSent++;
      this.counters.bytesSent += frame.length;
      if (!socket.write(frame)) {
        link.waitingDrain = true; // backpressure: the rest waits for 'drain'
        break;
      }
    }
    socket.uncork();
  }

  private armIdleCheck(link: OutboundLink): void {
    if (this.config.idleCloseMs === 0) return;
    link.sentSinceIdleCheck = false;
    link.timer = this.timer.setTimer(this.config.idleCloseMs, () => {
      if (link.state !== 'open' || this.closed) return;
      if (link.sentSinceIdleCheck || link.queue.size > 0 || link.waitingDrain) {
        this.armIdleCheck(link);
        return;
      }
      this.counters.idleCloses++;
      this.closeLinkOnPurpose(link, 'idle');
    });
  }

  /** Ends the link's connection without a reset report; the link is idle afterwards. */
  private closeLinkOnPurpose(link: OutboundLink, why: string): void {
    link.timer?.cancel();
    link.timer = undefined;
    this.counters.droppedUnreachable += link.queue.clear();
    const socket = link.socket;
    const wasOpen = link.state === 'open';
    link.socket = undefined; // its later events are ignored
    link.state = 'idle';
    link.waitingDrain = false;
    if (socket === undefined) return;
    this.log.debug({ peer: link.peer, why }, 'closing connection to peer');
    if (wasOpen) this.lingerEnd(socket, goodbyeFrame());
    else socket.destroy();
  }

  /**
   * Our decision that the link's connection failed; 'close' follows and does the rest.
   * `farewell`, when given, is written first (the socket then closes within LINGER_MS_MAX).
   */
  private failLink(link: OutboundLink, socket: net.Socket, why: string, farewell?: Buffer): void {
    if (link.socket !== socket) return;
    link.failure = why;
    if (farewell === undefined) socket.destroy();
    else this.lingerEnd(socket, farewell);
  }

  private onLinkClosed(
    link: OutboundLink, socket: net.Socket, errorCode: string | undefined,
  ): void {
    if (link.socket !== socket || this.closed) return;
    link.socket = undefined;
    link.timer?.cancel();
    const wasOpen = link.state === 'open';
    const why = link.failure ?? errorCode ?? (wasOpen ? 'closed by peer' : 'closed before welcome');
    if (!wasOpen) this.counters.connectsFailed++;
    this.counters.droppedUnreachable += link.queue.clear();
    const fields = { peer: link.peer, address: formatPeerAddress(link.entry.address), why };
    if (link.failureLogged) this.log.debug(fields, 'connection to peer failed (logged above)');
    else if (wasOpen || link.failedAttempts === 0) this.log.warn(fields, wasOpen
      ? 'connection to peer broke' : 'cannot connect to peer');
    else this.log.debug(fields, 'reconnect failed');
    this.startBackoff(link);
    if (!link.resetReported) {
      link.resetReported = true;
      this.reportReset(link.peer);
    }
  }

  private startBackoff(link: OutboundLink): void {
    const delayMs = reconnectDelayMs(link.failedAttempts, this.config.reconnectDelayMsMin,
      this.config.reconnectDelayMsMax, this.random);
    link.failedAttempts++;
    link.state = 'backoff';
    link.waitingDrain = false;
    link.wantedDuringBackoff = false;
    link.timer = this.timer.setTimer(delayMs, () => {
      if (this.closed || link.state !== 'backoff' || this.links.get(link.peer) !== link) return;
      link.state = 'idle';
      link.timer = undefined;
      if (link.wantedDuringBackoff) {
        link.wantedDuringBackoff = false;
        this.connect(link);
      }
    });
  }

  private reportReset(peer: NodeId): void {
    if (this.closed) return;
    this.counters.peerResetsReported++;
    this.handler?.onPeerReset?.(peer);
  }

  // ---- inbound: accept, handshake, frames ----

  private onConnection(socket: net.Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    if (this.inbound.size >= this.config.inboundConnectionsMax) {
      this.counters.inboundRefusedAtLimit++;
      this.log.warn({ limit: this.config.inboundConnectionsMax },
        'inbound connection refused: at limit');
      socket.destroy();
      return;
    }
    const connection: InboundConnection = {
      socket, decoder: new FrameDecoder(HANDSHAKE_FRAME_BYTES_MAX),
      remote: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`,
      state: 'hello', peer: undefined, goodbye: false, closedByUs: false, timer: undefined,
      certifiedId: undefined, hello: undefined, acceptorNonce: undefined,
    };
    this.inbound.add(connection);
    socket.setNoDelay(true);
    connection.timer = this.timer.setTimer(this.config.handshakeTimeoutMs, () => {
      if (connection.state !== 'hello' && connection.state !== 'proof') return;
      this.refuse(connection, 'timeout', `no ${connection.state} in time: connection closed`,
        { tell: false });
    });
    socket.on('data', (chunk: Buffer) => this.onInboundData(connection, chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => this.log.debug(
      { remote: connection.remote, peer: connection.peer, err: error.code }, 'inbound error'));
    socket.on('close', () => this.onInboundClosed(connection));
    if (socket instanceof tls.TLSSocket) {
      const identity = memberIdOfCertificate(socket);
      if ('error' in identity) this.refuse(connection, identity.reason, identity.error);
      else connection.certifiedId = identity.id;
    }
  }

  private onInboundData(connection: InboundConnection, chunk: Buffer): void {
    // A handler may close the transport, and a bad frame closes the connection, mid-chunk.
    const stopped = (): boolean => connection.state === 'closing' || this.closed;
    if (stopped()) return;
    const out = connection.decoder.push(chunk);
    for (const payload of out.payloads) {
      if (stopped()) return;
      if (connection.state === 'hello') this.onHello(connection, payload);
      else if (connection.state === 'proof') this.onProof(connection, payload);
      else this.onInboundFrame(connection, payload);
    }
    if (out.error !== undefined && !stopped()) {
      this.onInboundProtocolError(connection, out.error);
    }
  }

  private onInboundProtocolError(connection: InboundConnection, error: FrameError): void {
    this.counters.decodeErrors++;
    if (error.kind === 'frame-too-large') this.counters.framesTooLarge++;
    this.log.warn({ remote: connection.remote, peer: connection.peer, kind: error.kind },
      `closing inbound connection: ${error.message}`);
    if (error.kind === 'http-request') {
      this.counters.httpRequestsRefused++;
      this.closeInbound(connection, httpRefusalResponse());
    } else {
      this.closeInbound(connection);
    }
  }

  private onHello(connection: InboundConnection, payload: Uint8Array): void {
    const decoded = this.codec.decodePayload(payload);
    if (!decoded.ok) {
      this.onInboundProtocolError(connection, decoded.error);
      return;
    }
    const hello = parseHello(decoded.value);
    if ('error' in hello) {
      const answer = parseHandshakeReply(decoded.value);
      if (!('error' in answer) && answer.kind === 'conclave-refused') {
        // The connector did not accept our certificate, and says why (its words, bounded).
        this.refuse(connection, 'tls-untrusted', 'refused by the connecting peer', { tell: false,
          fields: { said: answer.reason.slice(0, 200) } });
        return;
      }
      this.refuse(connection, 'malformed', hello.error);
      return;
    }
    if (hello.version !== WIRE_VERSION) {
      this.refuse(connection, 'version', `wire version ${hello.version} is not supported ` +
        `(this node speaks ${WIRE_VERSION})`);
      return;
    }
    if (hello.to !== undefined && hello.to !== this.localId) {
      this.refuse(connection, 'wrong-id',
        `this node is ${this.localId}, not ${hello.to} (address book out of date?)`);
      return;
    }
    switch (this.auth.kind) {
      case 'tls':
        // The id is the certificate's; a hello that claims another is refused, never believed.
        if (hello.from !== connection.certifiedId) {
          this.refuse(connection, 'claim-mismatch', `the hello claims to be ${hello.from}, ` +
            `but the peer certificate names ${connection.certifiedId ?? 'no member'}`);
          return;
        }
        this.acceptHello(connection, hello);
        return;
      case 'secret':
        this.challenge(connection, hello, this.auth.secret);
        return;
      case 'none':
        this.acceptHello(connection, hello);
        return;
    }
  }

  /** Cluster secret: answer the hello with our nonce and our proof; await theirs. */
  private challenge(connection: InboundConnection, hello: Hello, secret: Buffer): void {
    if (hello.nonce === undefined) {
      this.refuse(connection, 'auth-missing', 'this peer port requires the cluster-secret ' +
        'handshake (--peer-secret-file), and the hello carried no nonce');
      return;
    }
    if (this.helloNonces.replayed(hello.nonce)) {
      this.refuse(connection, 'nonce-replayed', 'replayed handshake: this hello nonce was ' +
        'seen before');
      return;
    }
    const nonce = randomBytes(HANDSHAKE_NONCE_BYTES);
    connection.hello = hello;
    connection.acceptorNonce = nonce;
    connection.state = 'proof';
    const proof = handshakeProof(secret, 'acceptor', this.transcript(hello, nonce));
    const challenge: Challenge = { kind: 'conclave-challenge', from: this.localId, nonce, proof };
    connection.socket.write(this.handshakeFrame(challenge));
  }

  private onProof(connection: InboundConnection, payload: Uint8Array): void {
    const decoded = this.codec.decodePayload(payload);
    const proof = decoded.ok ? parseProof(decoded.value) : { error: decoded.error.message };
    const answer = decoded.ok ? parseHandshakeReply(decoded.value) : undefined;
    if (answer !== undefined && !('error' in answer) && answer.kind === 'conclave-refused') {
      // The connector could not verify our proof: it holds another secret.
      this.refuse(connection, 'hmac-mismatch', 'HMAC mismatch: wrong cluster secret (the ' +
        'connecting peer could not verify our proof)', { tell: false });
      return;
    }
    if ('error' in proof) {
      this.refuse(connection, 'malformed', proof.error);
      return;
    }
    const hello = connection.hello!;
    assert(this.auth.kind === 'secret' && connection.acceptorNonce !== undefined,
      'a proof is awaited only under the cluster secret, after our challenge');
    const expected = handshakeProof(this.auth.secret, 'connector',
      this.transcript(hello, connection.acceptorNonce));
    if (!proofMatches(proof.proof, expected)) {
      this.refuse(connection, 'hmac-mismatch', 'HMAC mismatch: wrong cluster secret',
        { fields: { claimed: hello.from } });
      return;
    }
    this.acceptHello(connection, hello);
  }

  private transcript(hello: Hello, acceptorNonce: Uint8Array): HandshakeTranscript {
    return {
      version: hello.version, cluster: hello.cluster, connector: hello.from,
      acceptor: this.localId, connectorNonce: hello.nonce!, acceptorNonce,
    };
  }

  /**
   * The peer is who it says (or, without authentication, is taken at its word): check the
   * cluster name, then make this connection the peer's inbound link.
   */
  private acceptHello(connection: InboundConnection, hello: Hello): void {
    if (hello.cluster !== this.config.clusterName) {
      const names = `node ${this.localId} is in cluster ` +
        `${JSON.stringify(this.config.clusterName)}, node ${hello.from} in ` +
        JSON.stringify(hello.cluster);
      // Our cluster's name is told only to a peer that has proven itself.
      const told = this.auth.kind === 'none'
        ? 'cluster name mismatch: this node is in another cluster (its name is not told to ' +
          'unauthenticated peers; see this node\'s log)'
        : `cluster name mismatch: ${names}`;
      this.refuse(connection, 'cluster', told, { logged: `cluster name mismatch: ${names}` });
      return;
    }
    connection.timer?.cancel();
    connection.state = 'open';
    connection.peer = hello.from;
    connection.hello = undefined;
    connection.decoder.frameBytesMax = this.config.frameBytesMax;
    connection.socket.setKeepAlive(true, KEEPALIVE_DELAY_MS);
    const previous = this.inboundByPeer.get(hello.from);
    if (previous !== undefined) {
      // The peer reconnected (and proved itself again, when the port authenticates): its old
      // connection is dead to it. Nothing more is read from it, so its leftovers cannot
      // overtake what arrives on the new one.
      this.closeInbound(previous);
    }
    this.inboundByPeer.set(hello.from, connection);
    this.learnAddress(hello);
    connection.socket.write(this.handshakeFrame({ kind: 'conclave-welcome', from: this.localId }));
    this.log.info({ peer: hello.from, remote: connection.remote }, 'peer connected');
  }

  private countRefusal(reason: HandshakeRefusalReason): void {
    this.counters.handshakesRefused++;
    this.counters.handshakesRefusedByReason[reason]++;
  }

  /**
   * Refuses a handshake: counted by reason, one log line per reason and remote host per
   * minute, the reason told to the peer in a `refused` frame (unless `tell` is false), closed.
   */
  private refuse(connection: InboundConnection, reason: HandshakeRefusalReason, told: string,
    options: { tell?: boolean; logged?: string; fields?: Record<string, unknown> } = {}): void {
    this.countRefusal(reason);
    const host = connection.socket.remoteAddress ?? '?';
    this.refusalLog.warn(`${reason}|${host}`,
      { remote: connection.remote, reason, ...options.fields },
      `peer handshake refused: ${options.logged ?? told}`);
    if (options.tell === false) this.closeInbound(connection);
    else {
      this.closeInbound(connection,
        this.handshakeFrame({ kind: 'conclave-refused', reason: told }));
    }
  }

  private learnAddress(hello: Hello): void {
    if (!this.config.learnPeerAddresses || hello.address === undefined) return;
    if (this.book.has(hello.from)) return;
    const address = parsePeerAddress(hello.address);
    if ('error' in address) return;
    this.book.set(hello.from, { address, anyId: false });
    this.log.debug({ peer: hello.from, address: hello.address }, 'learned peer address');
  }

  private onInboundFrame(connection: InboundConnection, payload: Uint8Array): void {
    const peer = connection.peer!;
    if (payload.length === 0) {
      connection.goodbye = true; // the peer closes this connection on purpose
      return;
    }
    const decoded = this.codec.decodePayload(payload);
    if (!decoded.ok) {
      this.onInboundProtocolError(connection, decoded.error);
      return;
    }
    const validation = validateSafely(this.validate, decoded.value);
    if (!validation.ok) {
      this.counters.invalidMessages++;
      this.log.warn({ peer, remote: connection.remote },
        `invalid message, closing connection: ${validation.problem}`);
      this.closeInbound(connection);
      return;
    }
    this.counters.messagesReceived++;
    this.counters.bytesReceived += payload.length + 4;
    if (this.handler === undefined) this.counters.droppedNoHandler++;
    else this.handler.onMessage(peer, validation.message);
  }

  /**
   * Writes `last`, half-closes, and destroys the socket at a fixed deadline if the peer has
   * not closed by then (a deadline, not an idle timeout: trickled bytes cannot keep it alive).
   */
  private lingerEnd(socket: net.Socket, last: string | Buffer): void {
    const deadline = this.timer.setTimer(LINGER_MS_MAX, () => socket.destroy());
    this.lingering.set(socket, deadline);
    socket.once('close', () => {
      deadline.cancel();
      this.lingering.delete(socket);
    });
    socket.end(last);
  }

  /** Closes an inbound connection by our decision, writing `last` first if given. */
  private closeInbound(connection: InboundConnection, last?: string | Buffer): void {
    connection.timer?.cancel();
    connection.state = 'closing';
    connection.closedByUs = true;
    if (last === undefined) connection.socket.destroy();
    else this.lingerEnd(connection.socket, last);
  }

  private onInboundClosed(connection: InboundConnection): void {
    connection.timer?.cancel();
    this.inbound.delete(connection);
    const peer = connection.peer;
    if (peer === undefined) return;
    if (this.inboundByPeer.get(peer) === connection) this.inboundByPeer.delete(peer);
    if (connection.closedByUs || connection.goodbye || this.closed) return;
    this.log.info({ peer, remote: connection.remote }, 'inbound connection from peer ended');
    this.reportReset(peer);
  }
}


function zeroMetrics(): TcpTransportMetrics {
  return {
    messagesSent: 0, bytesSent: 0, messagesReceived: 0, bytesReceived: 0,
    droppedUnknownPeer: 0, droppedUnreachable: 0, droppedQueueFull: 0, droppedTooLarge: 0,
    droppedEncodeFailed: 0, droppedClosed: 0, droppedNoHandler: 0, decodeErrors: 0,
    framesTooLarge: 0, httpRequestsRefused: 0, invalidMessages: 0, handshakesRefused: 0,
    handshakesRefusedByReason: zeroRefusalCounts(), outboundAuthFailures: 0,
    handshakesRejectedByPeer: 0, connectsSucceeded: 0, connectsFailed: 0, reconnects: 0,
    peerResetsReported: 0, idleCloses: 0, inboundRefusedAtLimit: 0, inboundConnections: 0,
    outboundConnections: 0, queuedMessages: 0, queuedBytes: 0,
  };
}
