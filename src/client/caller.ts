/**
 * The retry loop every request goes through. It sends one attempt at a time over the
 * transport port, each timed on the client's Timer (`requestTimeoutMs`); it goes straight to
 * the leader a member names (up to `redirectsMax` hops in a row), moves to another endpoint
 * with a jittered back-off after a retryable failure, and starts no attempt after the retry
 * deadline (so a call settles within retryDeadlineMs + requestTimeoutMs). Each attempt tells
 * the member how long it will wait (CallOptions.deadlineMs), so a member still waiting on the
 * log answers CONCLAVE_DEADLINE_EXCEEDED, with the outcome it knows, before the client gives up.
 *
 * Outcome rule: once any attempt of a call ended with an unknown outcome (it may have been
 * applied), a final failure of the call is `unknown` too, whatever later attempts said: only a
 * success (the server returns a retried write's saved result) settles it. An attempt that
 * never left (no connection was made: `sent: false`) is `failed`. Retrying a write is safe
 * because every attempt carries the same (clientId, sequence): the server applies it at most
 * once. The caller's `signal` ends the call at once: `failed` when nothing had left, `unknown`
 * otherwise (src/client/context.ts, CallAbortedError).
 */
import { randomInt } from '../core/random.js';
import type {
  ClientAnswer, ClientEndpoint, ClientRequest, LostAnswer,
} from '../ports/client-transport.js';
import { CoordError, type CoordErrorCode } from '../errors.js';
import { abortedCall, callSignal, pause, TimedSignal, type ClientContext } from './context.js';

export interface CallOptions {
  /** Writes and linearizable reads: the leader serves them (followers redirect). */
  readonly leaderOnly: boolean;
  /** Ends the call at once (see the module comment). */
  readonly signal?: AbortSignal | undefined;
}

/** Codes after which another attempt may succeed: the cluster is between leaders or busy. */
const RETRYABLE_CODES: ReadonlySet<CoordErrorCode> = new Set<CoordErrorCode>([
  'CONCLAVE_NOT_LEADER', 'CONCLAVE_NO_LEADER', 'CONCLAVE_NO_QUORUM', 'CONCLAVE_UNAVAILABLE',
  'CONCLAVE_TIMEOUT', 'CONCLAVE_DEADLINE_EXCEEDED', 'CONCLAVE_OVERLOADED',
  'CONCLAVE_LIMIT_EXCEEDED',
]);

/** One attempt's end as the loop judges it. */
interface Verdict {
  readonly error: CoordError;
  readonly retry: boolean;
  /** A member said it (rather than a connection failing). */
  readonly answered: boolean;
}

export class Caller {
  constructor(private readonly c: ClientContext) {}

  /** The answer's body; rejects with a CoordError carrying code and outcome. */
  async call(request: ClientRequest, options: CallOptions): Promise<unknown> {
    const { clock, router, config } = this.c;
    const signal = callSignal(this.c.closing, options.signal);
    const startMs = clock.monotonicMs();
    const deadlineMs = startMs + config.retryDeadlineMs;
    let unknown = false;
    // What a member said (no leader, timed out) explains more than a refused connection.
    let answered: CoordError | undefined;
    let hops = 0;
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw abortedCall(options.signal, unknown);
      const endpoint = router.next(options.leaderOnly);
      const { answer, timedOut } = await this.attempt(endpoint, request, signal);
      if (answer.kind === 'ok') {
        if (options.leaderOnly) router.noteLeader(answer.servedBy);
        return answer.body;
      }
      if (answer.kind === 'lost' && answer.aborted && !timedOut) {
        throw abortedCall(options.signal, unknown || answer.sent);
      }
      const verdict = judge(answer, timedOut, config.requestTimeoutMs);
      unknown ||= verdict.error.outcome === 'unknown';
      if (verdict.answered) answered = verdict.error;
      router.noteFailure(answer.servedBy);
      const leader = answer.kind === 'refused' ? answer.leader : undefined;
      if (leader !== undefined) router.noteLeader(leader);
      if (!verdict.retry) throw withOutcome(verdict.error, unknown, '');
      // A member named the leader: go there at once, a few hops in a row at most.
      if (leader !== undefined && leader !== answer.servedBy && hops < config.redirectsMax) {
        hops += 1;
        continue;
      }
      hops = 0;
      const pauseMs = this.backoffMs(attempt);
      const elapsedMs = clock.monotonicMs() - startMs;
      if (clock.monotonicMs() + pauseMs >= deadlineMs) {
        throw withOutcome(answered ?? verdict.error, unknown,
          ` (gave up after ${attempt + 1} attempts in ${Math.round(elapsedMs)} ms)`);
      }
      await pause(this.c.timer, pauseMs, signal);
    }
  }

  /**
   * One attempt with its full timeout: cutting the last one short would turn an answer on its
   * way into an unknown outcome. The deadline only stops new attempts.
   */
  private async attempt(endpoint: ClientEndpoint, request: ClientRequest, signal: AbortSignal):
    Promise<{ answer: ClientAnswer; timedOut: boolean }> {
    const timed = new TimedSignal(this.c.timer, this.c.config.requestTimeoutMs, [signal]);
    try {
      const answer = await this.c.transport.call(endpoint, request, { signal: timed.signal,
        deadlineMs: this.c.config.requestTimeoutMs });
      return { answer, timedOut: timed.timedOut };
    } finally {
      timed.done();
    }
  }

  /**
   * Full jitter over an exponential ceiling that grows once per round through the endpoints:
   * the first round tries each endpoint almost at once, later rounds wait longer.
   */
  private backoffMs(attempt: number): number {
    const { config, router } = this.c;
    const round = Math.floor(attempt / Math.max(1, router.endpoints.length));
    const ceilingMs = Math.min(config.backoffMsMax,
      config.backoffMsMin * 2 ** Math.min(round, 30));
    return randomInt(this.c.random, 0, Math.max(1, Math.floor(ceilingMs)) + 1);
  }
}

/** What an attempt that got no result means for the loop. */
export function judge(answer: Exclude<ClientAnswer, { kind: 'ok' }>, timedOut: boolean,
  timeoutMs: number): Verdict {
  if (answer.kind === 'refused') {
    return { error: answer.error, retry: RETRYABLE_CODES.has(answer.error.code),
      answered: true };
  }
  return { error: lostError(answer, timedOut, timeoutMs), retry: true, answered: false };
}

/** An attempt without an answer: timed out, or the connection failed. */
export function lostError(answer: LostAnswer, timedOut: boolean, timeoutMs: number):
  CoordError {
  const outcome = answer.sent ? 'unknown' : 'failed';
  if (timedOut) {
    return new CoordError('CONCLAVE_TIMEOUT', `no answer from ${answer.servedBy} within `
      + `${timeoutMs} ms${answer.sent ? '' : ' (no connection was made)'}`, { outcome });
  }
  return new CoordError('CONCLAVE_UNAVAILABLE', `cannot reach ${answer.servedBy}: `
    + answer.detail, { outcome, cause: answer.cause });
}

/** The last error, re-labelled with the call's outcome and the retry summary. */
function withOutcome(error: CoordError, unknown: boolean, suffix: string): CoordError {
  const outcome = unknown ? 'unknown' : error.outcome;
  if (outcome === error.outcome && suffix === '') return error;
  const note = unknown && error.outcome !== 'unknown'
    ? '; an earlier attempt may have been applied' : '';
  return new CoordError(error.code, `${error.message}${suffix}${note}`,
    { outcome, cause: error });
}
