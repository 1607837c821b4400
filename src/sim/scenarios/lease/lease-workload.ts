/**
 * What the lease clients do, with the shipped client's leases (`client.leases.grant()`, the
 * Lease's keep-alives over the lease stream and its local deadline): each, on its own clock,
 * grants a lease (a TTL drawn between the minimum and twice it), attaches one or two keys to it,
 * keeps it alive every TTL/3 for a while (half a TTL to three TTLs), then either abandons it
 * (`stopKeepAlive()`: as a crashed or wedged holder, it counts on the lease until its local
 * deadline) or revokes it, and starts over. At the heal every client ends its lease the same
 * way and grants no more, so every lease's end is checked against the bound counted from the
 * heal.
 */
import type { Lease } from '../../../client/lease.js';
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import { CoordError } from '../../../errors.js';
import type { Prng } from '../../prng.js';
import type { HolderView, LeaseChecker } from './lease-checker.js';
import type { SimClient } from './lease-world.js';

export interface LeaseWorkloadOptions {
  /** Unit: ms. */
  readonly ttlMsMin: number;
  readonly ttlMsMax: number;
  /** Mean pause between two leases of a client. Unit: ms (client clock). */
  readonly thinkMsMean: number;
  /** Share of leases revoked by their holder (the rest are abandoned). Unit: ratio. */
  readonly revokeRate: number;
}

export interface WorkloadCounts {
  grantsOk: number;
  grantsFailed: number;
  grantsUnknown: number;
  abandoned: number;
  revoked: number;
  /** Holders whose lease's signal aborted while they kept it alive. */
  lost: number;
  putsOk: number;
}

/** One lease a client holds: the shipped Lease and whether the holder still wants it. */
interface Holding {
  readonly client: SimClient;
  readonly lease: Lease;
  done: boolean;
}

export class LeaseWorkload {
  readonly counts: WorkloadCounts = {
    grantsOk: 0, grantsFailed: 0, grantsUnknown: 0, abandoned: 0, revoked: 0, lost: 0,
    putsOk: 0,
  };
  private readonly current = new Map<SimClient, Holding>();
  private stopped = false;

  constructor(
    private readonly prng: Prng,
    private readonly clients: readonly SimClient[],
    private readonly checker: LeaseChecker,
    private readonly options: LeaseWorkloadOptions,
  ) {}

  start(): void {
    for (const client of this.clients) this.next(client);
  }

  /** The heal: every held lease is abandoned or revoked now, and no new one is granted. */
  stopAll(): void {
    this.stopped = true;
    for (const holding of [...this.current.values()]) this.end(holding);
  }

  private next(client: SimClient): void {
    if (this.stopped) return;
    const thinkMs = -Math.log(1 - randomFloat(this.prng)) * this.options.thinkMsMean;
    client.host.processClock.setTimer(thinkMs, () => void this.grant(client));
  }

  private async grant(client: SimClient): Promise<void> {
    if (this.stopped) return;
    const { ttlMsMin, ttlMsMax } = this.options;
    const ttlMs = randomInt(this.prng, ttlMsMin, ttlMsMax + 1);
    let lease: Lease;
    try {
      lease = await client.client.leases.grant({ ttlMs });
    } catch (error) {
      if (error instanceof CoordError && error.outcome === 'unknown') this.counts.grantsUnknown++;
      else this.counts.grantsFailed++;
      return this.next(client);
    }
    this.counts.grantsOk++;
    const holding: Holding = { client, lease, done: false };
    this.checker.registerHolder(lease.id, holderView(client, lease));
    this.current.set(client, holding);
    lease.signal.addEventListener('abort', () => {
      if (holding.done) return;
      this.counts.lost++;
      this.finished(holding);
    }, { once: true });
    if (this.stopped) return this.end(holding);
    void this.attachKeys(holding, 1 + randomInt(this.prng, 0, 2));
    const holdMs = ttlMs * (0.5 + 2.5 * randomFloat(this.prng));
    client.host.processClock.setTimer(holdMs, () => this.end(holding));
  }

  /** Puts `count` keys with the lease, one after the other, while it is kept. */
  private async attachKeys(holding: Holding, count: number): Promise<void> {
    const { lease, client } = holding;
    for (let k = count; k > 0 && !holding.done && !lease.signal.aborted; k--) {
      try {
        await client.client.kv.put(`${client.id}/lease-${lease.id}/k${k}`, 'up',
          { lease: lease.id });
        this.counts.putsOk++;
      } catch {
        // Not attached (or maybe): the lease checker follows what the members applied.
      }
    }
  }

  /** The holder is done with its lease: revoke it, or walk away from it. */
  private end(holding: Holding): void {
    if (holding.done || holding.lease.signal.aborted) return;
    if (randomChance(this.prng, this.options.revokeRate)) {
      this.counts.revoked++;
      holding.done = true;
      holding.lease.revoke().catch(() => undefined); // best effort: it ends by its TTL anyway
    } else {
      this.counts.abandoned++;
      holding.done = true;
      holding.lease.stopKeepAlive();
    }
    this.finished(holding);
  }

  private finished(holding: Holding): void {
    holding.done = true;
    if (this.current.get(holding.client) !== holding) return;
    this.current.delete(holding.client);
    this.next(holding.client);
  }
}

/** The checker's view of a holder: what its Lease says on its own clock. */
export function holderView(client: SimClient, lease: Lease): HolderView {
  const clock = client.host.processClock;
  return {
    client: client.id,
    keeping: () => lease.keepingAlive,
    holds: () => !lease.signal.aborted && clock.monotonicMs() < lease.expiresAtMs,
    pastDeadlineMs: () => clock.monotonicMs() - lease.expiresAtMs,
  };
}
