/**
 * A miniature consistent core for lease-tracker tests: N replicas, each a real KvStore and a
 * real LeaseTracker on its own SimClock (with drift), over a model of Raft's log instead of
 * Raft itself. The model keeps exactly the properties the tracker relies on:
 * - a leader's proposal reaches followers after commitDelayMs / 2 and commits after
 *   commitDelayMs while the leader is in office; the leader applies at once, followers learn the
 *   commit with the next heartbeat (heartbeatMs later) if the leader is still in office;
 * - a confirmation (ReadIndex) takes commitDelayMs and succeeds only for the leader in office
 *   once it committed an entry of its term (until then it waits), and it then applies
 *   everything committed;
 * - on a leader change, each uncommitted entry the new leader received is kept (committed with
 *   the new leader's first commit) or dropped, as the test says; the new leader learns commits
 *   it had not applied only then (commitDelayMs after taking office, or `firstCommitMs`);
 * - a deposed leader may go on believing it leads (`staleMs`), cut off from the others: its
 *   proposals never commit, its confirmations fail, and it hears nothing until it steps down;
 *   then it catches up, receiving what it missed late (`lateLeaders` counts elections of a
 *   member holding an entry it received more than `lateMs` after it was written).
 * Not a test file itself.
 */
import {
  encodeValidKvCommand, KvStore, KV_STORE_DEFAULTS, type KvApplyResult, type KvCommand,
  type KvLeaseSystemCommand,
} from '../../../src/core/kv/index.js';
import {
  LeaseTracker, type LeaseAnswer, type LeaseConfig,
} from '../../../src/runtime/lease/index.js';
import type { LeaseProposalOutcome } from '../../../src/runtime/lease/index.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimClock } from '../../../src/sim/sim-clock.js';

export interface MiniClusterOptions {
  readonly nodes?: number;
  readonly config: LeaseConfig;
  /** Per-node clock drift (rate error); default all 0. */
  readonly drifts?: readonly number[];
  /** Default: 4 ms. */
  readonly commitDelayMs?: number;
  /** Default: 10 ms. */
  readonly heartbeatMs?: number;
}

interface LogEntry {
  readonly index: number;
  readonly term: number;
  readonly command: KvCommand;
  readonly proposer: number;
  readonly done: ((outcome: LeaseProposalOutcome) => void) | undefined;
  /** Per node: its clock when the entry reached it. */
  readonly receivedAtMs: Map<number, number>;
  /** Nodes that received it only when catching up. */
  readonly late: Set<number>;
}

export interface MiniNode {
  readonly index: number;
  readonly clock: SimClock;
  readonly store: KvStore;
  readonly tracker: LeaseTracker;
  applied: number;
}

/** Every proposal made, by whom, in which term, and when (real time). */
export interface ProposalRecord {
  readonly node: number;
  readonly term: number;
  readonly atMs: number;
  readonly command: KvLeaseSystemCommand;
}

export class MiniCluster {
  readonly scheduler = new Scheduler();
  readonly nodes: MiniNode[] = [];
  readonly proposals: ProposalRecord[] = [];
  /** Every leadership confirmation asked for: by which node, and when (real time). */
  readonly confirmations: { readonly node: number; readonly atMs: number }[] = [];
  /** Real times at which a leader took office. */
  readonly promotionsAtMs: number[] = [];
  /** Elections won by a member that received some entry late (it had been cut off). */
  lateLeaders = 0;
  /** Real time at which each lease ended (its revoke or expiry committed). */
  readonly endedAtMs = new Map<number, number>();
  private log: LogEntry[] = [];
  private commitIndex = 0;
  private leaderIndex: number | undefined;
  private termValue = 0;
  private readonly commitDelayMs: number;
  private readonly heartbeatMs: number;
  private sequence = 0;
  /** Deposed leaders that do not know yet: cut off from everyone. */
  private readonly isolated = new Set<number>();
  /** The term whose leader has made its first commit (a new leader's whole log is then). */
  private committedTerm = 0;

  constructor(options: MiniClusterOptions) {
    this.commitDelayMs = options.commitDelayMs ?? 4;
    this.heartbeatMs = options.heartbeatMs ?? 10;
    for (let i = 0; i < (options.nodes ?? 3); i++) {
      const clock = new SimClock(this.scheduler, { driftRate: options.drifts?.[i] ?? 0,
        monotonicOffsetMs: 1000 * (i + 1), wallOffsetMs: 0 });
      const store = new KvStore(KV_STORE_DEFAULTS);
      const node: MiniNode = { index: i, clock, store, applied: 0,
        tracker: new LeaseTracker(options.config, {
          clock, timer: clock, leases: store,
          propose: (command, done) => this.propose(i, command, done),
          confirmLeadership: (done) => {
            this.confirmations.push({ node: i, atMs: this.nowMs });
            this.confirm(i, done);
          },
        }) };
      this.nodes.push(node);
    }
  }

  get nowMs(): number {
    return this.scheduler.nowMs;
  }

  get leader(): MiniNode | undefined {
    return this.leaderIndex === undefined ? undefined : this.nodes[this.leaderIndex];
  }

  get term(): number {
    return this.termValue;
  }

  /** A deposed leader that does not know yet (it could not win an election either). */
  isIsolated(i: number): boolean {
    return this.isolated.has(i);
  }

  node(i: number): MiniNode {
    return this.nodes[i] as MiniNode;
  }

  /** Node `i` takes office in a new term now (the first election). */
  elect(i: number): void {
    this.termValue += 1;
    this.leaderIndex = i;
    this.promotionsAtMs.push(this.nowMs);
    this.node(i).tracker.becomeLeader(this.termValue);
    this.scheduler.schedule(this.commitDelayMs, () => this.commitAll(i, this.termValue));
  }

  /**
   * The leader leaves office now (it learns so after `staleMs`); node `next` takes office
   * `gapMs` later. `keep(index)` decides which uncommitted entries survive.
   */
  changeLeader(next: number, gapMs: number, options: { staleMs?: number;
    keep?: (entryIndex: number) => boolean; firstCommitMs?: number } = {}): void {
    const old = this.leaderIndex;
    this.leaderIndex = undefined;
    if (old !== undefined) {
      const oldTerm = this.termValue;
      const stepDown = (): void => {
        this.isolated.delete(old);
        this.catchUp(old);
        // Only the office it left: it may lead again, in a later term, by then.
        if (this.node(old).tracker.leaderTerm === oldTerm) this.node(old).tracker.becomeFollower();
      };
      if ((options.staleMs ?? 0) > 0) {
        this.isolated.add(old);
        this.scheduler.schedule(options.staleMs ?? 0, stepDown);
      } else stepDown();
    }
    const keep = options.keep ?? (() => true);
    const kept: LogEntry[] = [];
    for (const entry of this.log) {
      // Kept: committed, or received by the new leader with every entry before it kept.
      if (entry.index <= this.commitIndex || (entry.receivedAtMs.has(next) && keep(entry.index)
        && kept.length === entry.index - 1)) kept.push(entry);
      else entry.done?.({ kind: 'failed', reason: 'overwritten by a new leader' });
    }
    this.log = kept;
    this.scheduler.schedule(gapMs, () => {
      this.termValue += 1;
      this.leaderIndex = next;
      this.promotionsAtMs.push(this.nowMs);
      if (this.log.some((e) => e.late.has(next))) this.lateLeaders += 1;
      const term = this.termValue;
      this.node(next).tracker.becomeLeader(term);
      this.scheduler.schedule(options.firstCommitMs ?? this.commitDelayMs,
        () => this.commitAll(next, term));
    });
  }

  /** Runs virtual time for `ms`. */
  run(ms: number): void {
    this.scheduler.runUntil(this.scheduler.nowMs + ms);
  }

  /** A client command through the leader in office now, run until it settles (at most 1 s). */
  client(body: Record<string, unknown>): KvApplyResult | undefined {
    const leader = this.leaderIndex;
    if (leader === undefined) return undefined;
    this.sequence += 1;
    const command = { ...body, clientId: 'client', sequence: this.sequence,
      nowMs: this.node(leader).clock.wallMs() } as KvCommand;
    let result: KvApplyResult | undefined;
    let settled = false;
    this.append(leader, command, (outcome) => {
      settled = true;
      if (outcome.kind === 'applied') result = outcome.result;
    });
    this.scheduler.runUntil(this.nowMs + 1000, () => settled);
    return result;
  }

  grant(ttlMs: number): number {
    const result = this.client({ kind: 'lease-grant', ttlMs });
    if (result?.kind !== 'lease-grant') throw new Error(`grant failed: ${JSON.stringify(result)}`);
    return result.leaseId;
  }

  /** A keep-alive to node `i` (default: the leader in office); the answer comes later. */
  keepAlive(leaseId: number, i = this.leaderIndex): { answer: LeaseAnswer | undefined } {
    const box: { answer: LeaseAnswer | undefined } = { answer: undefined };
    if (i === undefined) {
      box.answer = { kind: 'not-leader' };
      return box;
    }
    this.node(i).tracker.keepAlive(leaseId, (answer) => {
      box.answer = answer;
    });
    return box;
  }

  private propose(i: number, command: KvLeaseSystemCommand,
    done: (outcome: LeaseProposalOutcome) => void): void {
    this.proposals.push({ node: i, term: this.node(i).tracker.leaderTerm ?? -1,
      atMs: this.nowMs, command });
    const encoded = encodeValidKvCommand(command, KV_STORE_DEFAULTS);
    if (encoded.kind !== 'ok') { // as the consistent core does: nothing invalid is proposed
      return done({ kind: 'failed', reason: JSON.stringify(encoded.problems) });
    }
    if (this.leaderIndex !== i) {
      // A deposed leader's entry goes nowhere; it learns when it steps down.
      this.scheduler.schedule(this.commitDelayMs, () => done({ kind: 'unknown',
        reason: 'deposed' }));
      return;
    }
    this.append(i, command, done);
  }

  private append(i: number, command: KvCommand,
    done: (outcome: LeaseProposalOutcome) => void): void {
    const entry: LogEntry = { index: this.log.length + 1, term: this.termValue, command,
      proposer: i, done, receivedAtMs: new Map([[i, this.node(i).clock.monotonicMs()]]),
      late: new Set() };
    this.log.push(entry);
    this.scheduler.schedule(this.commitDelayMs / 2, () => {
      if (this.log[entry.index - 1] !== entry) return;
      for (const node of this.nodes) {
        if (!entry.receivedAtMs.has(node.index) && !this.isolated.has(node.index)) {
          entry.receivedAtMs.set(node.index, node.clock.monotonicMs());
        }
      }
    });
    this.scheduler.schedule(this.commitDelayMs, () => {
      // Before the leader's first commit its entries wait for it (commitAll commits them).
      if (this.leaderIndex === i && this.termValue === entry.term
        && this.committedTerm === entry.term
        && this.log[entry.index - 1] === entry) this.commit(i, entry.index);
    });
  }

  /** A member back in touch gets what it missed now, and learns the commit index. */
  private catchUp(i: number): void {
    const node = this.node(i);
    for (const entry of this.log) {
      if (entry.receivedAtMs.has(i)) continue;
      entry.receivedAtMs.set(i, node.clock.monotonicMs());
      entry.late.add(i);
    }
    this.applyUpTo(node, this.commitIndex);
  }

  /** A new leader's first commit: everything in its log (its no-op makes it so). */
  private commitAll(i: number, term: number): void {
    if (this.leaderIndex !== i || this.termValue !== term) return;
    this.committedTerm = term;
    this.commit(i, this.log.length);
  }

  private commit(leader: number, index: number): void {
    this.commitIndex = Math.max(this.commitIndex, index);
    this.applyUpTo(this.node(leader), index);
    const term = this.termValue;
    this.scheduler.schedule(this.heartbeatMs, () => {
      if (this.leaderIndex !== leader || this.termValue !== term) return;
      for (const node of this.nodes) {
        if (!this.isolated.has(node.index)) this.applyUpTo(node, index);
      }
    });
  }

  private confirm(i: number, done: (confirmed: boolean) => void): void {
    const term = this.termValue;
    this.scheduler.schedule(this.commitDelayMs, () => {
      const ok = this.leaderIndex === i && this.termValue === term;
      if (ok && this.committedTerm !== term) return this.confirm(i, done); // Raft §6.4 step 1
      if (ok) this.applyUpTo(this.node(i), this.commitIndex);
      done(ok);
    });
  }

  private applyUpTo(node: MiniNode, index: number): void {
    while (node.applied < Math.min(index, this.commitIndex)) {
      const entry = this.log[node.applied] as LogEntry;
      node.applied = entry.index;
      const result = node.store.apply(entry.index, entry.command);
      node.tracker.onApplied(result, entry.receivedAtMs.get(node.index));
      if (result.kind === 'lease-revoke' || result.kind === 'lease-expire') {
        const ended = result.kind === 'lease-revoke' ? [result.leaseId] : result.expired;
        for (const id of ended) if (!this.endedAtMs.has(id)) this.endedAtMs.set(id, this.nowMs);
      }
      if (entry.proposer === node.index) entry.done?.({ kind: 'applied', result });
    }
  }
}
