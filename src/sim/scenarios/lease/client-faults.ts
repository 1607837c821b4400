/**
 * Faults of the election and lock clients' machines (the nemesis only touches members): now and
 * then a client is frozen (a GC pause, SIGSTOP) or cut off the network, during the safety phase.
 *
 * Within the timing assumptions a freeze lasts at most the lease margin as the client's clock
 * shows it (the stall threshold, so no stall verdict comes within the assumptions; a longer
 * stall may outlast the holder's lease with no timer able to say so, which is what fencing is
 * for), and one never starts while the client is still frozen. Under `--timing-violated`, a
 * share of them last up to several TTLs. Cuts are network faults, not timing violations: they
 * last up to twice the longest TTL, so leases run out behind a cut client's back in both modes.
 */
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import type { Prng } from '../../prng.js';
import type { Scheduler } from '../../scheduler.js';
import type { SimClientHost } from './client-host.js';

export interface ClientFaultPlan {
  /** Mean time between two freezes (of any client). Unit: ms (real). */
  readonly pauseIntervalMsMean: number;
  /** A freeze lasts up to this. Unit: ms (real). */
  readonly pauseMsMax: number;
  /** Share of freezes that last up to `longPauseMsMax` instead (0 within the assumptions). */
  readonly longPauseShare: number;
  /** Unit: ms (real). */
  readonly longPauseMsMax: number;
  /** Mean time between two cuts (of any client). Unit: ms (real). */
  readonly cutIntervalMsMean: number;
  /** A cut lasts up to this. Unit: ms (real). */
  readonly cutMsMax: number;
}

export class ClientFaults {
  constructor(
    private readonly prng: Prng,
    private readonly scheduler: Scheduler,
    private readonly hosts: readonly SimClientHost[],
    private readonly plan: ClientFaultPlan,
  ) {}

  /** Injects faults until `endMs`; each ends by then. */
  start(endMs: number): void {
    if (this.hosts.length === 0) return;
    const { plan } = this;
    this.every(plan.pauseIntervalMsMean, endMs, (host, leftMs) => {
      const maxMs = randomChance(this.prng, plan.longPauseShare) ? plan.longPauseMsMax
        : plan.pauseMsMax;
      if (!host.isPaused) host.pause(Math.min(leftMs, randomFloat(this.prng) * maxMs));
    });
    this.every(plan.cutIntervalMsMean, endMs, (host, leftMs) => {
      if (!host.isCut) host.cut(Math.min(leftMs, randomFloat(this.prng) * plan.cutMsMax));
    });
  }

  /** Every client runs and is connected again. */
  healAll(): void {
    for (const host of this.hosts) {
      host.reconnect();
      host.resume();
    }
  }

  private every(meanMs: number, endMs: number,
    inject: (host: SimClientHost, leftMs: number) => void): void {
    if (!Number.isFinite(meanMs)) return;
    const next = (): void => {
      const gapMs = -Math.log(1 - randomFloat(this.prng)) * meanMs;
      if (this.scheduler.nowMs + gapMs >= endMs) return;
      this.scheduler.schedule(gapMs, () => {
        const host = this.hosts[randomInt(this.prng, 0, this.hosts.length)]!;
        inject(host, endMs - this.scheduler.nowMs);
        next();
      });
    };
    next();
  }
}
