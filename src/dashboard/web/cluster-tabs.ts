/**
 * The live cluster's tabs: Cluster (members and replication), Why leadership moved, Elections
 * and locks with Leases. Each is a function of the ClusterState that fills its panel.
 */
import { clockTime, fill, h, ms } from './dom.js';
import { howTermStarted, termTimeline } from './leadership.js';
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

/** Leases shown as bars (soonest to expire first); the count says how many there are. */
const LEASE_BARS_MAX = 200;

export function renderRecipes(panel: Element, state: ClusterState): void {
  const elections = state.recipes.filter((r) => r.kind === 'election');
  const locks = state.recipes.filter((r) => r.kind === 'lock');
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
  fill(panel, h('p.summary', {}, `From this member's store at revision ${state.revision}.`),
    ...table('Elections', elections, 'leader'), ...table('Locks', locks, 'holder'),
    h('h3', {}, 'Leases'), leaseBars(state));
}

/** A candidate as the page names it: its id, and the value it proclaims if any. */
function candidate(row: { id: string; value: string }): string {
  if (row.id === '') return row.value;
  return row.value === '' ? row.id : `${row.id} = ${row.value}`;
}

function leaseBars(state: ClusterState): HTMLElement {
  const leases = state.leases;
  if (leases === undefined) {
    return h('p.muted', {}, 'no lease list yet (the leader sends one a second)');
  }
  // By the leader's clock, then what elapsed here since its list came.
  const nowLeaderMs = leases.atMs + (Date.now() - leases.receivedAtMs);
  const rows = [...leases.rows.values()]
    .map((lease) => ({ ...lease, remainingMs: lease.expiresAtMs === null ? 0
      : Math.max(0, lease.expiresAtMs - nowLeaderMs) }))
    .sort((a, b) => a.remainingMs - b.remainingMs).slice(0, LEASE_BARS_MAX);
  return h('div.leases', {},
    h('p.muted', {}, `${leases.total} leases` + (leases.total > rows.length
      ? `, the ${rows.length} closest to expiring shown` : '')),
    ...rows.map((lease) => {
      const remainingMs = lease.remainingMs;
      const fraction = lease.ttlMs > 0 ? remainingMs / lease.ttlMs : 0;
      const bar = h('span.bar', { style: `width:${(100 * fraction).toFixed(1)}%;` +
        `transition:width ${(remainingMs / 1000).toFixed(2)}s linear` });
      requestAnimationFrame(() => (bar.style.width = '0%'));
      return h('div.lease', { 'data-lease': lease.id },
        h('span.id', {}, lease.id.toString(16)),
        h('span.track', {}, bar),
        h('span.ttl', {},
          `${(remainingMs / 1000).toFixed(1)} / ${(lease.ttlMs / 1000).toFixed(0)} s`),
        h('span.keys', {}, lease.keyCount === 0 ? 'no keys' : `${lease.keys.join(', ')}` +
          (lease.keyCount > lease.keys.length ? ` +${lease.keyCount - lease.keys.length}` : '')));
    }));
}
