/**
 * What the election and lock clients do: each, on its own clock, campaigns for one of the
 * run's elections or locks under a fresh lease (SimRecipeRun: the Campaign decides), and once
 * elected holds for a random time (a quarter of a TTL to two TTLs), writing to the recipe's fenced
 * resource now and then with its fencing token while it believes it holds; then it resigns
 * (unlocks), or abandons its lease (stops keeping it alive: it still believes until its local
 * deadline), and campaigns again after a pause. A campaign that lost or failed starts over the
 * same way. At the heal every client lets go (resign or abandon; waiters give up) and starts
 * no more campaigns, so every lease ends by the bound counted from the heal.
 *
 * A write is checked, then done a few ms later with no second check, as real code does: a
 * freeze between the two sends a stale token. Under `--timing-violated` some write checks are
 * followed by exactly such a freeze, longer than the TTL (the directed shape of Kleppmann's
 * GC-pause example).
 */
import type { CampaignMutant, RecipeKind } from '../../../core/election/index.js';
import { recipeKeys } from '../../../core/election/index.js';
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import type { Prng } from '../../prng.js';
import type { SimClientHost } from './client-host.js';
import type { FencedResources } from './fenced-resource.js';
import type { LeaseChecker } from './lease-checker.js';
import type { Leadership, RecipeChecker } from './recipe-checker.js';
import type { SimCoreClient } from './sim-core-client.js';
import {
  SimRecipeRun, type RecipeEndReason, type RecipeRunObserver,
} from './sim-recipe-run.js';

/** One election or lock of the run. */
export interface RecipeTarget {
  readonly kind: RecipeKind;
  readonly name: string;
}

export interface RecipeWorkloadOptions {
  readonly recipes: readonly RecipeTarget[];
  /** Leases are granted with a TTL in [ttlMsMin, ttlMsMax]. Unit: ms. */
  readonly ttlMsMin: number;
  readonly ttlMsMax: number;
  readonly clockRateErrorMax: number;
  /** The client's leaseMarginMs. Unit: ms. */
  readonly marginMs: number;
  readonly watchTimeoutMs: number;
  readonly retryDelayMs: number;
  readonly mutants: readonly CampaignMutant[];
  /** Mean pause between two campaigns of a client. Unit: ms (client clock). */
  readonly thinkMsMean: number;
  /** Share of holdings ended by resign or unlock (the rest abandon their lease). */
  readonly releaseRate: number;
  /** Mean time between two writes of a holder. Unit: ms (client clock). */
  readonly writeIntervalMsMean: number;
  /** Chance that a write check is followed by a freeze longer than the TTL (0: never). */
  readonly freezeBeforeWriteChance: number;
}

export interface RecipeWorkloadCounts {
  campaigns: number;
  elected: number;
  released: number;
  abandoned: number;
  /** Runs that ended by each reason (elected or not). */
  ends: Record<RecipeEndReason, number>;
  /** Holdings (not campaigns) that ended by each reason. */
  holdingEnds: Record<RecipeEndReason, number>;
  stallVerdicts: number;
  writesSent: number;
  freezesBeforeWrite: number;
}

export interface RecipeClient {
  readonly client: SimCoreClient;
  readonly host: SimClientHost;
}

export class RecipeWorkload {
  readonly counts: RecipeWorkloadCounts = {
    campaigns: 0, elected: 0, released: 0, abandoned: 0, ends: noReasons(),
    holdingEnds: noReasons(), stallVerdicts: 0, writesSent: 0, freezesBeforeWrite: 0,
  };
  private readonly current = new Map<RecipeClient, SimRecipeRun>();
  private readonly leaderships = new Map<SimRecipeRun, Leadership>();
  private readonly kinds = new Map<SimRecipeRun, RecipeKind>();
  private stopped = false;

  constructor(
    private readonly prng: Prng,
    private readonly clients: readonly RecipeClient[],
    private readonly checker: RecipeChecker,
    private readonly leaseChecker: LeaseChecker,
    private readonly resources: FencedResources,
    private readonly options: RecipeWorkloadOptions,
  ) {}

  start(): void {
    for (const entry of this.clients) this.next(entry);
  }

  /** The heal: holders let go (resign or abandon), waiters give up, no campaign starts. */
  stopAll(): void {
    this.stopped = true;
    for (const run of [...this.current.values()]) {
      if (run.holding) this.letGo(run, this.kinds.get(run)!);
      else run.abort('the run stops campaigning at the heal');
    }
  }

  private next(entry: RecipeClient): void {
    if (this.stopped) return;
    const thinkMs = -Math.log(1 - randomFloat(this.prng)) * this.options.thinkMsMean;
    entry.client.clock.setTimer(thinkMs, () => this.campaign(entry));
  }

  private campaign(entry: RecipeClient): void {
    if (this.stopped) return;
    const o = this.options;
    const target = o.recipes[randomInt(this.prng, 0, o.recipes.length)]!;
    const run = new SimRecipeRun(entry.client, {
      keys: recipeKeys(target.kind, target.name), value: entry.client.id,
      ttlMs: randomInt(this.prng, o.ttlMsMin, o.ttlMsMax + 1),
      clockRateErrorMax: o.clockRateErrorMax, marginMs: o.marginMs,
      watchTimeoutMs: o.watchTimeoutMs, retryDelayMs: o.retryDelayMs, mutants: o.mutants,
    }, this.observer(entry, target));
    this.current.set(entry, run);
    this.kinds.set(run, target.kind);
    this.counts.campaigns++;
    run.start();
  }

  private observer(entry: RecipeClient, target: RecipeTarget): RecipeRunObserver {
    const recipe = `${target.kind}/${target.name}`;
    return {
      granted: (run) => this.registerLease(run),
      elected: (run, action) => {
        this.counts.elected++;
        const leadership = this.checker.began(recipe, entry.client.id, action.fencingToken,
          action.term);
        this.leaderships.set(run, leadership);
        const holdMs = run.options.ttlMs * (0.25 + 1.75 * randomFloat(this.prng));
        entry.client.clock.setTimer(holdMs, () => {
          if (run.holding) this.letGo(run, target.kind);
        });
        this.writeCheck(entry, run, leadership);
      },
      ended: (run, reason) => {
        this.counts.ends[reason]++;
        const leadership = this.leaderships.get(run);
        if (leadership !== undefined) {
          this.counts.holdingEnds[reason]++;
          this.checker.ended(leadership);
          this.leaderships.delete(run);
        }
        if (this.current.get(entry) === run) this.current.delete(entry);
        this.kinds.delete(run);
        this.next(entry);
      },
      stalled: () => {
        this.counts.stallVerdicts++;
      },
    };
  }

  /** The lease checker learns the holder of the run's lease (phase 1's bounds hold for it). */
  private registerLease(run: SimRecipeRun): void {
    const { keeper, client } = run;
    this.leaseChecker.registerHolder(keeper.leaseId!, {
      client: client.id,
      keeping: () => keeper.state === 'keeping',
      holds: () => keeper.holds(),
      pastDeadlineMs: () => client.clock.monotonicMs() - keeper.deadlineMs,
    });
  }

  private letGo(run: SimRecipeRun, kind: RecipeKind): void {
    if (randomChance(this.prng, this.options.releaseRate)) {
      this.counts.released++;
      run.release(kind === 'lock' ? 'unlocked' : 'resigned');
    } else {
      this.counts.abandoned++;
      run.abandon();
    }
  }

  /**
   * While the holder believes it holds: check, then write a few ms later with the token the
   * check saw (no second check), then check again after a random interval.
   */
  private writeCheck(entry: RecipeClient, run: SimRecipeRun, leadership: Leadership): void {
    if (!run.holding) return;
    const clock = entry.client.clock;
    const token = leadership.fencingToken;
    if (!this.stopped && randomChance(this.prng, this.options.freezeBeforeWriteChance)) {
      this.counts.freezesBeforeWrite++;
      entry.host.pause(run.options.ttlMs * (1.2 + 1.3 * randomFloat(this.prng)));
    }
    clock.setTimer(5 * randomFloat(this.prng), () => {
      this.counts.writesSent++;
      this.resources.write(leadership, token);
    });
    const gapMs = -Math.log(1 - randomFloat(this.prng)) * this.options.writeIntervalMsMean;
    clock.setTimer(gapMs, () => this.writeCheck(entry, run, leadership));
  }
}

function noReasons(): Record<RecipeEndReason, number> {
  return { 'lease-ended': 0, 'key-deleted': 0, stalled: 0, released: 0, aborted: 0, failed: 0 };
}
