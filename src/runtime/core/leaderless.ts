/**
 * What a member that knows no leader answers, decided from what it knows: "no leader yet, an
 * election is under way" (CONCLAVE_NO_LEADER: retry in a moment) when it heard from a leader
 * recently, or since it started, within `electionWindowMs`; "this member cannot reach a
 * majority" (CONCLAVE_NO_QUORUM: it may be cut off, try another member) when it has not for
 * longer. An ordinary election ends within about one election timeout after the old leader's
 * last message plus a round or two of votes, so a member past the window has seen elections
 * fail (its pre-votes unanswered by a majority) or a leader step down on check-quorum. Shared by
 * the HTTP API, the lease stream and the simulator's member protocol
 * (src/sim/scenarios/lease/core-protocol.ts), through `leaderlessJudge`. Pure: the caller
 * passes the ages, or the member's monotonic clock.
 */
import type { RaftStatus } from '../../core/raft/index.js';
import { CoordError } from '../../errors.js';

/**
 * The window, in election timeouts: one to notice the leader is gone, up to two more for
 * split or refused votes. Why 3: with the LAN defaults (timeouts of 1–2 s) an ordinary
 * election ends well within 6 s; a member without a leader for longer is not in one.
 */
export const ELECTION_WINDOW_TIMEOUTS = 3;

export interface LeaderlessView {
  readonly memberId: string;
  readonly term: number;
  /** Since this member last heard from a leader (RaftStatus.leaderContactAgeMs). Unit: ms. */
  readonly leaderContactAgeMs: number;
  /** Since this member started. Unit: ms. */
  readonly upMs: number;
  /** ELECTION_WINDOW_TIMEOUTS × the longest election timeout. Unit: ms. */
  readonly electionWindowMs: number;
}

/** The error a leaderless member answers with (outcome `failed`: nothing was done). */
export function leaderlessError(view: LeaderlessView): CoordError {
  const ageMs = Math.min(view.leaderContactAgeMs, view.upMs);
  const since = view.leaderContactAgeMs <= view.upMs
    ? `last heard from a leader ${Math.round(ageMs)} ms ago`
    : `started ${Math.round(ageMs)} ms ago and has heard from no leader yet`;
  if (ageMs <= view.electionWindowMs) {
    return new CoordError('CONCLAVE_NO_LEADER', `${view.memberId} knows no leader yet (term `
      + `${view.term}; ${since}): an election is under way; retry in a moment`);
  }
  return new CoordError('CONCLAVE_NO_QUORUM', `${view.memberId} knows no leader (term `
    + `${view.term}; ${since}, more than ${Math.round(view.electionWindowMs)} ms): it cannot `
    + 'reach a majority; try another member');
}

/** Answers "no leader" for one member, judged at the moment of the call. */
export type LeaderlessAnswer = () => CoordError;

/**
 * The judge of one member's life (make a new one when the member restarts: its uptime counts
 * from here). `electionTimeoutMsMax`: the members' longest election timeout; `nowMs`: the
 * member's own monotonic clock. Unit: ms.
 */
export function leaderlessJudge(core: { readonly id: string; status(): Pick<RaftStatus,
  'term' | 'leaderContactAgeMs'> }, electionTimeoutMsMax: number, nowMs: () => number):
  LeaderlessAnswer {
  const startedAtMs = nowMs();
  return () => {
    const status = core.status();
    return leaderlessError({ memberId: core.id, term: status.term,
      leaderContactAgeMs: status.leaderContactAgeMs, upMs: nowMs() - startedAtMs,
      electionWindowMs: ELECTION_WINDOW_TIMEOUTS * electionTimeoutMsMax });
  };
}
