/**
 * Two answers the HTTP API and the lease stream give without the log's help, in one place so
 * every path says the same: what a member that knows no leader answers (CONCLAVE_NO_LEADER
 * during an election, CONCLAVE_NO_QUORUM when cut off from a majority:
 * src/runtime/core/leaderless.ts decides), and what a request still waiting for the log gets
 * when its time is up (the client's `conclave-timeout` deadline, or the server's own request
 * timeout: src/adapters/request-deadline.ts).
 */
import type { IncomingMessage } from 'node:http';
import { parseRequestTimeout, REQUEST_TIMEOUT_HEADER } from '../adapters/request-deadline.js';
import { CoordError, type CoordOutcome } from '../errors.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import { leaderlessJudge, type LeaderlessAnswer } from '../runtime/core/leaderless.js';

export type { LeaderlessAnswer };

/** `electionTimeoutMsMax`: the members' longest election timeout. Unit: ms. */
export function leaderlessAnswer(core: Pick<ConsistentCore, 'id' | 'status'>,
  electionTimeoutMsMax: number, nowMs: () => number = () => performance.now()):
  LeaderlessAnswer {
  return leaderlessJudge(core, electionTimeoutMsMax, nowMs);
}

/** When a request waiting for the log is answered, and with what. */
export interface RequestDeadline {
  readonly ms: number;
  readonly error: CoordError;
}

/** What waits for the log: a write (may still apply), a read, a lease call (confirmation). */
export type WaitingKind = 'write' | 'read' | 'lease';

const WAITING: Readonly<Record<WaitingKind, { what: string; then: string;
  outcome: CoordOutcome }>> = {
  write: { what: 'not committed', outcome: 'unknown',
    then: '; it may still apply: retry with the same clientId and sequence, or read to find out' },
  read: { what: 'not read at a committed index', outcome: 'failed',
    then: '; nothing was applied: ask again' },
  lease: { what: 'no leadership confirmation', outcome: 'failed',
    then: '; nothing to count on: ask again' },
};

/**
 * The deadline of `req` (the client's, if shorter than `serverTimeoutMs`) and the error sent
 * when it passes: CONCLAVE_DEADLINE_EXCEEDED for the client's, CONCLAVE_TIMEOUT for the
 * server's; outcome `unknown` for a write (it may still apply), `failed` otherwise. A
 * malformed header throws CONCLAVE_REQUEST_INVALID.
 */
export function requestDeadline(req: IncomingMessage, serverTimeoutMs: number,
  kind: WaitingKind): RequestDeadline {
  return callDeadline(parseRequestTimeout(req.headers[REQUEST_TIMEOUT_HEADER]), serverTimeoutMs,
    kind);
}

/**
 * As `requestDeadline`, for a call of any door: `clientMs` is the deadline the client sent
 * (HTTP's header, or a stream frame's), undefined when none.
 */
export function callDeadline(clientMs: number | undefined, serverTimeoutMs: number,
  kind: WaitingKind): RequestDeadline {
  const budget = clientMs !== undefined && clientMs < serverTimeoutMs
    ? { ms: clientMs, byClient: true } : { ms: serverTimeoutMs, byClient: false };
  const { what, then, outcome } = WAITING[kind];
  if (budget.byClient) {
    return { ms: budget.ms, error: new CoordError('CONCLAVE_DEADLINE_EXCEEDED', `${what} within `
      + `the client's deadline (${REQUEST_TIMEOUT_HEADER}: ${budget.ms} ms)${then}`, { outcome }) };
  }
  const cause = kind === 'write' ? ' (the cluster may have lost its leader or quorum)' : '';
  return { ms: budget.ms, error: new CoordError('CONCLAVE_TIMEOUT', `${what} within `
    + `${budget.ms} ms${cause}${then}`, { outcome }) };
}
