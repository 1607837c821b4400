/**
 * "Why leadership moved": the members' own Raft events, merged into one timeline of terms.
 * Pure (no DOM), so tests run it on recorded events. For each term: who campaigned and why
 * (election timeout, pre-vote after a link reset, leadership transfer), who won, and how the
 * leadership ended (check-quorum step-down, a higher term, a transfer, or silence: the leader
 * stopped answering and a follower's election timeout started the next term).
 */
import type { StampedRaftEvent } from '../../server/event-feed.js';

export interface TermRow {
  readonly term: number;
  /** When the first member entered the term. Unit: wall ms. */
  startedAtMs: number;
  /** Members that campaigned in this term, with why. */
  readonly candidates: { member: string; why: string; atMs: number }[];
  leader: string | undefined;
  electedAtMs: number | undefined;
  /** How this term's leadership ended; undefined while it lasts (or nobody led). */
  ended: { how: string; atMs: number } | undefined;
}

const CAMPAIGN_WHY: Readonly<Record<string, string>> = {
  'election-timeout': 'election timeout',
  'leader-link-reset': 'pre-vote after a link reset',
  'leadership-transfer': 'leadership transfer (timeout-now)',
};

const STEP_DOWN_HOW: Readonly<Record<string, string>> = {
  'check-quorum-lost': 'check-quorum step-down (no word from a majority)',
  'higher-term-seen': 'deposed: a higher term was seen',
  'removed-from-cluster': 'removed from the cluster',
  'leadership-transfer': 'handed over (leadership transfer)',
};

/** Every term the events mention, oldest first. */
export function termTimeline(events: readonly StampedRaftEvent[]): TermRow[] {
  const sorted = [...events].sort((a, b) => a.atMs - b.atMs);
  const terms = new Map<number, TermRow>();
  const row = (term: number, atMs: number): TermRow => {
    let found = terms.get(term);
    if (found === undefined) {
      found = { term, startedAtMs: atMs, candidates: [], leader: undefined,
        electedAtMs: undefined, ended: undefined };
      terms.set(term, found);
    }
    found.startedAtMs = Math.min(found.startedAtMs, atMs);
    return found;
  };
  /** Why each member last became a pre-candidate (the pre-vote's cause). */
  const preVoteWhy = new Map<string, string>();
  for (const { member, atMs, event } of sorted) {
    if (event.kind === 'term-changed') row(event.to, atMs);
    if (event.kind === 'leadership-transfer' && event.stage === 'timeout-now-sent') {
      const current = row(event.term, atMs);
      current.ended ??= { how: `handed over to ${event.target} (leadership transfer)`, atMs };
    }
    if (event.kind !== 'role-changed') continue;
    if (event.to === 'pre-candidate') preVoteWhy.set(member, event.reason);
    if (event.to === 'candidate') {
      const cause = event.reason === 'pre-vote-won'
        ? preVoteWhy.get(member) ?? 'election-timeout' : event.reason;
      row(event.term, atMs).candidates.push({ member, atMs,
        why: CAMPAIGN_WHY[cause] ?? cause });
    }
    if (event.to === 'leader') {
      const won = row(event.term, atMs);
      won.leader = member;
      won.electedAtMs = atMs;
    }
    if (event.from === 'leader') {
      const lost = row(event.term, atMs);
      if (lost.ended === undefined || event.reason !== 'higher-term-seen') {
        lost.ended ??= { how: STEP_DOWN_HOW[event.reason] ?? event.reason, atMs };
      }
    }
  }
  const rows = [...terms.values()].sort((a, b) => a.term - b.term);
  // A leader that never said it stepped down went silent (crash, pause, partition): the next
  // term's campaign tells when the others gave up on it.
  rows.forEach((current, i) => {
    const next = rows[i + 1];
    if (current.leader === undefined || current.ended !== undefined || next === undefined) return;
    const first = next.candidates[0];
    current.ended = { atMs: first?.atMs ?? next.startedAtMs,
      how: `${current.leader} went silent: ${first?.member ?? 'a follower'} ` +
        `campaigned for term ${next.term} (${first?.why ?? 'election timeout'})` };
  });
  return rows;
}

/** One line saying why term `row` started. */
export function howTermStarted(row: TermRow): string {
  if (row.candidates.length === 0) return 'joined (learned from a message)';
  const first = row.candidates[0]!;
  const others = row.candidates.length > 1
    ? `; ${row.candidates.length} candidates (split vote)` : '';
  return `${first.member}: ${first.why}${others}`;
}
