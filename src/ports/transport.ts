/**
 * Moving messages between nodes. Messages are typed values; the real adapters encode them
 * (msgpackr frames over TCP, datagrams over UDP) and the simulator hands them over in memory.
 *
 * Delivery guarantees, which every implementation and the compliance suite hold to:
 * - `send` (stream): messages from one sender to one receiver arrive at most once each and in
 *   the order sent, as long as the underlying connection lives. When it breaks, messages in
 *   flight may be lost (never reordered or duplicated within a connection), and the receiver
 *   side reports `onPeerReset`. Delivery is not acknowledged: protocols retry themselves.
 * - `sendDatagram`: best effort. A datagram may be lost, duplicated, delayed or reordered.
 * - Neither call blocks or throws for an unreachable peer: the message is dropped (and counted).
 * - The simulator may be nastier than this contract (it can duplicate and reorder stream
 *   messages too) to prove that protocols do not rely on more than they should.
 */
import type { NodeId } from '../core/ids.js';

export interface TransportHandler<M> {
  /** A message arrived from `from`. Called on the node's single event loop, never re-entrantly. */
  onMessage(from: NodeId, message: M): void;
  /**
   * The stream to `peer` broke (connection reset or refused, or closed without a goodbye: what
   * the kernel does to the sockets of a process that died). Reported once per outage, after the
   * messages that arrived on the broken stream. A hint only: it may speed up failure detection,
   * it never replaces the protocol's own rules (terms, timeouts). Raft uses it to start a
   * pre-vote early when the leader's link broke (`RaftConfig.preVoteOnLeaderReset`).
   */
  onPeerReset?(peer: NodeId): void;
}

export interface Transport<M> {
  /** This node's id, as peers address it. */
  readonly localId: NodeId;
  /** Reliable, ordered per connection; see the module comment. */
  send(to: NodeId, message: M): void;
  /** Best effort; see the module comment. */
  sendDatagram(to: NodeId, message: M): void;
  /** Installs the handler for incoming messages; replaces any previous one. */
  setHandler(handler: TransportHandler<M>): void;
  /** Stops sending and receiving; pending outgoing messages are dropped. */
  close(): void;
}
