/**
 * Membership (`conclave gossip --ui ADDR`): this gossip member's view — every member with its
 * state (alive, suspect, dead, left), age, incarnation; the emergent leader and its generation;
 * and a timeline of suspicions, refutations, deaths and leader changes as this member saw them.
 */
import { clockTime, fill, h } from './dom.js';

interface GossipMember {
  readonly id: string; readonly address: string; readonly state: string;
  readonly incarnation: number; readonly age: number; readonly generation?: number;
  readonly stateChangedMs: number;
}

interface GossipEvent { readonly atMs: number; readonly text: string; readonly kind: string }

const EVENTS_MAX = 500;

export class GossipTab {
  private members: readonly GossipMember[] = [];
  private leader: { id: string; generation: number } | undefined;
  private readonly events: GossipEvent[] = [];
  private version = 0;
  private drawn = -1;

  constructor(private readonly panel: HTMLElement, private readonly self: string) {}

  apply(frame: Record<string, unknown>): void {
    this.version++;
    if (frame['type'] === 'gossip') {
      this.members = frame['members'] as GossipMember[];
      this.leader = (frame['leader'] ?? undefined) as typeof this.leader;
      return;
    }
    for (const e of (frame['events'] ?? [frame]) as GossipEvent[]) {
      this.events.push({ atMs: e.atMs, text: e.text, kind: e.kind });
    }
    if (this.events.length > EVENTS_MAX) this.events.splice(0, this.events.length - EVENTS_MAX);
  }

  render(): void {
    if (this.drawn === this.version) return;
    this.drawn = this.version;
    const rows = [...this.members].sort((a, b) => a.age - b.age);
    fill(this.panel,
      h('p.summary', {}, `Seen from ${this.self}. Leader: `,
        h('b', { 'data-testid': 'gossip-leader' }, this.leader === undefined ? 'none'
          : `${this.leader.id} (generation ${this.leader.generation})`)),
      h('table.members', {}, h('thead', {}, h('tr', {}, ...['member', 'state', 'age',
        'incarnation', 'generation', 'address', 'since'].map((t) => h('th', {}, t)))),
      h('tbody', {}, ...rows.map((m) => h(`tr.${m.state}`, { 'data-member': m.id },
        h('td', {}, m.id + (m.id === this.self ? ' (self)' : '')), h('td.role', {}, m.state),
        h('td', {}, m.age), h('td', {}, m.incarnation), h('td', {}, m.generation ?? '–'),
        h('td', {}, m.address), h('td', {}, `${Math.round(m.stateChangedMs / 1000)} s`))))),
      h('h3', {}, 'Suspicions, refutations and leader changes'),
      h('div.timeline', {}, ...[...this.events].reverse().map((e) =>
        h(`div.event.${e.kind}`, {}, `${clockTime(e.atMs)} ${e.text}`))));
  }
}
