/**
 * What every part of the client shares: its configuration, its ports (clock, timers,
 * randomness, transport), the endpoint router and the close signal; and the two waits every
 * part needs, written once on the Timer port: a pause and a timed attempt. Nothing in
 * src/client reads a real clock or sets a real timer: `connect()` passes the system's, the
 * simulator its own.
 */
import type { CampaignMutant } from '../core/election/index.js';
import type { Random } from '../core/random.js';
import type { Clock } from '../ports/clock.js';
import type { ClientTransport } from '../ports/client-transport.js';
import type { Timer, TimerHandle } from '../ports/timer.js';
import { CoordError, type CoordOutcome } from '../errors.js';
import type { ClientConfig } from './config.js';
import type { Lease } from './lease.js';
import type { EndpointRouter } from './router.js';

/** The ports a client runs on (the `components` of `new ConclaveClient`). */
export interface ClientComponents {
  /** Every timeout, lease deadline and stall check reads this monotonic clock. */
  readonly clock: Clock;
  /** Back-offs, attempt timeouts, keep-alive rounds, lease deadlines, the stall watch. */
  readonly timer: Timer;
  /** Back-off jitter and the default client id. */
  readonly random: Random;
  /** How requests reach the members. */
  readonly transport: ClientTransport;
  /**
   * Told of every lease this client is granted (by `grantLease()`, a campaign or a lock),
   * before the call that asked for it resolves: for metrics and the simulator's checkers.
   */
  readonly onLease?: (lease: Lease) => void;
  /** TEST-ONLY: planted bugs of the election recipe, for the simulator. Never set otherwise. */
  readonly campaignMutants?: readonly CampaignMutant[];
}

/** The client's parts, as each of its modules receives them. */
export interface ClientContext {
  readonly config: ClientConfig;
  readonly clock: Clock;
  readonly timer: Timer;
  readonly random: Random;
  readonly transport: ClientTransport;
  readonly router: EndpointRouter;
  /** Aborted when the client closes. */
  readonly closing: AbortSignal;
}

/** Waits `ms` on the client's timer, or less if `signal` aborts (the caller then checks it). */
export function pause(timer: Timer, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const done = (): void => {
      handle.cancel();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const handle = timer.setTimer(ms, done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * One timed wait: `signal` aborts when `ms` pass on the client's timer (then `timedOut` is
 * true) or when any of `parents` aborts. `done()` releases the timer and the listeners.
 */
export class TimedSignal {
  private readonly controller = new AbortController();
  private readonly handle: TimerHandle;
  private readonly onParentAbort = (): void => this.controller.abort();
  private timedOutValue = false;

  constructor(timer: Timer, ms: number, private readonly parents: readonly AbortSignal[]) {
    this.handle = timer.setTimer(ms, () => {
      this.timedOutValue = true;
      this.controller.abort();
    });
    for (const parent of parents) {
      if (parent.aborted) this.controller.abort();
      else parent.addEventListener('abort', this.onParentAbort, { once: true });
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The time ran out (rather than a parent aborting). */
  get timedOut(): boolean {
    return this.timedOutValue;
  }

  done(): void {
    this.handle.cancel();
    for (const parent of this.parents) parent.removeEventListener('abort', this.onParentAbort);
  }
}

/**
 * A call whose caller's `signal` aborted (or whose client closed): `name` 'AbortError', as
 * fetch's; code CONCLAVE_UNAVAILABLE (the call is not done); `cause` the signal's reason (a
 * LeadershipLostError when a leadership's signal was passed). `outcome` is `failed` when no
 * request of the call had left, `unknown` when one may have reached a member.
 */
export class CallAbortedError extends CoordError {
  override name = 'AbortError';
  constructor(message: string, options: { cause?: unknown; outcome: CoordOutcome }) {
    super('CONCLAVE_UNAVAILABLE', message, options);
  }
}

/**
 * The rejection of a call stopped by its caller's `signal` (a CallAbortedError) or by the
 * client closing (a CoordError, CONCLAVE_UNAVAILABLE). `mayHaveLeft`: a request of the call may
 * have reached a member.
 */
export function abortedCall(signal: AbortSignal | undefined, mayHaveLeft: boolean): CoordError {
  const outcome: CoordOutcome = mayHaveLeft ? 'unknown' : 'failed';
  if (signal?.aborted === true) {
    const note = mayHaveLeft ? '; a request had been sent and may have been applied'
      : '; nothing had been sent';
    return new CallAbortedError(`aborted: ${describeReason(signal.reason)}${note}`,
      { cause: signal.reason, outcome });
  }
  return new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed', { outcome });
}

export function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  return reason === undefined ? 'no reason given' : String(reason);
}

/** `signal` and the client's close signal as one (the close signal alone when undefined). */
export function callSignal(closing: AbortSignal, signal: AbortSignal | undefined): AbortSignal {
  return signal === undefined ? closing : AbortSignal.any([closing, signal]);
}
