/**
 * Peer round trips for /metrics, measured where they happen: a transport wrapper that notes
 * when a heartbeat leaves for a peer and observes the time until that peer's heartbeat
 * response arrives. Raft itself never sees a clock here; only the server's metrics do.
 */
import type { NodeId } from '../core/ids.js';
import type { RaftMessage } from '../core/raft/index.js';
import type { Clock } from '../ports/clock.js';
import type { Transport, TransportHandler } from '../ports/transport.js';

export function measurePeerRoundTrips(inner: Transport<RaftMessage>, clock: Clock,
  observe: (peer: NodeId, roundTripMs: number) => void): Transport<RaftMessage> {
  /** Send time of the oldest unanswered heartbeat per peer. Unit: ms (monotonic). */
  const sentAtMs = new Map<NodeId, number>();
  return {
    localId: inner.localId,
    send: (to, message) => {
      if (message.kind === 'heartbeat' && !sentAtMs.has(to)) sentAtMs.set(to, clock.monotonicMs());
      inner.send(to, message);
    },
    sendDatagram: (to, message) => inner.sendDatagram(to, message),
    setHandler: (handler: TransportHandler<RaftMessage>) => inner.setHandler({
      onMessage: (from, message) => {
        if (message.kind === 'heartbeat-response') {
          const at = sentAtMs.get(from);
          if (at !== undefined) {
            sentAtMs.delete(from);
            observe(from, clock.monotonicMs() - at);
          }
        }
        handler.onMessage(from, message);
      },
      ...(handler.onPeerReset === undefined ? {} : { onPeerReset: (peer: NodeId) => {
        sentAtMs.delete(peer);
        handler.onPeerReset?.(peer);
      } }),
    }),
    close: () => inner.close(),
  };
}
