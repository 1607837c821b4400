/**
 * Configuration of the TCP peer transport: limits on every queue and buffer, handshake and
 * reconnection timing. `validateTcpTransportConfig` lists every violated rule at once.
 */
import type { ConfigProblem } from '../core/config.js';
import { FRAME_BYTES_MAX_DEFAULT, FRAME_BYTES_MAX_LIMIT } from './frame-codec.js';
import { HANDSHAKE_FRAME_BYTES_MAX, HANDSHAKE_TEXT_LENGTH_MAX } from './tcp-handshake.js';

export interface TcpTransportConfig {
  /**
   * The cluster's name, sent in every handshake; a peer of another cluster is refused, so two
   * clusters whose address lists overlap by mistake never exchange messages.
   * Unit: text, 1..255 characters. Default: `conclave`.
   */
  readonly clusterName: string;
  /**
   * Largest frame payload sent or accepted. The length prefix of an incoming frame is checked
   * against it before any byte of the payload is kept; a bigger outgoing message is dropped
   * and counted. Must exceed the largest protocol message: Raft's `bytesPerMessageMax` plus
   * overhead, and the largest entry the server accepts plus overhead.
   * Unit: bytes. Default: 1.5 MiB (etcd's default request limit). Trade-off: higher lets
   * bigger batches through, and lets a misbehaving peer make us hold more per connection.
   */
  readonly frameBytesMax: number;
  /**
   * Encoded bytes waiting for one peer's connection (not yet handed to the socket). When a
   * message would exceed it, the message is dropped and counted: the protocols retry.
   * Unit: bytes. Default: 8 MiB (several full frames; a 1 Gbit/s link drains it in ~70 ms).
   * Must be at least `frameBytesMax`, so that any sendable message can be queued.
   */
  readonly queueBytesMax: number;
  /**
   * Messages waiting for one peer's connection. Unit: messages. Default: 4096 (Raft's
   * `inflightMessagesMax` of 256 appends plus heartbeats and votes, with room to spare).
   */
  readonly queueMessagesMax: number;
  /**
   * First reconnect delay after a failed connect or a broken connection; doubles with every
   * failed attempt up to `reconnectDelayMsMax`. Each delay is drawn uniformly from
   * [delay / 2, delay) (jitter), so that peers restarting together do not reconnect in step.
   * Unit: ms. Default: 50 (a restarted peer is reached again well within an election timeout).
   */
  readonly reconnectDelayMsMin: number;
  /**
   * Cap of the reconnect delay. Unit: ms. Default: 2000 (at most ~2 s from a peer's return to a
   * working link; a dead peer costs one connect attempt per 1-2 s).
   */
  readonly reconnectDelayMsMax: number;
  /**
   * Longest time from opening a connection to a completed handshake, on both sides: the
   * connecting side gives up and backs off; the accepting side closes a connection that has not
   * sent a valid hello (slow or idle unidentified clients cost nothing for long).
   * Unit: ms. Default: 3000 (loopback and LAN handshakes take ~1 ms; leaves room for a loaded
   * peer and SYN retransmits of 1 s).
   */
  readonly handshakeTimeoutMs: number;
  /**
   * An outbound connection with no message sent for this long is closed with a goodbye frame
   * (which the peer does not report as a reset); the next send reconnects. 0 keeps connections
   * forever. Unit: ms. Default: 60000 (Raft links carry heartbeats and never idle; gossip
   * push-pull links to many members are released instead of holding a descriptor each).
   */
  readonly idleCloseMs: number;
  /**
   * Inbound connections held at once; beyond it new ones are closed at accept and counted.
   * Unit: connections. Default: 1024 (one per peer and a margin; bounds descriptors and
   * per-connection buffers that unidentified clients can make us hold).
   */
  readonly inboundConnectionsMax: number;
  /**
   * When true, a peer unknown to the address book that says in its hello where it listens is
   * added to the book (never replacing a known address). Gossip turns it on so that it can
   * answer a joiner at once; Raft keeps its configured addresses. Default: false.
   */
  readonly learnPeerAddresses: boolean;
}

export const TCP_TRANSPORT_DEFAULTS: TcpTransportConfig = Object.freeze({
  clusterName: 'conclave',
  frameBytesMax: FRAME_BYTES_MAX_DEFAULT,
  queueBytesMax: 8 * 1024 * 1024,
  queueMessagesMax: 4096,
  reconnectDelayMsMin: 50,
  reconnectDelayMsMax: 2000,
  handshakeTimeoutMs: 3000,
  idleCloseMs: 60_000,
  inboundConnectionsMax: 1024,
  learnPeerAddresses: false,
});

/** Every rule `config` breaks; empty when it is valid. */
export function validateTcpTransportConfig(config: TcpTransportConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const c = config;
  if (typeof c.clusterName !== 'string' || c.clusterName.length === 0 ||
      c.clusterName.length > HANDSHAKE_TEXT_LENGTH_MAX) {
    problems.push({ field: 'clusterName', value: c.clusterName,
      rule: `must be text of 1..${HANDSHAKE_TEXT_LENGTH_MAX} characters` });
  }
  integer(problems, 'frameBytesMax', c.frameBytesMax, HANDSHAKE_FRAME_BYTES_MAX,
    FRAME_BYTES_MAX_LIMIT);
  integer(problems, 'queueBytesMax', c.queueBytesMax, 1, Number.MAX_SAFE_INTEGER);
  integer(problems, 'queueMessagesMax', c.queueMessagesMax, 1, Number.MAX_SAFE_INTEGER);
  integer(problems, 'reconnectDelayMsMin', c.reconnectDelayMsMin, 1, 3_600_000);
  integer(problems, 'reconnectDelayMsMax', c.reconnectDelayMsMax, 1, 3_600_000);
  integer(problems, 'handshakeTimeoutMs', c.handshakeTimeoutMs, 1, 3_600_000);
  integer(problems, 'idleCloseMs', c.idleCloseMs, 0, 86_400_000);
  integer(problems, 'inboundConnectionsMax', c.inboundConnectionsMax, 1, 1_000_000);
  if (typeof c.learnPeerAddresses !== 'boolean') {
    problems.push({ field: 'learnPeerAddresses', value: c.learnPeerAddresses,
      rule: 'must be a boolean' });
  }
  if (c.queueBytesMax < c.frameBytesMax + 4) {
    problems.push({ field: 'queueBytesMax,frameBytesMax',
      value: { queueBytesMax: c.queueBytesMax, frameBytesMax: c.frameBytesMax },
      rule: 'queueBytesMax must be at least frameBytesMax + 4 (one full frame must fit)' });
  }
  if (c.reconnectDelayMsMax < c.reconnectDelayMsMin) {
    problems.push({ field: 'reconnectDelayMsMin,reconnectDelayMsMax',
      value: { min: c.reconnectDelayMsMin, max: c.reconnectDelayMsMax },
      rule: 'reconnectDelayMsMax must be at least reconnectDelayMsMin' });
  }
  return problems;
}

export function integer(
  problems: ConfigProblem[], field: string, value: number, min: number, max: number,
): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    problems.push({ field, value, rule: `must be an integer in [${min}, ${max}]` });
  }
}
