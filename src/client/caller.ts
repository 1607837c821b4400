/**
 * The retry loop every request goes through. It sends one attempt at a time, moves to another
 * endpoint with a jittered back-off after a retryable failure, and starts no attempt after the
 * retry deadline (so a call settles within retryDeadlineMs + requestTimeoutMs).
 *
 * Outcome rule: once any attempt of a call ended with an unknown outcome (it may have been
 * applied), a final failure of the call is `unknown` too, whatever later attempts said: only a
 * success (the server returns a retried write's saved result) settles it. Retrying a write is
 * safe because every attempt carries the same (clientId, sequence): the server applies it at
 * most once.
 */
import type { Clock } from '../ports/clock.js';
import { randomInt, type Random } from '../core/random.js';
import { CoordError } from '../errors.js';
import type { ClientConfig } from './config.js';
import { sendAttempt, type AttemptRequest } from './http-attempt.js';
import type { EndpointRouter } from './router.js';

export interface CallOptions {
  /** Writes and linearizable reads: the leader serves them (followers redirect). */
  readonly leaderOnly: boolean;
}

export interface CallerComponents {
  readonly clock: Clock;
  readonly random: Random;
  readonly router: EndpointRouter;
  /** Aborted when the client closes. */
  readonly signal: AbortSignal;
}

export class Caller {
  constructor(private readonly config: ClientConfig, private readonly c: CallerComponents) {}

  /** The answer's body; rejects with a CoordError carrying code and outcome. */
  async call(request: AttemptRequest, options: CallOptions): Promise<unknown> {
    const startMs = this.c.clock.monotonicMs();
    const deadlineMs = startMs + this.config.retryDeadlineMs;
    let unknown = false;
    // What a member said (no leader, timed out) explains more than a refused connection.
    let answered: CoordError | undefined;
    for (let attempt = 0; ; attempt++) {
      if (this.c.signal.aborted) throw closedError(unknown);
      const url = this.c.router.next(options.leaderOnly);
      // Each attempt gets its full timeout: cutting the last one short would turn an answer
      // on its way into an unknown outcome. The deadline only stops new attempts.
      const result = await sendAttempt(url, request, {
        timeoutMs: this.config.requestTimeoutMs,
        redirectsMax: this.config.redirectsMax,
        signal: this.c.signal,
      });
      if (result.kind === 'ok') {
        if (options.leaderOnly) this.c.router.noteLeader(result.servedBy);
        return result.body;
      }
      unknown ||= result.error.outcome === 'unknown';
      if (result.answered) answered = result.error;
      this.c.router.noteFailure(result.servedBy);
      if (result.leaderUrl !== undefined) this.c.router.noteLeader(result.leaderUrl);
      if (!result.retry) throw withOutcome(result.error, unknown, '');
      const pauseMs = this.backoffMs(attempt);
      const elapsedMs = this.c.clock.monotonicMs() - startMs;
      if (this.c.clock.monotonicMs() + pauseMs >= deadlineMs) {
        throw withOutcome(answered ?? result.error, unknown,
          ` (gave up after ${attempt + 1} attempts in ${Math.round(elapsedMs)} ms)`);
      }
      await pause(pauseMs, this.c.signal);
    }
  }

  /**
   * Full jitter over an exponential ceiling that grows once per round through the endpoints:
   * the first round tries each endpoint almost at once, later rounds wait longer.
   */
  private backoffMs(attempt: number): number {
    const round = Math.floor(attempt / Math.max(1, this.c.router.endpoints.length));
    const ceilingMs = Math.min(this.config.backoffMsMax,
      this.config.backoffMsMin * 2 ** Math.min(round, 30));
    return randomInt(this.c.random, 0, Math.max(1, Math.floor(ceilingMs)) + 1);
  }
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

function closedError(unknown: boolean): CoordError {
  return new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed',
    { outcome: unknown ? 'unknown' : 'failed' });
}

/** Waits `ms`, or less if `signal` aborts (the loop then sees the abort and stops). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
