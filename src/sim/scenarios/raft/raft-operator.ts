/**
 * The raft scenario's operator nemesis: what operators do to a running cluster, played at
 * random moments of the safety phase on top of the fault nemesis (src/sim/nemesis.ts).
 *
 * - `--membership`: single-server membership changes at the leader (add a learner from the
 *   spare nodes, promote a learner, remove a voter or learner, the leader included); some right
 *   after a leader is elected (before its first commit: the rule the mutant
 *   configChangeBeforeTermCommit breaks), some followed within milliseconds by a crash of the
 *   leader (so an uncommitted change meets a new leader); and leadership transfers, to a named
 *   or the most up-to-date voter.
 * - `--snapshots`: members taken down long enough that the leader compacts past their log, so
 *   they come back through InstallSnapshot.
 */
import type { NodeId } from '../../../core/ids.js';
import type { MembershipChange, RaftMessage } from '../../../core/raft/index.js';
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import type { Prng } from '../../prng.js';
import type { Scheduler } from '../../scheduler.js';
import type { SimHost } from '../../sim-host.js';
import type { RaftProcess } from './raft-scenario.js';

export interface RaftOperatorOptions {
  readonly membership: boolean;
  readonly snapshots: boolean;
  /** No act starts at or after this instant (the end of the safety phase). Unit: ms. */
  readonly endMs: number;
}

export interface RaftOperatorCounts {
  changesProposed: number;
  changesApplied: number;
  transfers: number;
  lags: number;
}

type Hosts = ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>;

export class RaftOperator {
  readonly counts: RaftOperatorCounts = { changesProposed: 0, changesApplied: 0, transfers: 0, lags: 0 };
  /** The leader died right after a change: the operator retries at the next leader at once. */
  private retryAtNextLeader = false;

  constructor(
    private readonly prng: Prng,
    private readonly scheduler: Scheduler,
    private readonly hosts: Hosts,
    private readonly options: RaftOperatorOptions,
  ) {}

  start(): void {
    if (this.options.membership) {
      this.every(150, 800, () => this.changeMembership(this.leader()));
      this.every(800, 3_000, () => this.transfer());
    }
    if (this.options.snapshots) this.every(800, 2_500, () => this.lag());
  }

  /**
   * A node became leader: it is asked for a change at once (before its first commit) when the
   * last leader died right after a change (an operator retrying), and sometimes otherwise.
   */
  onLeaderElected(id: NodeId): void {
    if (!this.options.membership || this.scheduler.nowMs >= this.options.endMs) return;
    const retry = this.retryAtNextLeader;
    this.retryAtNextLeader = false;
    if (!retry && !randomChance(this.prng, 0.3)) return;
    this.scheduler.schedule(randomFloat(this.prng), () => this.changeMembership(id, true));
  }

  /** Runs `act` at exponential gaps of mean drawn in [minMs, maxMs) until the end. */
  private every(minMs: number, maxMs: number, act: () => void): void {
    const meanMs = minMs + randomFloat(this.prng) * (maxMs - minMs);
    const next = (): void => {
      const gapMs = -Math.log(1 - randomFloat(this.prng)) * meanMs;
      if (this.scheduler.nowMs + gapMs >= this.options.endMs) return;
      this.scheduler.schedule(gapMs, () => {
        act();
        next();
      });
    };
    next();
  }

  private leader(): NodeId | undefined {
    let best: NodeId | undefined;
    let bestTerm = -1;
    for (const [id, host] of this.hosts) {
      const status = host.process?.runtime.status();
      if (status?.role === 'leader' && status.term > bestTerm) {
        best = id;
        bestTerm = status.term;
      }
    }
    return best;
  }

  private changeMembership(leader: NodeId | undefined, fresh = false): void {
    const host = leader === undefined ? undefined : this.hosts.get(leader);
    const process = host?.process;
    if (host === undefined || process === undefined) return;
    const change = this.drawChange(process.runtime.status().membership, fresh);
    if (change === undefined) return;
    this.counts.changesProposed++;
    host.submit((p) => p.runtime.changeMembership(change, (outcome) => {
      if (outcome.kind === 'applied') this.counts.changesApplied++;
    }));
    // Sometimes the leader dies while its change is still uncommitted.
    if (randomChance(this.prng, 0.3)) {
      this.scheduler.schedule(0.02 + 0.8 * randomFloat(this.prng), () => {
        if (this.scheduler.nowMs >= this.options.endMs) return;
        this.retryAtNextLeader = true;
        host.crash();
        this.scheduler.schedule(100 + 900 * randomFloat(this.prng), () => {
          if (!host.isUp) host.restart();
        });
      });
    }
  }

  /**
   * A change that applies to `membership`, keeping 2 to 6 voters (even counts included: they
   * are where two single-server changes can have disjoint majorities); `fresh`: for a new
   * leader, which knows no learner's progress yet and would refuse a promotion.
   */
  private drawChange(membership: { voters: readonly NodeId[]; learners: readonly NodeId[] },
    fresh: boolean): MembershipChange | undefined {
    const { voters, learners } = membership;
    const others = [...this.hosts.keys()].filter((id) => !voters.includes(id) && !learners.includes(id));
    const pick = (list: readonly NodeId[]): NodeId => list[randomInt(this.prng, 0, list.length)]!;
    const grow: MembershipChange[] = [];
    if (learners.length > 0 && !fresh) grow.push({ kind: 'promote', node: pick(learners) });
    if (others.length > 0) grow.push({ kind: 'add-learner', node: pick(others) });
    const shrink: MembershipChange[] = [];
    if (voters.length > 2) shrink.push({ kind: 'remove', node: pick(voters) });
    if (learners.length > 0 && randomChance(this.prng, 0.2)) {
      shrink.push({ kind: 'remove', node: pick(learners) });
    }
    const growFirst = voters.length <= 3 || (voters.length < 6 && randomChance(this.prng, 0.5));
    const choices = growFirst && grow.length > 0 ? grow : shrink.length > 0 ? shrink : grow;
    return choices.length === 0 ? undefined : choices[randomInt(this.prng, 0, choices.length)];
  }

  private transfer(): void {
    const leader = this.leader();
    const host = leader === undefined ? undefined : this.hosts.get(leader);
    const process = host?.process;
    if (host === undefined || process === undefined) return;
    const voters = process.runtime.status().membership.voters.filter((v) => v !== leader);
    const target = voters.length > 0 && randomChance(this.prng, 0.5)
      ? voters[randomInt(this.prng, 0, voters.length)]
      : undefined;
    this.counts.transfers++;
    host.submit((p) => p.runtime.transferLeadership(target, () => undefined));
  }

  /** A follower goes down long enough that the leader snapshots past its log. */
  private lag(): void {
    const leader = this.leader();
    const members = leader === undefined ? [] : (() => {
      const m = this.hosts.get(leader)!.process!.runtime.status().membership;
      return [...m.voters, ...m.learners].filter((id) => id !== leader && this.hosts.get(id)!.isUp);
    })();
    if (members.length === 0) return;
    const host = this.hosts.get(members[randomInt(this.prng, 0, members.length)]!)!;
    this.counts.lags++;
    host.crash();
    this.scheduler.schedule(500 + 1_500 * randomFloat(this.prng), () => {
      if (!host.isUp) host.restart();
    });
  }
}
