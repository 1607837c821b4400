/**
 * The driver of the election and lock recipes. A `Campaign` (src/core/election/campaign.ts)
 * decides; this file only performs the action it asks for against the store, over the client,
 * and reports the answer back with the lease as seen at that moment. docs/elections.md explains
 * the recipe step by step.
 *
 * Once elected, the driver guards the holding: its `signal` aborts on the FIRST of
 * - the lease's signal (its local deadline: send time of the last acknowledged keep-alive +
 *   TTL × (1 − ρ)/(1 + ρ) − leaseMarginMs; or the lease found expired, revoked, client closed),
 * - a stall of this process longer than the lease margin (StallWatch on a 100 ms timer: a GC
 *   pause, CPU starvation or SIGSTOP can outlast the lease with no timer able to say so),
 * - a watch seeing the candidate key deleted or re-created,
 * - a release (resign, unlock);
 * then it revokes the lease (best effort, given up after the lease's TTL) so a successor does
 * not wait out the TTL. `held()` asks the same question synchronously, at the moment of the
 * call: the signal, the lease's local deadline on the monotonic clock, and whether the stall
 * watch's next tick is already overdue (after a pause, the holder's own timer may run before
 * the stall watch's, and before the lease's deadline timer).
 */
import { assertNever } from '../core/assert.js';
import {
  Campaign, StallWatch, type CampaignAction, type CampaignLossReason, type CampaignMutant,
  type CandidateEntry, type HolderView, type RecipeKeys,
} from '../core/election/index.js';
import type { Clock } from '../ports/clock.js';
import type { Timer, TimerHandle } from '../ports/timer.js';
import { CoordError } from '../errors.js';
import { CallAbortedError, describeReason, pause, TimedSignal } from './context.js';
import type { ClientConfig } from './config.js';
import type { KvClient } from './kv.js';
import type { Lease, LeaseClient } from './lease.js';
import { WatchCompactedError, type Watch, type WatchOptions, type WatchSelector } from './watch.js';

/**
 * The lease TTL of a campaign or lock that brings no lease of its own. Unit: ms. Default:
 * 10 000. Why: it must exceed the servers' minimum TTL (about 3.1 × their longest election
 * timeout: 6.2 s on the LAN defaults; a smaller one is refused with CONCLAVE_REQUEST_INVALID
 * naming the minimum), and it bounds how long a crashed holder blocks its successor.
 */
export const RECIPE_TTL_MS_DEFAULT = 10_000;

/**
 * How often the stall watch ticks. Unit: ms. Why 100: a stall is noticed within a tenth of a
 * second of the process running again, and a timer this slow costs nothing measurable.
 */
export const STALL_TICK_INTERVAL_MS = 100;

/** Why a leadership or lock ended: the Campaign's reasons, or its holder let it go. */
export type LeadershipLossReason = CampaignLossReason | 'released';

/**
 * Why a leadership or lock ended: its `signal.reason`. `name` is 'AbortError' (as fetch and
 * Node's own APIs name an abort), so `fetch(url, { signal: lock.signal })` and the usual
 * `error.name === 'AbortError'` check treat it as the abort it is; `lossReason` says why.
 * Either a LeadershipLostError (a loss) or a HoldingReleasedError (a release).
 */
export abstract class HoldingEndedError extends CoordError {
  override name = 'AbortError';
  abstract readonly lossReason: LeadershipLossReason;
}

/**
 * A campaign lost, or a leadership or lock was lost (`signal.reason`). Code
 * CONCLAVE_LEASE_EXPIRED: the holder can no longer count on its lease. `lossReason` says which
 * source ended it.
 */
export class LeadershipLostError extends HoldingEndedError {
  constructor(readonly lossReason: CampaignLossReason, message: string) {
    super('CONCLAVE_LEASE_EXPIRED', message);
  }
}

/**
 * The holder let its leadership or lock go (`resign()`, `unlock()`): not a loss. Code
 * CONCLAVE_RELEASED, `lossReason` 'released'.
 */
export class HoldingReleasedError extends HoldingEndedError {
  readonly lossReason = 'released';
  constructor(message: string) {
    super('CONCLAVE_RELEASED', message);
  }
}

/**
 * The caller's `signal` aborted a campaign or lock acquisition before it succeeded (the key
 * and lease were cleaned up). `name` is 'AbortError', as for fetch; `cause` is the signal's
 * reason. Code CONCLAVE_UNAVAILABLE: the operation was not done, as when the client closes.
 */
export class RecipeAbortedError extends CallAbortedError {
  constructor(message: string, cause: unknown) {
    super(message, { cause, outcome: 'failed' });
  }
}

/** What the recipes use of the client. */
export interface RecipeComponents {
  readonly kv: KvClient;
  readonly leases: LeaseClient;
  readonly clock: Clock;
  readonly timer: Timer;
  readonly config: ClientConfig;
  readonly watch: (selector: WatchSelector, options: WatchOptions) => Watch;
  /** TEST-ONLY: planted bugs of the Campaign (ClientComponents.campaignMutants). */
  readonly campaignMutants?: readonly CampaignMutant[] | undefined;
}

export interface RecipeRequest {
  readonly keys: RecipeKeys;
  /** The candidate key's value. */
  readonly value: string;
  /** The TTL of the lease granted for the campaign (ignored when `lease` is given). Unit: ms. */
  readonly ttlMs: number;
  /** Campaign under this lease instead of a fresh one (it is then never revoked here). */
  readonly lease?: Lease;
  /** Aborts the campaign while it has not succeeded. */
  readonly signal?: AbortSignal;
}

/** Resolves with `work`, or rejects with `signal.reason` as soon as `signal` aborts. */
export function raceSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason as unknown);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as unknown);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * One campaign from start to end: the Campaign, its lease, the stall watch, and the `lost`
 * signal that aborts on its first loss (the leadership's signal once elected).
 */
class RecipeRun {
  readonly campaign: Campaign;
  private readonly lost = new AbortController();
  private readonly stall: StallWatch;
  private readonly stallMsMax: number;
  private stallTimer: TimerHandle | undefined;
  private readonly onLeaseEnd = (): void =>
    this.report('lease-ended', describeReason(this.lease.signal.reason));
  private cleaning: Promise<CoordError | undefined> | undefined;

  constructor(readonly c: RecipeComponents, readonly lease: Lease, readonly ownsLease: boolean,
    request: RecipeRequest) {
    this.campaign = new Campaign({ keys: request.keys, leaseId: lease.id, value: request.value,
      leaseTtlMs: lease.ttlMs, clockRateErrorMax: c.config.clockRateErrorMax,
      leaseMarginMs: c.config.leaseMarginMs,
      ...(c.campaignMutants === undefined ? {} : { mutants: c.campaignMutants }) });
    // A margin of 0 would call every timer's jitter a stall: 1 ms is the least that means one.
    this.stallMsMax = Math.max(1, c.config.leaseMarginMs);
    this.stall = new StallWatch({ tickIntervalMs: STALL_TICK_INTERVAL_MS,
      stallMsMax: this.stallMsMax }, c.clock.monotonicMs());
    this.watchStalls(lease);
    if (lease.signal.aborted) this.onLeaseEnd();
    else lease.signal.addEventListener('abort', this.onLeaseEnd, { once: true });
  }

  /** Aborts, with a LeadershipLostError, on the first loss (or release, or caller abort). */
  get signal(): AbortSignal {
    return this.lost.signal;
  }

  /**
   * The stall watch: a timer every STALL_TICK_INTERVAL_MS, re-armed at each tick, whose
   * lateness beyond the lease margin is a stall (a GC pause, CPU starvation or SIGSTOP can
   * outlast the lease with no timer able to say so).
   */
  private watchStalls(lease: Lease): void {
    const { clock, timer } = this.c;
    const tick = (): void => {
      const verdict = this.stall.tick(clock.monotonicMs());
      if (this.lost.signal.aborted) return;
      this.stallTimer = timer.setTimer(STALL_TICK_INTERVAL_MS, tick);
      if (verdict.kind === 'stalled') this.reportStall(lease, verdict.lateMs, 'fired');
    };
    this.stallTimer = timer.setTimer(STALL_TICK_INTERVAL_MS, tick);
  }

  private reportStall(lease: Lease, lateMs: number, how: 'fired' | 'is due'): void {
    this.report('stalled', `this process stalled: a ${STALL_TICK_INTERVAL_MS} ms timer `
      + `${how} ${Math.round(lateMs)} ms late (more than the lease margin, `
      + `${this.stallMsMax} ms), so lease ${lease.id} may have ended meanwhile`);
  }

  /**
   * Still held, at this very moment: the signal has not aborted, the lease's local deadline
   * has not passed on the monotonic clock, and the stall watch's next tick is not overdue by
   * more than the margin. A failed check ends the holding at once (the signal aborts).
   */
  held(): boolean {
    if (this.lost.signal.aborted) return false;
    if (this.c.campaignMutants?.includes('heldWithoutClockCheck') === true) return true;
    const nowMs = this.c.clock.monotonicMs();
    const stall = this.stall.overdue(nowMs);
    if (stall.kind === 'stalled') {
      this.reportStall(this.lease, stall.lateMs, 'is due');
      return false;
    }
    if (this.lease.signal.aborted || nowMs >= this.lease.expiresAtMs) {
      this.report('lease-ended', `lease ${this.lease.id}: its local deadline passed `
        + `${Math.round(nowMs - this.lease.expiresAtMs)} ms ago`);
      return false;
    }
    return true;
  }

  /** Time left before the lease's local deadline, if `held()`; else 0. Unit: ms. */
  remainingMs(): number {
    if (!this.held()) return 0;
    return Math.max(0, this.lease.expiresAtMs - this.c.clock.monotonicMs());
  }

  /** The lease as the Campaign needs it at each event. */
  view(): HolderView {
    return { nowMs: this.c.clock.monotonicMs(), leaseDeadlineMs: this.lease.expiresAtMs };
  }

  /**
   * Performs one action's I/O, cut short when `halt` aborts: then it throws the run's end
   * reason (a loss, or RecipeAbortedError when the caller's signal aborted).
   */
  async step<T>(work: () => Promise<T>, halt: AbortSignal, callerSignal: AbortSignal):
    Promise<T> {
    try {
      const answer = await raceSignal(work(), halt);
      // A loss may have been reported (a keep-alive answered "expired") between the answer
      // and now: the Campaign has ended, so it must not be told the answer.
      if (this.signal.aborted) throw this.signal.reason as unknown;
      return answer;
    } catch (error) {
      if (!this.signal.aborted && callerSignal.aborted) this.end(abortedError(callerSignal));
      if (!this.signal.aborted && error instanceof CoordError
        && error.code === 'CONCLAVE_LEASE_EXPIRED') {
        this.report('lease-ended', error.message); // the server says the lease is gone
      }
      throw this.signal.aborted ? this.signal.reason as unknown : error;
    }
  }

  /** A loss source fired; the Campaign decides whether it ends anything. */
  report(reason: CampaignLossReason, detail: string): void {
    const action = this.campaign.onLost(reason, detail);
    if (action?.kind === 'lost') this.end(new LeadershipLostError(action.reason, action.detail));
  }

  /** Ends the run with `reason` (the first call wins) and stops its watches and timers. */
  end(reason: CoordError): void {
    if (this.lost.signal.aborted) return;
    this.campaign.end();
    this.stallTimer?.cancel();
    this.lease.signal.removeEventListener('abort', this.onLeaseEnd);
    this.lost.abort(reason);
  }

  /**
   * Gives the candidate key up, once: revokes an owned lease (its key goes with it), or deletes
   * the key if it still has our create revision. Resolves with the failure, if any; a lease or
   * key already gone is no failure.
   */
  cleanup(): Promise<CoordError | undefined> {
    this.cleaning ??= this.boundedGiveUp().then(() => undefined, (error: unknown) => {
      if (error instanceof CoordError) {
        return error.code === 'CONCLAVE_LEASE_EXPIRED' ? undefined : error;
      }
      return new CoordError('CONCLAVE_PROTOCOL', String(error), { cause: error });
    });
    return this.cleaning;
  }

  /**
   * Gives up within the lease's TTL: past it the servers have ended the lease on their own, so
   * a revoke or delete still retrying (a partition) only holds its caller up.
   */
  private async boundedGiveUp(): Promise<void> {
    const bound = new TimedSignal(this.c.timer, this.lease.ttlMs, []);
    try {
      await this.giveUp(bound.signal);
    } finally {
      bound.done();
    }
  }

  private async giveUp(signal: AbortSignal): Promise<void> {
    if (this.ownsLease) {
      await this.lease.revoke({ signal });
      return;
    }
    const createRevision = this.campaign.fencingToken;
    if (createRevision === 0) return; // never created
    await this.c.kv.txn({ compare: [{ key: this.campaign.key, target: 'createRevision',
      result: 'equal', createRevision }],
    success: [{ kind: 'delete', key: this.campaign.key }], failure: [] }, { signal });
  }
}

/** The Campaign's elected action, and the revision of the claim that won it. */
interface Elected {
  readonly action: Extract<CampaignAction, { kind: 'elected' }>;
  readonly claimRevision: number;
}

/**
 * Campaigns until elected and returns the holding; rejects with LeadershipLostError when the
 * campaign lost (lease ended while waiting, key gone, stalled), RecipeAbortedError when
 * `request.signal` aborted, or the CoordError of a call that failed (e.g. the servers refusing
 * the TTL). Whatever the rejection, the key and an owned lease are given up first.
 */
export async function runRecipe(c: RecipeComponents, request: RecipeRequest):
  Promise<RecipeHold> {
  const callerSignal = request.signal ?? new AbortController().signal;
  if (callerSignal.aborted) throw abortedError(callerSignal);
  const lease = request.lease ?? await grantLease(c, request.ttlMs, callerSignal);
  const run = new RecipeRun(c, lease, request.lease === undefined, request);
  try {
    const elected = await campaignLoop(run, callerSignal);
    return new RecipeHold(run, elected);
  } catch (error) {
    run.end(error instanceof CoordError ? error
      : new CoordError('CONCLAVE_PROTOCOL', `campaign failed: ${String(error)}`));
    await run.cleanup();
    throw error; // a non-CoordError is a bug: it surfaces as it is
  }
}

/** Grants the campaign's lease; one granted after the caller gave up is revoked at once. */
async function grantLease(c: RecipeComponents, ttlMs: number, signal: AbortSignal):
  Promise<Lease> {
  const granting = c.leases.grant({ ttlMs });
  try {
    return await raceSignal(granting, signal);
  } catch (error) {
    if (!signal.aborted) throw error;
    granting.then((lease) => lease.revoke(), () => undefined).catch(() => undefined);
    throw abortedError(signal);
  }
}

async function campaignLoop(run: RecipeRun, callerSignal: AbortSignal): Promise<Elected> {
  const halt = AbortSignal.any([run.signal, callerSignal]);
  const step = <T>(work: () => Promise<T>): Promise<T> => run.step(work, halt, callerSignal);
  const { c, campaign } = run;
  let claimRevision = 0;
  // The lease may have ended before the campaign began (a lease passed in, already lost).
  if (run.signal.aborted) throw run.signal.reason as unknown;
  let action = campaign.start();
  for (;;) {
    switch (action.kind) {
      case 'create': {
        const create = action;
        const createRevision = await step(() => createKey(c.kv, create, halt));
        action = campaign.onCreated(createRevision, run.view());
        break;
      }
      case 'scan': {
        const { prefix } = action;
        const scanned = await step(() => scan(c.kv, prefix, halt));
        action = campaign.onScanned(scanned.candidates, scanned.revision, run.view());
        break;
      }
      case 'wait-deleted': {
        const { key, afterRevision } = action;
        await step(() => waitDeleted(c, key, afterRevision, halt));
        action = campaign.onPredecessorDeleted(run.view());
        break;
      }
      case 'claim': {
        const claim = action;
        const claimed = await step(() => claimLeadership(c.kv, claim, halt));
        claimRevision = claimed.revision;
        action = campaign.onClaimed(claimed.term, run.view());
        break;
      }
      case 'elected':
        return { action, claimRevision };
      case 'lost':
        throw new LeadershipLostError(action.reason, action.detail);
      default:
        assertNever(action, 'campaign action');
    }
  }
}

/** create: put the key (attached to the lease) unless it exists; its create revision. */
async function createKey(kv: KvClient,
  action: Extract<CampaignAction, { kind: 'create' }>, signal: AbortSignal): Promise<number> {
  const { key, value, leaseId } = action;
  // A retry of this write may find the key created by its first attempt: the compare sends
  // that case to the read, and the create revision is the same either way.
  const result = await kv.txn({
    compare: [{ key, target: 'createRevision', result: 'equal', createRevision: 0 }],
    success: [{ kind: 'put', key, value, lease: leaseId }, { kind: 'range', key }],
    failure: [{ kind: 'range', key }],
  }, { signal });
  const read = result.responses[result.succeeded ? 1 : 0];
  const created = read?.kind === 'range' ? read.kvs[0] : undefined;
  if (created === undefined) {
    throw new CoordError('CONCLAVE_PROTOCOL', `creating ${key}: the transaction's read found `
      + 'no key', { outcome: 'unknown' });
  }
  return created.createRevision;
}

/** scan: every candidate, by create revision, and the revision of the (linearizable) read. */
async function scan(kv: KvClient, prefix: string, signal: AbortSignal):
  Promise<{ candidates: CandidateEntry[]; revision: number }> {
  const result = await kv.range(prefix, { signal });
  const candidates = result.kvs.map((k) => ({ key: k.key, createRevision: k.createRevision }))
    .sort((a, b) => a.createRevision - b.createRevision);
  return { candidates, revision: result.revision };
}

/**
 * wait-deleted: watch only the predecessor's key (no herd: each waiter watches one key) from
 * the revision after the scan, until it is deleted. A compacted history may hide the delete:
 * the caller scans again then, which is always safe.
 */
async function waitDeleted(c: RecipeComponents, key: string, afterRevision: number,
  signal: AbortSignal): Promise<void> {
  const watch = c.watch({ key }, { fromRevision: afterRevision + 1, signal });
  try {
    for await (const event of watch) {
      if (event.type === 'delete') return;
    }
  } catch (error) {
    if (!(error instanceof WatchCompactedError)) throw error;
    return;
  } finally {
    watch.close();
  }
  // The watch ended without the delete: only `signal` (or the client closing) ends it so.
  throw signal.aborted ? signal.reason as unknown
    : new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed');
}

/** claim: bump the generation key while our key keeps its create revision. */
async function claimLeadership(kv: KvClient,
  action: Extract<CampaignAction, { kind: 'claim' }>, signal: AbortSignal):
  Promise<{ term: number | undefined; revision: number }> {
  const { key, createRevision, generationKey, value } = action;
  const result = await kv.txn({
    compare: [{ key, target: 'createRevision', result: 'equal', createRevision }],
    success: [{ kind: 'put', key: generationKey, value }, { kind: 'range', key: generationKey }],
    failure: [],
  }, { signal });
  if (!result.succeeded) return { term: undefined, revision: result.revision };
  const read = result.responses[1];
  const generation = read?.kind === 'range' ? read.kvs[0] : undefined;
  if (generation === undefined) {
    throw new CoordError('CONCLAVE_PROTOCOL', `claiming ${key}: the transaction's read found `
      + `no ${generationKey}`, { outcome: 'unknown' });
  }
  return { term: generation.version, revision: result.revision };
}

/** What an elected campaign holds, guarded until its first loss or release. */
export class RecipeHold {
  readonly key: string;
  /** The create revision of the key that won: grows with each later holding. */
  readonly fencingToken: number;
  /** The generation key's version after the claim: 1, 2, ... one per holding. */
  readonly term: number;

  constructor(private readonly run: RecipeRun, elected: Elected) {
    this.key = elected.action.key;
    this.fencingToken = elected.action.fencingToken;
    this.term = elected.action.term;
    // After the loss, revoke at once: the successor need not wait out the TTL.
    run.signal.addEventListener('abort', () => void run.cleanup(), { once: true });
    // Its failures end in a loss report or the lease's end; none is left unhandled.
    this.guardKey(elected.claimRevision + 1).catch(() => undefined);
  }

  /** Aborts on the first loss or release; `reason` is a LeadershipLostError. */
  get signal(): AbortSignal {
    return this.run.signal;
  }

  get leaseId(): number {
    return this.run.lease.id;
  }

  /** See Holding.held(). */
  held(): boolean {
    return this.run.held();
  }

  /** See Holding.remainingMs. */
  get remainingMs(): number {
    return this.run.remainingMs();
  }

  /**
   * Replaces the key's value, only while the key keeps our create revision; stopped at once
   * when the holding ends (or `signal` aborts).
   */
  async proclaim(value: string, signal?: AbortSignal): Promise<void> {
    if (this.signal.aborted) throw this.signal.reason as unknown;
    const { key, fencingToken } = this;
    const result = await this.run.c.kv.txn({
      compare: [{ key, target: 'createRevision', result: 'equal', createRevision: fencingToken }],
      success: [{ kind: 'put', key, value, lease: this.leaseId }],
      failure: [],
    }, { signal: signal === undefined ? this.signal : AbortSignal.any([this.signal, signal]) });
    if (!result.succeeded) {
      this.run.report('key-deleted', `candidate key ${key} was gone when proclaiming`);
      throw this.signal.reason as unknown;
    }
  }

  /**
   * Ends the holding: the signal aborts first (stop acting), then the key goes (the lease is
   * revoked when it was granted for this campaign). Rejects only if that write failed; the
   * lease then ends on its own within its TTL. After a loss it resolves at once: the revoke
   * begun at the loss goes on in the background (bounded by the lease's TTL), since waiting
   * for it would only hold the caller up while the cluster may be out of reach.
   */
  async release(what: string): Promise<void> {
    if (this.signal.aborted && !(this.signal.reason instanceof HoldingReleasedError)) {
      void this.run.cleanup();
      return;
    }
    this.run.end(new HoldingReleasedError(`${this.key}: ${what} by its holder`));
    const failure = await this.run.cleanup();
    if (failure !== undefined) throw failure;
  }

  /** Watches our own key from after the claim: deleted or re-created means we lost. */
  private async guardKey(fromRevision: number): Promise<void> {
    const { c, signal } = this.run;
    let from = fromRevision;
    while (!signal.aborted) {
      const watch = c.watch({ key: this.key }, { fromRevision: from, signal });
      try {
        for await (const event of watch) {
          if (event.type === 'delete' || event.kv.createRevision !== this.fencingToken) {
            const what = event.type === 'delete' ? 'deleted' : 're-created';
            this.run.report('key-deleted', `candidate key ${this.key} was ${what} at revision `
              + `${event.kv.modRevision}`);
          }
        }
        return; // the iteration ends only when the signal aborted
      } catch {
        // Compacted, or no member for a while: read the key, then watch on from there. If the
        // cluster stays unreachable, the lease's deadline ends the holding anyway.
        from = await this.recheck() ?? from;
      }
    }
  }

  /** The revision to watch on from, or undefined after a failed read (after a pause). */
  private async recheck(): Promise<number | undefined> {
    const { c, signal } = this.run;
    try {
      const got = await c.kv.get(this.key, { signal });
      if (got.kv?.createRevision !== this.fencingToken) {
        this.run.report('key-deleted', `candidate key ${this.key} is gone`);
      }
      return got.revision + 1;
    } catch {
      await pause(c.timer, c.config.backoffMsMax, signal);
      return undefined;
    }
  }
}

/**
 * What a leadership and a lock share: the token, term, key and lease of an elected campaign,
 * and the signal that aborts when it ends.
 */
export abstract class Holding {
  constructor(protected readonly hold: RecipeHold) {}

  /** The create revision of the winning key: only grows from one holder to the next. */
  get fencingToken(): number {
    return this.hold.fencingToken;
  }

  /** The generation key's version after the claim: 1, 2, ... one per holding. */
  get term(): number {
    return this.hold.term;
  }

  get key(): string {
    return this.hold.key;
  }

  get leaseId(): number {
    return this.hold.leaseId;
  }

  /**
   * Still held at this moment? The check to make right before each fenced action (a write
   * with `fencingToken`): computed now, on the monotonic clock, from the signal, the lease's
   * local deadline, and the stall check (a process paused past the margin answers false even
   * if no timer has run since: after a SIGSTOP or a long GC pause, your own timer may run
   * before the library's). Once false it stays false, and the signal has aborted.
   */
  held(): boolean {
    return this.hold.held();
  }

  /**
   * Time left before the lease's local deadline, computed as `held()` is; 0 when not held.
   * Unit: ms. An action that takes longer than this may outlive the holding.
   */
  get remainingMs(): number {
    return this.hold.remainingMs;
  }

  /**
   * Aborts on the first of: the lease's local deadline (or the lease found gone), a stall of
   * this process longer than the lease margin, the key deleted or re-created, a release
   * (`resign()`, `unlock()`). `signal.reason` is a HoldingEndedError (`name` 'AbortError',
   * `lossReason`): a LeadershipLostError (code CONCLAVE_LEASE_EXPIRED) for a loss, a
   * HoldingReleasedError (code CONCLAVE_RELEASED) for a release.
   */
  get signal(): AbortSignal {
    return this.hold.signal;
  }
}

function abortedError(signal: AbortSignal): RecipeAbortedError {
  return new RecipeAbortedError(`aborted: ${describeReason(signal.reason)}`, signal.reason);
}
