/**
 * The live cluster's tabs: Cluster (members and replication), Why leadership moved, Elections
 * and locks with Leases. The first two are functions of the ClusterState that fill their panel;
 * the third keeps its elements and updates them (RecipesView), as it holds up to 200 lease rows.
 */
import { clockTime, fill, h, ms } from './dom.js';
import { howTermStarted, termTimeline } from './leadership.js';
import type { RecipeRow } from '../cluster-view.js';
import { LeaseBars } from './lease-bars.js';
import type { ClusterState, MemberView } from './state.js';

export function renderCluster(panel: Element, state: ClusterState): void {
  const now = Date.now();
  const leader = state.leader();
  const views = [...state.members.values()].sort((a, b) => a.id.localeCompare(b.id, 'en',
    { numeric: true }));
  const leaderView = leader === undefined ? undefined : state.members.get(leader.id);
  const progress = new Map((leaderView?.sample?.progress ?? []).map((p) => [p.id as string, p]));
  fill(panel,
    h('p.summary', {}, leader === undefined ? 'No leader right now.'
      : ['Leader ', h('b', { 'data-testid': 'leader' }, leader.id), ` in term ${leader.term}`],
    ` · served by ${state.hello?.servedBy ?? '?'} · ${state.hello?.writes ?? ''}`),
    h('table.members', {},
      h('thead', {}, h('tr', {}, ...['member', 'role', 'term', 'commit', 'applied', 'match',
        'lag', 'lag ms', 'last contact', 'WAL sync p99', 'peer RTT'].map((t) => h('th', {}, t)))),
      h('tbody', {}, ...views.map((view) => memberRow(state, view, now, progress.get(view.id))))));
}

function memberRow(state: ClusterState, view: MemberView, now: number,
  progress: { matchIndex: number; lagEntries: number; lagMs: number;
    lastContactMsAgo: number } | undefined): HTMLElement {
  const s = view.sample;
  const down = state.isDown(view, now);
  const why = view.link !== undefined && !view.link.up
    ? `not answering since ${clockTime(view.link.atMs)} (${view.link.reason})`
    : 'no frame from it lately';
  const rtt = s === undefined ? '–' : Object.entries(s.peerRttMs)
    .map(([peer, value]) => `${peer} ${value.toFixed(1)}`).join(', ') || '–';
  return h(`tr.${down ? 'down' : (s?.role ?? 'unknown')}`, { 'data-member': view.id },
    h('td', {}, view.id),
    h('td.role', {}, down ? `DOWN: ${why}` : s?.role ?? '…'),
    h('td', {}, s?.term ?? '–'), h('td', {}, s?.commitIndex ?? '–'),
    h('td', {}, s?.appliedIndex ?? '–'),
    h('td', {}, progress?.matchIndex ?? (s?.role === 'leader' ? s.lastIndex : '–')),
    h('td', {}, progress?.lagEntries ?? '–'), h('td', {}, progress ? ms(progress.lagMs, 0) : '–'),
    h('td', {}, progress ? ms(progress.lastContactMsAgo, 0) : '–'),
    h('td', {}, ms(s?.walSyncMsP99 ?? null, 2)), h('td.small', {}, rtt));
}

export function renderLeadership(panel: Element, state: ClusterState): void {
  const rows = termTimeline(state.allEvents()).reverse();
  fill(panel,
    h('p.summary', {}, 'Every term with its leader, how it started and how it ended, merged ',
      'from each member\'s own Raft events (a ring of the last 256 per member).'),
    ...outageLines(state),
    h('table.terms', { 'data-testid': 'terms' },
      h('thead', {}, h('tr', {}, ...['term', 'started', 'leader', 'how it started',
        'how it ended'].map((t) => h('th', {}, t)))),
      h('tbody', {}, ...rows.map((row) => h('tr', { 'data-term': row.term },
        h('td', {}, row.term), h('td', {}, clockTime(row.startedAtMs)),
        h('td.leader', {}, row.leader ?? 'none'),
        h('td.how', {}, howTermStarted(row)),
        h('td', {}, row.ended === undefined ? (row.leader ? 'leads now' : '–')
          : `${clockTime(row.ended.atMs)}: ${row.ended.how}`))))));
}

/** Outages shown on the leadership tab, the latest first. */
const OUTAGES_SHOWN_MAX = 5;

/**
 * Each member the serving member lost its link to: still down (an alert), or back (kept, so
 * that a member restarted at once still shows among the reasons leadership moved).
 */
function outageLines(state: ClusterState): HTMLElement[] {
  return state.outages.slice(-OUTAGES_SHOWN_MAX).reverse().map((o) => o.upAtMs === undefined
    ? h('p.alert', { 'data-outage': o.member },
      `${o.member} stopped answering at ${clockTime(o.downAtMs)} (${o.reason}).`)
    : h('p.recovered', { 'data-outage': o.member },
      `${o.member} stopped answering at ${clockTime(o.downAtMs)} (${o.reason}); ` +
      `answering again since ${clockTime(o.upAtMs)}.`));
}

/**
 * Elections, locks and leases. The summary names the store's revision, which moves with every
 * put, so it is the one part rewritten on every redraw; the tables are rebuilt only when a new
 * recipes frame came, and the lease bars update in place (lease-bars.ts).
 */
export class RecipesView {
  private readonly summary = h('p.summary');
  private readonly tables = h('div');
  private readonly leases = new LeaseBars();
  private tablesFrom: readonly RecipeRow[] | undefined;

  constructor(panel: Element) {
    fill(panel, this.summary, this.tables, h('h3', {}, 'Leases'), this.leases.element);
  }

  render(state: ClusterState): void {
    const summary = `From this member's store at revision ${state.revision}.`;
    if (this.summary.textContent !== summary) this.summary.textContent = summary;
    if (state.recipes !== this.tablesFrom) {
      this.tablesFrom = state.recipes;
      fill(this.tables, ...recipeTables(state.recipes));
    }
    this.leases.render(state.leases);
  }
}

function recipeTables(recipes: readonly RecipeRow[]): HTMLElement[] {
  const elections = recipes.filter((r) => r.kind === 'election');
  const locks = recipes.filter((r) => r.kind === 'lock');
  const table = (title: string, rows: typeof elections, who: string): HTMLElement[] => [
    h('h3', {}, title),
    rows.length === 0 ? h('p.muted', {}, `no ${title.toLowerCase()} (no keys under ` +
      `conclave/${rows === elections ? 'election' : 'lock'}/)`) :
      h('table.recipes', {}, h('thead', {}, h('tr', {}, ...['name', who, 'fencing token',
        'term', 'lease', 'waiting'].map((t) => h('th', {}, t)))),
      h('tbody', {}, ...rows.map((r) => h('tr', { 'data-recipe': `${r.kind}/${r.name}` },
        h('td', {}, r.name),
        h('td.holder', {}, r.holder === null ? 'none' : `${candidate(r.holder)}${r.claimed
          ? '' : ' (claiming)'}`),
        h('td.token', {}, r.fencingToken ?? '–'), h('td', {}, r.term),
        h('td', {}, r.holder === null ? '–' : r.holder.leaseId.toString(16)),
        h('td', {}, r.waiting.map(candidate).join(', ') || '–'))))),
  ];
  return [...table('Elections', elections, 'leader'), ...table('Locks', locks, 'holder')];
}

/** A candidate as the page names it: its id, and the value it proclaims if any. */
function candidate(row: { id: string; value: string }): string {
  if (row.id === '') return row.value;
  return row.value === '' ? row.id : `${row.id} = ${row.value}`;
}
