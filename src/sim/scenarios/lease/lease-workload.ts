/**
 * What the simulated clients do with leases: each, on its own clock, grants a lease (a TTL
 * drawn between the minimum and twice it), attaches one or two keys to it, keeps it alive
 * every TTL/3 for a while (half a TTL to three TTLs), then either abandons it (stops keeping it
 * alive, as a crashed or wedged holder would) or revokes it, and starts over. At the heal
 * every client ends its lease the same way and grants no more, so every lease's end is
 * checked against the bound counted from the heal.
 */
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import type { Prng } from '../../prng.js';
import type { LeaseChecker } from './lease-checker.js';
import type { SimCoreClient } from './sim-core-client.js';
import { SimLeaseKeeper } from './sim-lease-keeper.js';

export interface LeaseWorkloadOptions {
  /** Unit: ms. */
  readonly ttlMsMin: number;
  readonly ttlMsMax: number;
  /** ρ and the holder's margin, as the client library takes them. */
  readonly clockRateErrorMax: number;
  readonly marginMs: number;
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
  /** Holders that learned they lost their lease while keeping it alive. */
  lost: number;
  putsOk: number;
  /** Keep-alives acknowledged to holders. */
  keepAlivesAcked: number;
}

export class LeaseWorkload {
  readonly counts: WorkloadCounts = {
    grantsOk: 0, grantsFailed: 0, grantsUnknown: 0, abandoned: 0, revoked: 0, lost: 0,
    putsOk: 0, keepAlivesAcked: 0,
  };
  private readonly current = new Map<SimCoreClient, SimLeaseKeeper>();
  private stopped = false;

  constructor(
    private readonly prng: Prng,
    private readonly clients: readonly SimCoreClient[],
    private readonly checker: LeaseChecker,
    private readonly options: LeaseWorkloadOptions,
  ) {}

  start(): void {
    for (const client of this.clients) this.next(client);
  }

  /** The heal: every held lease is abandoned or revoked now, and no new one is granted. */
  stopAll(): void {
    this.stopped = true;
    for (const keeper of [...this.current.values()]) this.end(keeper);
  }

  private next(client: SimCoreClient): void {
    if (this.stopped) return;
    const thinkMs = -Math.log(1 - randomFloat(this.prng)) * this.options.thinkMsMean;
    client.clock.setTimer(thinkMs, () => this.grant(client));
  }

  private grant(client: SimCoreClient): void {
    if (this.stopped) return;
    const { ttlMsMin, ttlMsMax } = this.options;
    const ttlMs = randomInt(this.prng, ttlMsMin, ttlMsMax + 1);
    const keeper = new SimLeaseKeeper(client, {
      ttlMs, clockRateErrorMax: this.options.clockRateErrorMax, marginMs: this.options.marginMs,
      retryDelayMsMax: 100,
    }, () => {
      this.counts.lost++;
      this.finished(keeper);
    });
    this.current.set(client, keeper);
    keeper.grant((answer) => {
      if (answer.kind !== 'ok') {
        if (answer.kind === 'failed') this.counts.grantsFailed++;
        else this.counts.grantsUnknown++;
        return this.finished(keeper);
      }
      this.counts.grantsOk++;
      this.checker.registerHolder(answer.value.leaseId, {
        client: client.id,
        keeping: () => keeper.state === 'keeping',
        holds: () => keeper.holds(),
        pastDeadlineMs: () => client.clock.monotonicMs() - keeper.deadlineMs,
      });
      if (this.stopped) return this.end(keeper);
      this.attachKeys(keeper, answer.value.leaseId, 1 + randomInt(this.prng, 0, 2));
      const holdMs = ttlMs * (0.5 + 2.5 * randomFloat(this.prng));
      client.clock.setTimer(holdMs, () => this.end(keeper));
    });
  }

  /** Puts `count` keys with the lease, one after the other. */
  private attachKeys(keeper: SimLeaseKeeper, leaseId: number, count: number): void {
    if (count === 0 || keeper.state !== 'keeping') return;
    const key = `${keeper.client.id}/lease-${leaseId}/k${count}`;
    keeper.client.put(key, 'up', leaseId, (answer) => {
      if (answer.kind === 'ok') this.counts.putsOk++;
      this.attachKeys(keeper, leaseId, count - 1);
    });
  }

  /** The holder is done with its lease: revoke it, or walk away from it. */
  private end(keeper: SimLeaseKeeper): void {
    if (keeper.state !== 'keeping') return;
    if (randomChance(this.prng, this.options.revokeRate)) {
      this.counts.revoked++;
      keeper.revoke(() => undefined);
    } else {
      this.counts.abandoned++;
      keeper.abandon();
    }
    this.finished(keeper);
  }

  private finished(keeper: SimLeaseKeeper): void {
    if (this.current.get(keeper.client) !== keeper) return;
    this.current.delete(keeper.client);
    this.counts.keepAlivesAcked += keeper.keepAlivesAcked;
    this.next(keeper.client);
  }
}
