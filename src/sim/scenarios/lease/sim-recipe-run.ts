/**
 * One campaign for an election or a lock on a simulated client, from its lease's grant to its
 * end: the simulated twin of src/client/recipe-driver.ts. The Campaign (src/core/election)
 * decides; this driver only performs each action against the simulated core and reports the
 * answer with the lease as seen at that moment, making the same choices as the real driver:
 *
 * - the run's lease is granted for it (TTL/3 keep-alives, SimLeaseKeeper) and revoked after any
 *   end (best effort), so a successor need not wait out the TTL;
 * - a StallWatch ticks every 100 ms on the client's own clock, threshold the lease margin;
 * - loss sources are reported to `Campaign.onLost`, which decides whether they end anything:
 *   the lease's local deadline or a keep-alive answered CONCLAVE_LEASE_EXPIRED (lease-ended),
 *   a stall, the own key found deleted once elected;
 * - a step answered after the run ended is not told to the Campaign; a step that fails (no
 *   answer in time, an unknown write, a refusal) ends the campaign;
 * - wait-deleted is a watch on the predecessor's key from the scan's revision + 1. The real
 *   client's watch resumes on its own; here a watch call that times out is sent again from the
 *   same revision (a member answers it as soon as, or once, the key is deleted: no polling). A
 *   compacted history counts as deleted (the Campaign scans again, which is always safe);
 * - once elected, a watch on the own key from the claim's revision + 1 (re-read, then watched
 *   again, when the watch breaks) ends the holding when the key is deleted.
 *
 * The holding ends (the holder stops believing) at the FIRST of: the local deadline, which is
 * the elected action's `holdUntilMs` moved on by later acknowledged keep-alives exactly as the
 * real Lease moves it; a stall verdict; the lease found ended; the own key deleted; a release.
 * One difference from the real driver: it ends the holding when the lease's signal aborts and
 * never reads `holdUntilMs`; here the deadline timer starts from `holdUntilMs`. They agree except
 * under the test-only mutant `claimWithoutLeaseRecheck`, which sets a fresh `holdUntilMs`.
 */
import { assertNever } from '../../../core/assert.js';
import {
  Campaign, StallWatch, type CampaignAction, type CampaignLossReason, type CampaignMutant,
  type CampaignPhase, type CandidateEntry, type HolderView, type RecipeKeys,
} from '../../../core/election/index.js';
import type { TimerHandle } from '../../../ports/timer.js';
import type { SimAnswer, SimCoreClient } from './sim-core-client.js';
import { SimLeaseKeeper } from './sim-lease-keeper.js';

/** How often the stall watch ticks: the real driver's STALL_TICK_INTERVAL_MS. Unit: ms. */
export const STALL_TICK_INTERVAL_MS = 100;

/** Why a run ended: the Campaign's loss reasons, or its owner's doing, or a failed call. */
export type RecipeEndReason = CampaignLossReason | 'released' | 'aborted' | 'failed';

export interface RecipeRunOptions {
  readonly keys: RecipeKeys;
  /** The candidate key's value (the candidate's id). */
  readonly value: string;
  /** Unit: ms. */
  readonly ttlMs: number;
  /** ρ, as the servers use it. Unit: ratio. */
  readonly clockRateErrorMax: number;
  /** The client's leaseMarginMs: off every deadline, and the stall threshold. Unit: ms. */
  readonly marginMs: number;
  /** How long one watch call may wait before it is sent again. Unit: ms (client clock). */
  readonly watchTimeoutMs: number;
  /** Pause before watching again after a failed re-read. Unit: ms (client clock). */
  readonly retryDelayMs: number;
  readonly mutants: readonly CampaignMutant[];
}

/** What a run tells its owner, on the client's process. */
export interface RecipeRunObserver {
  /** The lease was granted: the run now owns it. */
  granted(run: SimRecipeRun): void;
  /** Elected: the holder believes it leads from now until `ended`. */
  elected(run: SimRecipeRun, action: Extract<CampaignAction, { kind: 'elected' }>): void;
  /** The run is over, elected or not. Called once. */
  ended(run: SimRecipeRun, reason: RecipeEndReason, detail: string): void;
  /** A stall verdict (whether or not it ended anything). */
  stalled(run: SimRecipeRun, lateMs: number): void;
}

export class SimRecipeRun {
  readonly keeper: SimLeaseKeeper;
  private campaign: Campaign | undefined;
  private overValue = false;
  private electedValue = false;
  private stallTimer: TimerHandle | undefined;
  private holdTimer: TimerHandle | undefined;
  private holdUntilMs = -Infinity;
  /** The revision of the claim that won (0 until then). */
  private claimRevision = 0;

  constructor(
    readonly client: SimCoreClient,
    readonly options: RecipeRunOptions,
    private readonly observer: RecipeRunObserver,
  ) {
    this.keeper = new SimLeaseKeeper(client, {
      ttlMs: options.ttlMs, clockRateErrorMax: options.clockRateErrorMax,
      marginMs: options.marginMs, retryDelayMsMax: 100,
    }, (reason) => this.report('lease-ended', `lease ${this.keeper.leaseId}: ${reason}`));
  }

  /** Over: lost, failed, released or aborted. */
  get over(): boolean {
    return this.overValue;
  }

  /** Elected and not over: the holder believes it leads. */
  get holding(): boolean {
    return this.electedValue && !this.overValue;
  }

  get fencingToken(): number {
    return this.campaign?.fencingToken ?? 0;
  }

  /** The Campaign's phase ('granting' until the lease is granted). */
  get phase(): CampaignPhase | 'granting' {
    return this.campaign?.phase ?? 'granting';
  }

  /** Grants the lease, then campaigns. */
  start(): void {
    this.keeper.grant((answer) => {
      if (answer.kind !== 'ok') return this.finish('failed', `grant: ${describe(answer)}`);
      this.observer.granted(this);
      // Aborted while the grant was on its way: give the lease back at once.
      if (this.overValue) return this.cleanup();
      this.begin();
    });
  }

  /** The holder lets go (resign, unlock): it stops believing, then revokes. */
  release(what: string): void {
    this.finish('released', `${what} by its holder`);
  }

  /** The holder stops keeping the lease alive; it still believes until its local deadline. */
  abandon(): void {
    this.keeper.abandon();
  }

  /** The caller gives up the campaign (or the holding): the run ends, the lease is revoked. */
  abort(what: string): void {
    this.finish('aborted', what);
  }

  private begin(): void {
    const { options, client } = this;
    this.campaign = new Campaign({ keys: options.keys, leaseId: this.keeper.leaseId!,
      value: options.value, leaseTtlMs: options.ttlMs,
      clockRateErrorMax: options.clockRateErrorMax, leaseMarginMs: options.marginMs,
      mutants: options.mutants });
    // A margin of 0 would call every timer's jitter a stall: 1 ms is the least that means one.
    const stall = new StallWatch({ tickIntervalMs: STALL_TICK_INTERVAL_MS,
      stallMsMax: Math.max(1, options.marginMs) }, client.clock.monotonicMs());
    const tick = (): void => {
      const verdict = stall.tick(client.clock.monotonicMs());
      this.stallTimer = client.clock.setTimer(STALL_TICK_INTERVAL_MS, tick);
      if (verdict.kind === 'stalled') {
        this.observer.stalled(this, verdict.lateMs);
        this.report('stalled', `a ${STALL_TICK_INTERVAL_MS} ms timer fired `
          + `${Math.round(verdict.lateMs)} ms late`);
      }
    };
    this.stallTimer = client.clock.setTimer(STALL_TICK_INTERVAL_MS, tick);
    this.perform(this.campaign.start());
  }

  /** The lease as the Campaign needs it at each event. */
  private view(): HolderView {
    return { nowMs: this.client.clock.monotonicMs(), leaseDeadlineMs: this.keeper.deadlineMs };
  }

  private perform(action: CampaignAction): void {
    const campaign = this.campaign!;
    switch (action.kind) {
      case 'create':
        return this.create(action, (rev) => this.perform(campaign.onCreated(rev, this.view())));
      case 'scan':
        return this.scan(action.prefix, (candidates, revision) =>
          this.perform(campaign.onScanned(candidates, revision, this.view())));
      case 'wait-deleted':
        return this.waitDeleted(action.key, action.afterRevision + 1,
          () => this.perform(campaign.onPredecessorDeleted(this.view())));
      case 'claim':
        return this.claim(action, (term) => this.perform(campaign.onClaimed(term, this.view())));
      case 'elected':
        return this.elected(action);
      case 'lost':
        return this.finish(action.reason, action.detail);
      default:
        return assertNever(action, 'campaign action');
    }
  }

  /**
   * A campaign step's answer: told to the Campaign only while the run goes on. The servers
   * saying the lease is gone is a loss source; any other failure ends the campaign.
   */
  private step<T>(what: string, answer: SimAnswer<T>, next: (value: T) => void): void {
    if (this.overValue) return;
    if (answer.kind === 'ok') return next(answer.value);
    if (answer.kind === 'failed' && answer.code === 'CONCLAVE_LEASE_EXPIRED') {
      this.report('lease-ended', `${what}: the servers say the lease is gone`);
    }
    this.finish('failed', `${what}: ${describe(answer)}`);
  }

  /** create: put the key (attached to the lease) unless it exists; its create revision. */
  private create(action: Extract<CampaignAction, { kind: 'create' }>,
    next: (createRevision: number) => void): void {
    const { key, value, leaseId } = action;
    this.client.txn({
      compare: [{ key, target: 'createRevision', result: 'equal', createRevision: 0 }],
      success: [{ kind: 'put', key, value, lease: leaseId }, { kind: 'range', key }],
      failure: [{ kind: 'range', key }],
    }, (answer) => this.step('create', answer, (result) => {
      const read = result.responses[result.succeeded ? 1 : 0];
      const created = read?.kind === 'range' ? read.kvs[0] : undefined;
      if (created === undefined) return this.finish('failed', `create ${key}: no key read`);
      next(created.createRevision);
    }));
  }

  /** scan: every candidate by create revision, and the revision of the linearizable read. */
  private scan(prefix: string, next: (candidates: CandidateEntry[], revision: number) => void):
    void {
    this.client.range({ key: prefix, prefix: true }, (answer) => this.step('scan', answer,
      (result) => next(result.kvs.map((kv) => ({ key: kv.key, createRevision: kv.createRevision }))
        .sort((a, b) => a.createRevision - b.createRevision), result.revision)));
  }

  /** wait-deleted: watch only the predecessor's key, sent again until it answers. */
  private waitDeleted(key: string, fromRevision: number, next: () => void): void {
    this.client.watchDelete(key, fromRevision, (answer) => {
      if (this.overValue) return;
      if (answer.kind === 'ok') return next();
      if (answer.kind === 'failed' && answer.code === 'CONCLAVE_KV_COMPACTED') return next();
      this.waitDeleted(key, fromRevision, next);
    }, { timeoutMs: this.options.watchTimeoutMs });
  }

  /** claim: bump the generation key while our key keeps its create revision. */
  private claim(action: Extract<CampaignAction, { kind: 'claim' }>,
    next: (term: number | undefined) => void): void {
    const { key, createRevision, generationKey, value } = action;
    this.client.txn({
      compare: [{ key, target: 'createRevision', result: 'equal', createRevision }],
      success: [{ kind: 'put', key: generationKey, value }, { kind: 'range', key: generationKey }],
      failure: [],
    }, (answer) => this.step('claim', answer, (result) => {
      if (!result.succeeded) return next(undefined);
      const read = result.responses[1];
      const generation = read?.kind === 'range' ? read.kvs[0] : undefined;
      if (generation === undefined) return this.finish('failed', `claim: no ${generationKey}`);
      this.claimRevision = result.revision;
      next(generation.version);
    }));
  }

  private elected(action: Extract<CampaignAction, { kind: 'elected' }>): void {
    this.electedValue = true;
    this.holdUntilMs = action.holdUntilMs;
    // As the real RecipeHold: from the claim's revision + 1 (1 under the mutant: no claim).
    this.guard(this.claimRevision + 1);
    this.armDeadline();
    this.observer.elected(this, action);
  }

  /**
   * The holding's local deadline: `holdUntilMs`, moved on to the lease's deadline when later
   * acknowledged keep-alives moved that (the real Lease re-arms its timer at each one; re-arming
   * when the old deadline comes gives the same instant).
   */
  private armDeadline(): void {
    const clock = this.client.clock;
    const deadlineMs = Math.max(this.holdUntilMs, this.keeper.deadlineMs);
    this.holdTimer = clock.setTimer(Math.max(0, deadlineMs - clock.monotonicMs()), () => {
      if (this.overValue) return;
      if (this.keeper.deadlineMs > this.holdUntilMs) {
        this.holdUntilMs = this.keeper.deadlineMs;
        if (clock.monotonicMs() < this.holdUntilMs) return this.armDeadline();
      }
      this.report('lease-ended', `lease ${this.keeper.leaseId}: the local deadline passed`);
    });
  }

  /** Watches our own key from `fromRevision`: deleted means we lost. */
  private guard(fromRevision: number): void {
    const key = this.campaign!.key;
    this.client.watchDelete(key, fromRevision, (answer) => {
      if (this.overValue) return;
      if (answer.kind === 'ok') {
        return this.report('key-deleted', `candidate key ${key} was deleted at revision `
          + `${answer.value.revision}`);
      }
      this.recheck(fromRevision); // compacted, or no member for a while: read, then watch on
    }, { timeoutMs: this.options.watchTimeoutMs });
  }

  private recheck(fromRevision: number): void {
    const key = this.campaign!.key;
    this.client.range({ key }, (answer) => {
      if (this.overValue) return;
      if (answer.kind !== 'ok') {
        this.client.clock.setTimer(this.options.retryDelayMs, () => {
          if (!this.overValue) this.guard(fromRevision);
        });
        return;
      }
      if (answer.value.kvs[0]?.createRevision !== this.campaign!.fencingToken) {
        return this.report('key-deleted', `candidate key ${key} is gone`);
      }
      this.guard(answer.value.revision + 1);
    });
  }

  /** A loss source fired; the Campaign decides whether it ends anything. */
  private report(reason: CampaignLossReason, detail: string): void {
    if (this.overValue || this.campaign === undefined) return;
    const action = this.campaign.onLost(reason, detail);
    if (action?.kind === 'lost') this.finish(action.reason, action.detail);
  }

  /** Ends the run once: stop believing, stop the timers, give the lease up. */
  private finish(reason: RecipeEndReason, detail: string): void {
    if (this.overValue) return;
    this.overValue = true;
    this.campaign?.end();
    this.stallTimer?.cancel();
    this.holdTimer?.cancel();
    this.observer.ended(this, reason, detail);
    this.cleanup();
  }

  /** Revokes the run's lease (its key goes with it); best effort, as the real driver. */
  private cleanup(): void {
    const state = this.keeper.state;
    if (this.keeper.leaseId === undefined || state === 'revoked') return;
    this.keeper.revoke(() => undefined);
  }
}

function describe(answer: SimAnswer<unknown>): string {
  return answer.kind === 'failed' ? `${answer.code}: ${answer.message}`
    : answer.kind === 'unknown' ? `unknown: ${answer.message}` : 'ok';
}
