/**
 * The membership tab's feed (`conclave gossip --ui ADDR`): this gossip member's view every
 * half second (members with state, age, incarnation, generation; the emergent leader), and
 * each membership event as it happens, with a ring of the last `EVENTS_MAX` for new pages.
 */
import type { WebSocket } from 'ws';
import type { MembershipEvent } from '../core/swim/index.js';
import type { Membership } from '../membership/index.js';

const EVENTS_MAX = 256;
const VIEW_INTERVAL_MS = 500;
/** Bytes queued to a page before it is cut off (it reconnects). */
const BUFFERED_BYTES_MAX = 4 * 1024 * 1024;

export class GossipFeed {
  private readonly events: { atMs: number; kind: string; text: string }[] = [];
  private readonly pages = new Set<WebSocket>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly membership: Membership,
    private readonly describe: (event: MembershipEvent) => string) {
    membership.on('event', (event) => this.onEvent(event));
    this.timer = setInterval(() => this.sendViews(), VIEW_INTERVAL_MS);
    this.timer.unref();
  }

  addPage(ws: WebSocket): void {
    this.pages.add(ws);
    ws.send(JSON.stringify({ type: 'hello', mode: 'gossip', self: this.membership.id }));
    ws.send(JSON.stringify({ type: 'gossip-event', events: this.events }));
    ws.send(JSON.stringify(this.view()));
    ws.on('close', () => this.pages.delete(ws));
    ws.on('error', () => ws.terminate());
  }

  close(): void {
    clearInterval(this.timer);
  }

  private onEvent(event: MembershipEvent): void {
    const entry = { atMs: Date.now(), kind: event.kind, text: this.describe(event) };
    this.events.push(entry);
    if (this.events.length > EVENTS_MAX) this.events.shift();
    this.broadcast({ type: 'gossip-event', ...entry });
  }

  private view(): Record<string, unknown> {
    const now = performance.now();
    return { type: 'gossip', atMs: Date.now(), leader: this.membership.leader() ?? null,
      members: this.membership.members({ includeGone: true }).map((m) => ({ ...m,
        stateChangedMs: Math.max(0, now - m.stateChangedMs) })) };
  }

  private sendViews(): void {
    if (this.pages.size > 0) this.broadcast(this.view());
  }

  private broadcast(frame: Record<string, unknown>): void {
    const text = JSON.stringify(frame);
    for (const ws of this.pages) {
      if (ws.bufferedAmount > BUFFERED_BYTES_MAX) ws.close(1013, 'too slow');
      else ws.send(text);
    }
  }
}
