/**
 * What the election and lock clients do, with the shipped recipes (`client.election(name)
 * .campaign()`, `client.lock()`: the Campaign driven by src/client/recipe-driver.ts, its lease,
 * stall watch and key guard): each, on its own clock, campaigns for one of the run's elections
 * or locks under a fresh lease, and once elected holds for a random time (a quarter of a TTL to
 * two TTLs), writing to the recipe's fenced resource now and then with its fencing token while
 * its `signal` has not aborted; then it resigns (unlocks), or abandons its lease (stops keeping
 * it alive: it still holds until its local deadline), and campaigns again after a pause. A
 * campaign that lost or failed starts over the same way. At the heal every client lets go
 * (resign or abandon; waiters abort their campaign) and starts no more, so every lease ends by
 * the bound counted from the heal.
 *
 * A holding lasts, for the checkers, from the moment the campaign resolved to the moment its
 * `signal` aborted: what a holder's code can know. A new holder first announces its token to
 * the resource and writes only once that was acknowledged. Each write is looked at (the signal),
 * then done a few ms later right after `held()` said true, as docs/elections.md tells holders:
 * a freeze between the look and the write would otherwise send a stale token. Under
 * `--timing-violated` some looks are followed by exactly such a freeze, longer than the TTL
 * (the directed shape of Kleppmann's GC-pause example), which `held()` must see. A holding that
 * was lost is then unlocked (resigned), which must settle at once (held-checker.ts).
 */
import { HoldingEndedError, type Holding } from '../../../client/recipe-driver.js';
import type { RecipeKind } from '../../../core/election/index.js';
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import type { Prng } from '../../prng.js';
import type { FencedResources } from './fenced-resource.js';
import type { HeldChecker } from './held-checker.js';
import type { LeaseChecker } from './lease-checker.js';
import type { SimClient } from './lease-world.js';
import { holderView } from './lease-workload.js';
import type { Leadership, RecipeChecker } from './recipe-checker.js';

/** One election or lock of the run. */
export interface RecipeTarget {
  readonly kind: RecipeKind;
  readonly name: string;
}

/** Why a campaign or a holding ended: the recipe's loss reasons, or aborted, or failed. */
export type RecipeEndReason = 'lease-ended' | 'key-deleted' | 'stalled' | 'released'
  | 'aborted' | 'failed';

export interface RecipeWorkloadOptions {
  readonly recipes: readonly RecipeTarget[];
  /** Leases are granted with a TTL in [ttlMsMin, ttlMsMax]. Unit: ms. */
  readonly ttlMsMin: number;
  readonly ttlMsMax: number;
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
  /** Campaigns that ended, elected or not, by each reason. */
  ends: Record<RecipeEndReason, number>;
  /** Holdings (not campaigns) that ended by each reason. */
  holdingEnds: Record<RecipeEndReason, number>;
  writesSent: number;
  freezesBeforeWrite: number;
}

/** A campaign under way or a holding, of one client. */
interface Run {
  readonly client: SimClient;
  readonly target: RecipeTarget;
  readonly ttlMs: number;
  readonly abort: AbortController;
  holding: Holding | undefined;
  leadership: Leadership | undefined;
  /** The holder let go (resigned, unlocked or abandoned): counted once. */
  lettingGo: boolean;
  /** The holder resigned or unlocked (rather than abandoning its lease). */
  released: boolean;
}

export class RecipeWorkload {
  readonly counts: RecipeWorkloadCounts = {
    campaigns: 0, elected: 0, released: 0, abandoned: 0, ends: noReasons(),
    holdingEnds: noReasons(), writesSent: 0, freezesBeforeWrite: 0,
  };
  private readonly current = new Map<SimClient, Run>();
  private stopped = false;

  constructor(
    private readonly prng: Prng,
    private readonly clients: readonly SimClient[],
    private readonly checker: RecipeChecker,
    private readonly leaseChecker: LeaseChecker,
    private readonly resources: FencedResources,
    private readonly options: RecipeWorkloadOptions,
    private readonly heldChecker: HeldChecker,
  ) {
    // The lease checker learns the holder of every recipe lease as soon as it is granted.
    for (const client of clients) {
      client.onLease((lease) => this.leaseChecker.registerHolder(lease.id,
        holderView(client, lease)));
    }
  }

  start(): void {
    for (const client of this.clients) this.next(client);
  }

  /** The heal: holders let go (resign or abandon), waiters give up, no campaign starts. */
  stopAll(): void {
    this.stopped = true;
    for (const run of [...this.current.values()]) {
      if (run.holding !== undefined) this.letGo(run);
      else run.abort.abort(new Error('the run stops campaigning at the heal'));
    }
  }

  private next(client: SimClient): void {
    if (this.stopped) return;
    const thinkMs = -Math.log(1 - randomFloat(this.prng)) * this.options.thinkMsMean;
    client.host.processClock.setTimer(thinkMs, () => void this.campaign(client));
  }

  private async campaign(client: SimClient): Promise<void> {
    if (this.stopped) return;
    const o = this.options;
    const target = o.recipes[randomInt(this.prng, 0, o.recipes.length)]!;
    const run: Run = { client, target, ttlMs: randomInt(this.prng, o.ttlMsMin, o.ttlMsMax + 1),
      abort: new AbortController(), holding: undefined, leadership: undefined,
      lettingGo: false, released: false };
    this.current.set(client, run);
    this.counts.campaigns++;
    const options = { ttlMs: run.ttlMs, signal: run.abort.signal };
    try {
      run.holding = target.kind === 'election'
        ? await client.client.election(target.name).campaign(client.id, options)
        : await client.client.lock(target.name, { ...options, id: client.id });
    } catch (error) {
      return this.ended(run, reasonOf(error));
    }
    this.elected(run, run.holding);
  }

  private elected(run: Run, holding: Holding): void {
    this.counts.elected++;
    const recipe = `${run.target.kind}/${run.target.name}`;
    run.leadership = this.checker.began(recipe, run.client.id, holding.fencingToken,
      holding.term);
    const onEnd = (): void => this.ended(run, reasonOf(holding.signal.reason));
    if (holding.signal.aborted) return onEnd(); // ended before the holder could act on it
    holding.signal.addEventListener('abort', onEnd, { once: true });
    const holdMs = run.ttlMs * (0.25 + 1.75 * randomFloat(this.prng));
    const clock = run.client.host.processClock;
    clock.setTimer(holdMs, () => this.letGo(run));
    // The announce step: register the token with the resource, write only once acknowledged.
    this.resources.announce(run.leadership, holding.fencingToken, (decision) => {
      clock.setTimer(0, () => {
        if (decision.kind === 'stale') return; // superseded already: nothing to write
        this.heldChecker.announced();
        this.writeCheck(run, holding);
      });
    });
  }

  /** The campaign or holding is over, by `reason`; the client campaigns again later. */
  private ended(run: Run, reason: RecipeEndReason): void {
    this.counts.ends[reason]++;
    if (run.leadership !== undefined) {
      this.counts.holdingEnds[reason]++;
      this.checker.ended(run.leadership);
      this.heldChecker.ended(run.leadership, run.holding?.signal.reason, run.released);
      if (reason !== 'released') this.unlockAfterLoss(run, run.leadership);
    }
    if (this.current.get(run.client) === run) this.current.delete(run.client);
    this.next(run.client);
  }

  private letGo(run: Run): void {
    const holding = run.holding;
    if (holding === undefined || holding.signal.aborted || run.lettingGo) return;
    run.lettingGo = true;
    if (randomChance(this.prng, this.options.releaseRate)) {
      this.counts.released++;
      run.released = true;
      release(holding).catch(() => undefined); // a failed delete: the lease ends it anyway
    } else {
      this.counts.abandoned++;
      run.client.leases.get(holding.leaseId)?.stopKeepAlive();
    }
  }

  /** After a loss, an unlock (resign) must settle at once: timed on the holder's clock. */
  private unlockAfterLoss(run: Run, leadership: Leadership): void {
    const holding = run.holding;
    if (holding === undefined) return;
    const clock = run.client.host.processClock;
    const calledAtMs = clock.monotonicMs();
    const settled = (): void => this.heldChecker.unlockedAfterLoss(leadership,
      clock.monotonicMs() - calledAtMs);
    release(holding).then(settled, settled);
  }

  /**
   * While the holding's signal has not aborted: look, then a few ms later ask `held()` and
   * write with the token only if it said true, then look again after a random interval.
   */
  private writeCheck(run: Run, holding: Holding): void {
    if (holding.signal.aborted) return;
    const { client, leadership } = run;
    const clock = client.host.processClock;
    const token = holding.fencingToken;
    if (!this.stopped && randomChance(this.prng, this.options.freezeBeforeWriteChance)) {
      this.counts.freezesBeforeWrite++;
      client.host.pause(run.ttlMs * (1.2 + 1.3 * randomFloat(this.prng)));
    }
    clock.setTimer(5 * randomFloat(this.prng), () => {
      const lease = client.leases.get(holding.leaseId);
      const view = { leaseId: holding.leaseId,
        pastDeadlineMs: lease === undefined ? -Infinity : clock.monotonicMs() - lease.expiresAtMs };
      const held = holding.held();
      if (held) {
        this.counts.writesSent++;
        this.resources.write(leadership!, token);
      }
      this.heldChecker.checked(leadership!, view, held, held);
    });
    const gapMs = -Math.log(1 - randomFloat(this.prng)) * this.options.writeIntervalMsMean;
    clock.setTimer(gapMs, () => this.writeCheck(run, holding));
  }
}

/** Resign or unlock: the one the holding has. */
function release(holding: Holding): Promise<void> {
  const h = holding as Holding & { resign?: () => Promise<void>; unlock?: () => Promise<void> };
  return h.resign?.() ?? h.unlock!();
}

/** Why a campaign rejected, or a holding's signal aborted. */
function reasonOf(error: unknown): RecipeEndReason {
  if (error instanceof HoldingEndedError) return error.lossReason;
  if (error instanceof Error && error.name === 'AbortError') return 'aborted';
  return 'failed';
}

function noReasons(): Record<RecipeEndReason, number> {
  return { 'lease-ended': 0, 'key-deleted': 0, stalled: 0, released: 0, aborted: 0, failed: 0 };
}
