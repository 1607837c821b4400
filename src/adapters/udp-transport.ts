/**
 * Best-effort datagrams over UDP: SWIM's probes, acks and gossip. Each datagram is one
 * MessagePack array `[version, clusterName, senderId, message]` (UDP has no handshake, so every
 * datagram names its sender and cluster). Delivery is the port's datagram contract: a datagram
 * may be lost, duplicated, delayed or reordered; nothing is retried here.
 *
 * Untrusted input: datagrams longer than `datagramBytesMax` are dropped before decoding; the
 * envelope is checked, then the caller's total validator; anything wrong is dropped and
 * counted, never thrown. The sender id is claimed, not proven (no authentication yet).
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
import { validateSafely, type MessageValidator } from './message-validators.js';
import {
  LOOPBACK_HOST, formatPeerAddress, isPeerPort, type PeerAddress,
} from './peer-address.js';
import { HANDSHAKE_TEXT_LENGTH_MAX, WIRE_VERSION } from './tcp-handshake.js';
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
}

export class UdpTransport<M> {
  readonly localId: NodeId;
  readonly config: UdpTransportConfig;
  private readonly codec = new MessageCodec();
  private readonly book = new Map<NodeId, PeerAddress>();
  private readonly counters: UdpTransportMetrics = zeroMetrics();
  private readonly log: Logger;
  private readonly validate: MessageValidator<M>;
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
    this.log = (options.logger ?? SILENT_LOGGER)
      .child({ component: 'udp-transport', node: this.localId });
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
    const encoded = this.codec.encodePayload(envelope, this.config.datagramBytesMax);
    if (!encoded.ok) {
      if (encoded.error.kind === 'payload-too-large') this.counters.droppedTooLarge++;
      else this.counters.droppedEncodeFailed++;
      this.log.warn({ peer: to, kind: encoded.error.kind },
        `datagram dropped: ${encoded.error.message}`);
      return;
    }
    // msgpackr's output is a view of its reusable buffer; the send is asynchronous.
    const bytes = Buffer.from(encoded.bytes);
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
    const decoded = this.codec.decodePayload(bytes);
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
    droppedOtherVersion: 0, invalidMessages: 0,
  };
}
