/**
 * The rejected messages of one Ready, as `message-rejected` events: one per message up to
 * REJECTION_EVENTS_PER_READY_MAX, then one summed event per reason, so a flood of forged
 * frames costs a bounded number of events between two Readies.
 */
import type { NodeId } from '../ids.js';
import type { RaftMessage } from './messages.js';
import type { RaftEvent, RejectionReason } from './ready.js';

/**
 * Individual rejection events per Ready; later rejections are summed per reason.
 * Unit: events. 64: enough to see who sent what in an ordinary burst, small next to a Ready.
 */
export const REJECTION_EVENTS_PER_READY_MAX = 64;

type RejectionEvent = Extract<RaftEvent, { kind: 'message-rejected' }>;

export class Rejections {
  private events: RejectionEvent[] = [];
  private readonly sums = new Map<RejectionReason, RejectionEvent>();

  /** Whether some rejection waits for the next Ready. */
  get pending(): boolean {
    return this.events.length > 0;
  }

  add(from: NodeId, message: RaftMessage, reason: RejectionReason): void {
    if (this.events.length < REJECTION_EVENTS_PER_READY_MAX) {
      this.events.push({ kind: 'message-rejected', reason, from, messageKind: message.kind,
        term: message.term, count: 1 });
      return;
    }
    const sum = this.sums.get(reason);
    if (sum === undefined) {
      this.sums.set(reason, { kind: 'message-rejected', reason, from,
        messageKind: message.kind, term: message.term, count: 1 });
    } else {
      this.sums.set(reason, { ...sum, count: sum.count + 1 });
    }
  }

  /** The events since the last call, the summed ones last; empties this. */
  take(): RejectionEvent[] {
    const out = this.events;
    for (const sum of this.sums.values()) out.push(sum);
    this.events = [];
    this.sums.clear();
    return out;
  }
}
