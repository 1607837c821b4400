/**
 * Best-effort datagrams over UDP: SWIM's probes, acks and gossip. Each datagram is one
 * MessagePack array `[version, clusterName, senderId, message]` (UDP has no handshake, so every
 * datagram names its sender and cluster). Delivery is the port's datagram contract: a datagram
 * may be lost, duplicated, delayed or reordered; nothing is retried here.
 *
 * Untrusted input: datagrams longer than `datagramBytesMax` are dropped before decoding; the
 * envelope is checked, then the caller's total validator; anything wrong is dropped and
 * counted, never thrown.
 *
 * With a keyring (`keyring`, gossip-keyring.ts) the whole datagram, envelope included, is
 * sealed with AES-256-GCM: a datagram that does not open (no key, another key, tampered,
 * truncated) is dropped before decoding, counted by reason (`droppedDecrypt*`) and logged at
 * warn, one line per reason and remote host per minute. The sender id is then that of a key
 * holder; without a keyring it is claimed, not proven.
 */
import * as dgram from 'node:dgram';
import * as net from 'node:net';
import { assert } from '../core/assert.js';
import { formatConfigProblems, type ConfigProblem } from '../core/config.js';
import type { NodeId } from '../core/ids.js';
import { ConfigInvalidError, CoordError } from '../errors.js';
import { SILENT_LOGGER, type Logger } from '../ports/logger.js';
import type { TransportHandler } from '../ports/transport.js';
import { MessageCodec } from './frame-codec.js';
import {
  SEALED_OVERHEAD_BYTES, type GossipKeyring, type OpenFailure,
} from './gossip-keyring.js';
import { validateSafely, type MessageValidator } from './message-validators.js';
import {
  LOOPBACK_HOST, formatPeerAddress, isPeerPort, type PeerAddress,
} from './peer-address.js';
import { HANDSHAKE_TEXT_LENGTH_MAX, WIRE_VERSION } from './tcp-handshake.js';
import { RateLimitedLog } from './tcp-transport-auth.js';
import { integer } from './tcp-transport-config.js';

export interface UdpTransportConfig {
  /**
   * The cluster's name, carried in every datagram; datagrams of another cluster are dropped.
   * Unit: text, 1..255 characters. Default: `conclave`.
   */
  readonly clusterName: string;
  /**
   * Largest datagram sent or accepted, envelope included. A bigger outgoing message is dropped
   * and counted; a bigger incoming datagram is dropped before decoding.
   * Unit: bytes. Default: 8192. Trade-off: SWIM already keeps its datagrams near one Ethernet
   * frame (its own `datagramBytesMax` of 1400 by estimate), so this is a safety cap with room
   * for the estimate's error, not a target; datagrams above ~1472 bytes are IP-fragmented and
   * lost more often. At most 65507 (the IPv4 UDP payload limit).
   */
  readonly datagramBytesMax: number;
}

export const UDP_TRANSPORT_DEFAULTS: UdpTransportConfig = Object.freeze({
  clusterName: 'conclave',
  datagramBytesMax: 8192,
});

/** The largest UDP payload over IPv4. Unit: bytes. */
export const UDP_PAYLOAD_BYTES_LIMIT = 65_507;

export function validateUdpTransportConfig(config: UdpTransportConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (typeof config.clusterName !== 'string' || config.clusterName.length === 0 ||
      config.clusterName.length > HANDSHAKE_TEXT_LENGTH_MAX) {
    problems.push({ field: 'clusterName', value: config.clusterName,
      rule: `must be text of 1..${HANDSHAKE_TEXT_LENGTH_MAX} characters` });
  }
  integer(problems, 'datagramBytesMax', config.datagramBytesMax, 64, UDP_PAYLOAD_BYTES_LIMIT);
  return problems;
}

export interface UdpTransportOptions<M> {
  readonly localId: NodeId;
  /** Where to bind. Default host: 127.0.0.1 (loopback only); port 0 lets the OS pick. */
  readonly listen?: { readonly host?: string; readonly port?: number };
  readonly peers?: ReadonlyMap<NodeId, PeerAddress>;
  readonly validate: MessageValidator<M>;
  readonly config?: Partial<UdpTransportConfig>;
  /** Seal every datagram sent, and open every one received (see the module comment). */
  readonly keyring?: GossipKeyring;
  readonly logger?: Logger;
}

/** Counters since start, as a plain object for /metrics. */
export interface UdpTransportMetrics {
  datagramsSent: number;
  bytesSent: number;
  /** Valid datagrams received (delivered, or dropped for lack of a handler). */
  datagramsReceived: number;
  bytesReceived: number;
  droppedUnknownPeer: number;
  droppedTooLarge: number;
  droppedEncodeFailed: number;
  droppedClosed: number;
  droppedNoHandler: number;
  /** The socket refused or failed a send (EHOSTUNREACH, DNS failure, ...). */
  sendErrors: number;
  receivedTooLarge: number;
  /** Not MessagePack, or not a well-formed envelope. */
  decodeErrors: number;
  droppedOtherCluster: number;
  droppedOtherVersion: number;
  invalidMessages: number;
  /** Keyring on: a datagram that was not sealed (a member without the key, or noise). */
  droppedDecryptUnencrypted: number;
  /** Keyring on: shorter than a sealed header and tag. */
  droppedDecryptTruncated: number;
  /** Keyring on: sealed under a key this member does not hold. */
  droppedDecryptUnknownKey: number;
  /** Keyring on: the tag did not verify (tampered, or cut short inside). */
  droppedDecryptAuthFailed: number;
}

const DECRYPT_COUNTER: Readonly<Record<OpenFailure, keyof UdpTransportMetrics>> = {
  'unencrypted': 'droppedDecryptUnencrypted',
  'truncated': 'droppedDecryptTruncated',
  'unknown-key': 'droppedDecryptUnknownKey',
  'auth-failed': 'droppedDecryptAuthFailed',
};

/** One warn line per (reason, remote host) per minute; at most this many keys remembered. */
const DECRYPT_LOG_INTERVAL_MS = 60_000;
const DECRYPT_LOG_KEYS_MAX = 1024;

export class UdpTransport<M> {
  readonly localId: NodeId;
  readonly config: UdpTransportConfig;
  private readonly codec = new MessageCodec();
  private readonly book = new Map<NodeId, PeerAddress>();
  private readonly counters: UdpTransportMetrics = zeroMetrics();
  private readonly log: Logger;
  private readonly validate: MessageValidator<M>;
  private readonly keyring: GossipKeyring | undefined;
  private readonly refusalLog: RateLimitedLog;
  private handler: TransportHandler<M> | undefined;
  private closed = false;

  /** Binds the socket; rejects with CONCLAVE_UNAVAILABLE (e.g. the port is taken). */
  static async bind<M>(options: UdpTransportOptions<M>): Promise<UdpTransport<M>> {
    const config = { ...UDP_TRANSPORT_DEFAULTS, ...options.config };
    const problems = validateUdpTransportConfig(config);
    if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
    const host = options.listen?.host ?? LOOPBACK_HOST;
    const port = options.listen?.port ?? 0;
    const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException): void => {
        socket.close();
        reject(new CoordError('CONCLAVE_UNAVAILABLE',
          `cannot bind UDP on ${formatPeerAddress({ host, port })}: ${error.code ?? error.message}`,
          { cause: error }));
      };
      socket.once('error', onError);
      socket.bind(port, host, () => {
        socket.off('error', onError);
        resolve();
      });
    });
    return new UdpTransport(options, config, socket, { host, port: socket.address().port });
  }

  private constructor(
    options: UdpTransportOptions<M>,
    config: UdpTransportConfig,
    private readonly socket: dgram.Socket,
    private readonly bound: PeerAddress,
  ) {
    this.localId = options.localId;
    this.config = Object.freeze(config);
    this.validate = options.validate;
    this.keyring = options.keyring;
    this.log = (options.logger ?? SILENT_LOGGER)
      .child({ component: 'udp-transport', node: this.localId });
    this.refusalLog = new RateLimitedLog(this.log, () => performance.now(),
      DECRYPT_LOG_INTERVAL_MS, DECRYPT_LOG_KEYS_MAX);
    for (const [id, address] of options.peers ?? []) this.setPeerAddress(id, address);
    socket.on('message', (bytes, remote) => this.onDatagram(bytes, remote));
    socket.on('error', (error) => this.log.error({ err: error.message }, 'UDP socket error'));
  }

  /** The bound address (with the port the OS picked when 0 was asked). */
  get address(): PeerAddress {
    return this.bound;
  }

  metrics(): UdpTransportMetrics {
    return { ...this.counters };
  }

  peerAddress(id: NodeId): PeerAddress | undefined {
    return this.book.get(id);
  }

  /** Adds, changes or (with `undefined`) removes a peer's address. */
  setPeerAddress(id: NodeId, address: PeerAddress | undefined): void {
    assert(address === undefined || (isPeerPort(address.port) && address.host.length > 0),
      () => `setPeerAddress(${id}): not a peer address: ${JSON.stringify(address)}`);
    if (address === undefined) this.book.delete(id);
    else this.book.set(id, { host: address.host, port: address.port });
  }

  setHandler(handler: TransportHandler<M>): void {
    this.handler = handler;
  }

  /** Best effort; never throws; drops are counted. */
  sendDatagram(to: NodeId, message: M): void {
    if (this.closed) {
      this.counters.droppedClosed++;
      return;
    }
    const address = this.book.get(to);
    if (address === undefined) {
      this.counters.droppedUnknownPeer++;
      return;
    }
    const envelope = [WIRE_VERSION, this.config.clusterName, this.localId, message];
    const overhead = this.keyring === undefined ? 0 : SEALED_OVERHEAD_BYTES;
    const encoded = this.codec.encodePayload(envelope, this.config.datagramBytesMax - overhead);
    if (!encoded.ok) {
      if (encoded.error.kind === 'payload-too-large') this.counters.droppedTooLarge++;
      else this.counters.droppedEncodeFailed++;
      this.log.warn({ peer: to, kind: encoded.error.kind },
        `datagram dropped: ${encoded.error.message}`);
      return;
    }
    // msgpackr's output is a view of its reusable buffer; the send is asynchronous (sealing
    // writes a new buffer, so it copies too).
    const bytes = this.keyring === undefined
      ? Buffer.from(encoded.bytes) : this.keyring.seal(encoded.bytes, 'udp');
    try {
      this.socket.send(bytes, address.port, address.host, (error) => {
        if (error !== null && error !== undefined) this.onSendError(to, error);
      });
      this.counters.datagramsSent++;
      this.counters.bytesSent += bytes.length;
    } catch (error) {
      this.onSendError(to, error);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close();
  }

  private onSendError(to: NodeId, error: unknown): void {
    this.counters.sendErrors++;
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    this.log.debug({ peer: to, err: code ?? String(error) }, 'datagram send failed');
  }

  private onDatagram(bytes: Buffer, remote: dgram.RemoteInfo): void {
    if (this.closed) return;
    if (bytes.length > this.config.datagramBytesMax) {
      this.counters.receivedTooLarge++;
      this.log.debug({ remote: remote.address, bytes: bytes.length }, 'oversized datagram dropped');
      return;
    }
    const plain = this.open(bytes, remote);
    if (plain === undefined) return;
    const decoded = this.codec.decodePayload(plain);
    const envelope = decoded.ok ? parseEnvelope(decoded.value) : undefined;
    if (envelope === undefined) {
      this.counters.decodeErrors++;
      this.log.debug({ remote: `${remote.address}:${remote.port}` },
        'undecodable datagram dropped');
      return;
    }
    if (envelope.version !== WIRE_VERSION) {
      this.counters.droppedOtherVersion++;
      return;
    }
    if (envelope.cluster !== this.config.clusterName) {
      this.counters.droppedOtherCluster++;
      this.log.debug({ from: envelope.from, cluster: envelope.cluster },
        'datagram of another cluster');
      return;
    }
    const validation = validateSafely(this.validate, envelope.message);
    if (!validation.ok) {
      this.counters.invalidMessages++;
      this.log.warn({ from: envelope.from }, `invalid datagram dropped: ${validation.problem}`);
      return;
    }
    this.counters.datagramsReceived++;
    this.counters.bytesReceived += bytes.length;
    if (this.handler === undefined) this.counters.droppedNoHandler++;
    else this.handler.onMessage(envelope.from, validation.message);
  }

  /** The datagram's plain bytes: itself without a keyring; opened, or undefined and counted. */
  private open(bytes: Buffer, remote: dgram.RemoteInfo): Uint8Array | undefined {
    if (this.keyring === undefined) return bytes;
    const opened = this.keyring.open(bytes, 'udp');
    if (opened.ok) return opened.plain;
    this.counters[DECRYPT_COUNTER[opened.reason]]++;
    this.refusalLog.warn(`${opened.reason} ${remote.address}`,
      { remote: `${remote.address}:${remote.port}`, reason: opened.reason, bytes: bytes.length },
      `gossip datagram dropped: ${describeOpenFailure(opened.reason)}`);
    return undefined;
  }
}

/** Words for a datagram that did not open, for the operator who reads the log. */
export function describeOpenFailure(reason: OpenFailure): string {
  switch (reason) {
    case 'unencrypted':
      return 'not encrypted (is the sender running without --encrypt-key-file?)';
    case 'truncated':
      return 'too short to be a sealed message';
    case 'unknown-key':
      return 'sealed under a key this member does not hold (add it to --encrypt-key-file to '
        + 'rotate it in)';
    case 'auth-failed':
      return 'authentication tag did not verify (tampered, truncated, or a forged key id)';
  }
}

interface Envelope {
  readonly version: number;
  readonly cluster: string;
  readonly from: NodeId;
  readonly message: unknown;
}

function parseEnvelope(value: unknown): Envelope | undefined {
  if (!Array.isArray(value) || value.length !== 4) return undefined;
  const [version, cluster, from, message] = value as unknown[];
  if (typeof version !== 'number' || typeof cluster !== 'string' || typeof from !== 'string') {
    return undefined;
  }
  if (from.length === 0 || from.length > HANDSHAKE_TEXT_LENGTH_MAX) return undefined;
  return { version, cluster, from: from as NodeId, message };
}

function zeroMetrics(): UdpTransportMetrics {
  return {
    datagramsSent: 0, bytesSent: 0, datagramsReceived: 0, bytesReceived: 0, droppedUnknownPeer: 0,
    droppedTooLarge: 0, droppedEncodeFailed: 0, droppedClosed: 0, droppedNoHandler: 0,
    sendErrors: 0, receivedTooLarge: 0, decodeErrors: 0, droppedOtherCluster: 0,
    droppedOtherVersion: 0, invalidMessages: 0, droppedDecryptUnencrypted: 0,
    droppedDecryptTruncated: 0, droppedDecryptUnknownKey: 0, droppedDecryptAuthFailed: 0,
  };
}
