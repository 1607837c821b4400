/**
 * The gossip scenario's checkers and measurements, fed by the world's membership events:
 *
 * - no-false-dead: with zero loss and no fault that can make a live member look dead (pause,
 *   slow member, loss burst, latency spike, bad link) anywhere in the last `faultShadowMs`, no
 *   member ever holds a live member dead. Verdicts about a member on the far side of the
 *   scripted partition (until its merge bound) and about a process that restarted recently
 *   (they concern its previous life) are not false.
 * - false-dead-bound: on every seed, under whatever loss, the lives of live members wrongly
 *   ended stay within what the run's fault model allows (false-dead-bound.ts: base loss, loss
 *   bursts, latency spikes, bad links, pauses and slow members, at a 10⁻⁶ false alarm rate).
 *   Held with Lifeguard on; with Lifeguard off the figure is reported against it.
 * - leader-agreement and view-agreement: at the end of each scripted event's window (its
 *   bound), every member names the same live leader, and sees exactly the live members.
 * - one-coordinator-per-generation: no two members are ever named leader with one generation.
 * - incarnation-order (SWIM §4.2): a member that held another suspect or dead at incarnation
 *   i brings it back (alive, or joined again) only at an incarnation above i; the view a
 *   member adopts wholesale when it rejoins after a partition is exempt.
 * - crash-dissemination: with no degrading fault meanwhile, every member that was live when a
 *   member crashed holds it dead within `disseminationBoundMs`.
 *
 * Measured: for each crash, the first suspicion, first death verdict and the time until every
 * live member holds it dead; false death verdicts; the time until every member agrees on the
 * leader after each scripted event (first agreement, and the last change into agreement
 * before the bound: "settled").
 */
import type { NodeId } from '../../../core/ids.js';
import type { MembershipEvent, SwimConfig } from '../../../core/swim/index.js';
import type { Violation } from '../../scenario.js';
import type { Scheduler } from '../../scheduler.js';
import type { NetworkFaults } from '../../sim-network.js';
import {
  falseDeadBound, type FalseDeadBound, type MemberFault, type NetworkStretch,
} from './false-dead-bound.js';
import type { GossipTimeline } from './gossip-plan.js';
import type { GossipWorld, WorldObserver } from './gossip-world.js';

export type LeaderEventKind = 'warm-up' | 'coordinator-crash' | 'faults' | 'partition-heal'
  | 'coordinator-leave';

export interface AgreementSample {
  readonly kind: LeaderEventKind;
  /** From the event to the first instant every member named the same live leader. Unit: ms. */
  readonly firstMs: number | undefined;
  /** From the event to the last change into agreement before the bound. Unit: ms. */
  readonly settledMs: number | undefined;
  readonly leader: NodeId | undefined;
}

export interface CrashSample {
  readonly coordinator: boolean;
  /** From the crash to the first suspicion anywhere. Unit: ms. */
  firstSuspectMs: number | undefined;
  /** From the crash to the first death verdict anywhere. Unit: ms. */
  firstDeadMs: number | undefined;
  /** From the crash until every member live at the crash holds it dead. Unit: ms. */
  fullMs: number | undefined;
  /** Per member: from the crash until it held the member dead. Unit: ms. */
  readonly learnMs: number[];
}

export interface FalseDeadCounts {
  /** Members that moved a live member to dead in their view (one per viewer). */
  views: number;
  /** Of those, verdicts the viewer reached itself (its own suspicion timed out). */
  declarations: number;
  /** Distinct (member, incarnation) verdicts: one per wrongly killed life. */
  incidents: number;
  /** Verdicts about the far side of the scripted partition (not counted above). */
  partitionViews: number;
}

/** Members whose whole view is compared with the truth at each poll (all have their counts). */
const VIEW_SAMPLE_MAX = 64;

interface PendingCrash {
  readonly target: NodeId;
  readonly crashedAtMs: number;
  readonly sample: CrashSample;
  readonly waiting: Set<NodeId>;
  /** Called once: when every member holds the target dead, or at the bound. */
  settled: (() => void) | undefined;
}

interface Watch {
  readonly kind: LeaderEventKind;
  readonly startMs: number;
  readonly boundMs: number;
  readonly done: () => void;
  firstMs: number | undefined;
  lastMs: number | undefined;
  agreed: boolean;
  /** Since when agreement and views have held at every poll; undefined while they do not. */
  convergedSinceMs: number | undefined;
}

export interface CheckContext {
  readonly world: GossipWorld;
  /** The members' config (Lifeguard on or off): the bound's timeouts and probe rates. */
  readonly config: SwimConfig;
  readonly members: number;
  /** The network's faults at the start (base loss, latency). */
  readonly baseFaults: NetworkFaults;
  readonly badLinks: readonly { readonly member: NodeId; readonly lossRateExtra: number }[];
  readonly scheduler: Scheduler;
  readonly timeline: GossipTimeline;
  /** Whether verdicts can ever be judged quiet: zero base loss and no bad links. */
  readonly lossless: boolean;
  /** Prefix of violation messages (for example "lifeguard off: "). */
  readonly label: string;
}

export class GossipChecks implements WorldObserver {
  readonly violations: Violation[] = [];
  readonly crashes: CrashSample[] = [];
  readonly agreements: AgreementSample[] = [];
  readonly falseDead: FalseDeadCounts = {
    views: 0, declarations: 0, incidents: 0, partitionViews: 0,
  };
  /** Lives rejoined younger after a partition ('rejoined' events). */
  rejoins = 0;
  private readonly pending = new Map<NodeId, PendingCrash>();
  private readonly disturbances: { fromMs: number; toMs: number }[] = [];
  private readonly claimers = new Map<number, NodeId>();
  private readonly falseIncidents = new Set<string>();
  /** Per observer: members it holds suspect or dead, with the incarnation of the verdict. */
  private readonly verdicts = new Map<NodeId, Map<NodeId, number>>();
  /** When each observer last rejoined (its adopted view's events come at that instant). */
  private readonly rejoinedAtMs = new Map<NodeId, number>();
  private firstFalse: string | undefined;
  private readonly networkChanges: { atMs: number; faults: NetworkFaults }[] = [];
  private readonly memberFaults: MemberFault[] = [];
  /** The bound this run was held to (set by `checkFalseDeadBound`). */
  bound: FalseDeadBound | undefined;
  private partitionFromMs = Infinity;
  private partitionToMs = -Infinity;
  private watch: Watch | undefined;

  constructor(private readonly c: CheckContext) {}

  /** What the script does between agreement windows (for progress lines). */
  scriptPhase = 'warm-up';

  /** The scripted phase now, for progress lines. */
  get phase(): string {
    return this.watch === undefined ? this.scriptPhase : `${this.watch.kind} (converging)`;
  }

  /** A fault that can make live members look dead lasts over [fromMs, toMs]. */
  noteDisturbance(fromMs: number, toMs: number): void {
    this.disturbances.push({ fromMs, toMs });
  }

  /** The network's faults changed to `faults` now (loss bursts, latency spikes). */
  noteNetwork(faults: NetworkFaults): void {
    this.networkChanges.push({ atMs: this.c.scheduler.nowMs, faults });
  }

  /** A member is paused, or reads its messages late, for a while (the bound counts it). */
  noteMemberFault(fault: MemberFault): void {
    this.memberFaults.push(fault);
  }

  /**
   * false-dead-bound: at the end of the run, the lives wrongly ended (incidents) against what
   * the fault model allows.
   */
  checkFalseDeadBound(): void {
    const stretches: NetworkStretch[] = [];
    let fromMs = 0;
    let faults = this.c.baseFaults;
    for (const change of [...this.networkChanges, { atMs: this.c.scheduler.nowMs, faults }]) {
      stretches.push({ durationMs: change.atMs - fromMs, faults });
      fromMs = change.atMs;
      faults = change.faults;
    }
    const bound = falseDeadBound({
      config: this.c.config, members: this.c.members, stretches, badLinks: this.c.badLinks,
      memberFaults: this.memberFaults,
    });
    this.bound = bound;
    const incidents = this.falseDead.incidents;
    // The bound is Lifeguard's promise (the shipped default). Plain SWIM, the baseline it is
    // compared with, has fixed timeouts and accusers that never doubt themselves: its figure
    // is reported against the same bound, not held to it.
    if (incidents <= bound.allowed || !this.c.config.lifeguard) return;
    this.violations.push({
      checker: 'false-dead-bound', atMs: this.c.scheduler.nowMs,
      message: `${this.c.label}${incidents} lives of live members wrongly ended (first: `
        + `${this.firstFalse ?? '-'}), but the fault model allows ${bound.allowed} (expected `
        + `${bound.expected.toPrecision(3)}; docs/gossip.md, "False deaths under loss")`,
    });
  }

  /** Verdicts between the sides are expected from `fromMs` until `toMs`. */
  notePartition(fromMs: number, toMs: number): void {
    this.partitionFromMs = fromMs;
    this.partitionToMs = toMs;
  }

  // -------------------------------------------------------------------------------------
  // Crashes

  /**
   * `target` crashed now; every member live now should come to hold it dead. `settled` is
   * called once, when they all do or at the dissemination bound.
   */
  onCrash(target: NodeId, coordinator: boolean, settled?: () => void): void {
    const nowMs = this.c.scheduler.nowMs;
    this.finish(target);
    const waiting = new Set(this.c.world.members());
    waiting.delete(target);
    const sample: CrashSample = {
      coordinator, firstSuspectMs: undefined, firstDeadMs: undefined, fullMs: undefined,
      learnMs: [],
    };
    this.pending.set(target, { target, crashedAtMs: nowMs, sample, waiting, settled });
    const boundMs = this.c.timeline.disseminationBoundMs;
    this.c.scheduler.schedule(boundMs, () => this.checkDissemination(target, nowMs, boundMs));
  }

  /** `id` restarted: its previous life's sample ends here, complete or not. */
  onRestart(id: NodeId): void {
    this.finish(id);
  }

  // -------------------------------------------------------------------------------------
  // Leader agreement windows

  /**
   * Measures agreement from now, polling convergence (every member names the same live
   * leader and sees exactly the live members); calls `done` once it has held for the settle
   * time, or at `boundMs` (then checked, and a violation when it does not hold).
   */
  watchAgreement(kind: LeaderEventKind, boundMs: number, done: () => void): void {
    const startMs = this.c.scheduler.nowMs;
    const watch: Watch = {
      kind, startMs, boundMs, done, firstMs: undefined, lastMs: undefined, agreed: false,
      convergedSinceMs: undefined,
    };
    this.watch = watch;
    this.onAgreementChanged(startMs);
    this.c.scheduler.schedule(this.c.timeline.pollMs, () => this.poll(watch));
  }

  private poll(watch: Watch): void {
    if (this.watch !== watch) return;
    const t = this.c.timeline;
    const nowMs = this.c.scheduler.nowMs;
    if (watch.agreed && this.c.world.viewMismatch(VIEW_SAMPLE_MAX) === undefined) {
      watch.convergedSinceMs ??= nowMs;
    } else {
      watch.convergedSinceMs = undefined;
    }
    const settled = watch.convergedSinceMs !== undefined
      && nowMs - watch.convergedSinceMs >= t.settleMs;
    if (settled || nowMs - watch.startMs >= watch.boundMs) {
      this.endWatch(watch);
      return;
    }
    this.c.scheduler.schedule(t.pollMs, () => this.poll(watch));
  }

  // -------------------------------------------------------------------------------------
  // WorldObserver

  onAgreementChanged(nowMs: number): void {
    const watch = this.watch;
    if (watch === undefined) return;
    const agreed = this.unanimousLiveLeader() !== undefined;
    if (agreed && !watch.agreed) {
      watch.firstMs ??= nowMs;
      watch.lastMs = nowMs;
    }
    if (!agreed) watch.convergedSinceMs = undefined;
    watch.agreed = agreed;
  }

  onMemberEvent(observer: NodeId, event: MembershipEvent, nowMs: number): void {
    this.checkIncarnationOrder(observer, event, nowMs);
    switch (event.kind) {
      case 'suspect': {
        const pending = this.pending.get(event.member);
        if (pending !== undefined && pending.sample.firstSuspectMs === undefined) {
          pending.sample.firstSuspectMs = nowMs - pending.crashedAtMs;
        }
        return;
      }
      case 'dead':
        this.onDead(observer, event, nowMs);
        return;
      case 'leader-changed':
        if (event.leader !== undefined) this.checkClaim(event.leader.id, event.leader.generation);
        return;
      case 'rejoined':
        this.rejoins++;
        return;
      case 'joined':
      case 'alive':
      case 'left':
      case 'refuted':
      case 'join-failed':
        return;
      default: {
        const never: never = event;
        return never;
      }
    }
  }

  private onDead(
    observer: NodeId, event: Extract<MembershipEvent, { kind: 'dead' }>, nowMs: number,
  ): void {
    const target = event.member;
    const pending = this.pending.get(target);
    if (pending !== undefined) {
      const sample = pending.sample;
      sample.firstDeadMs ??= nowMs - pending.crashedAtMs;
      if (pending.waiting.delete(observer)) {
        sample.learnMs.push(nowMs - pending.crashedAtMs);
        if (pending.waiting.size === 0) {
          sample.fullMs = nowMs - pending.crashedAtMs;
          this.finish(target);
        }
      }
      return;
    }
    const world = this.c.world;
    if (!world.isMember(target)) return;
    const shadowMs = this.c.timeline.faultShadowMs;
    // A verdict about the previous life of a process that restarted meanwhile.
    if (nowMs - world.restartedAtMs(target) < shadowMs) return;
    if (nowMs >= this.partitionFromMs && nowMs <= this.partitionToMs) {
      this.falseDead.partitionViews++;
      return;
    }
    this.falseDead.views++;
    if (event.declaredBy === observer) this.falseDead.declarations++;
    const incident = `${target}#${event.incarnation}`;
    if (!this.falseIncidents.has(incident)) {
      this.falseIncidents.add(incident);
      this.falseDead.incidents++;
      this.firstFalse ??= `${observer} holds ${target} dead at ${nowMs.toFixed(0)} ms (declared `
        + `by ${event.declaredBy}, incarnation ${event.incarnation})`;
    }
    if (this.c.lossless && !this.disturbedWithin(nowMs - shadowMs, nowMs)) {
      this.violations.push({
        checker: 'no-false-dead', atMs: nowMs,
        message: `${this.c.label}${observer} holds ${target} dead (declared by `
          + `${event.declaredBy}, incarnation ${event.incarnation}, evidence `
          + `${event.confirmations.join(',') || '-'}), but ${target} is a live member and `
          + `nothing degraded the run in the last ${shadowMs} ms`,
      });
    }
  }

  /** incarnation-order (see the module comment): O(1) per event. */
  private checkIncarnationOrder(observer: NodeId, event: MembershipEvent, nowMs: number): void {
    if (event.kind === 'rejoined') {
      this.rejoinedAtMs.set(observer, nowMs);
      return;
    }
    if (event.kind === 'joined' && event.member === observer) {
      this.verdicts.delete(observer); // a fresh process: it remembers nothing
      return;
    }
    let held = this.verdicts.get(observer);
    if (event.kind === 'suspect' || event.kind === 'dead') {
      if (held === undefined) this.verdicts.set(observer, (held = new Map()));
      held.set(event.member, event.incarnation);
      return;
    }
    if (event.kind === 'left') held?.delete(event.member);
    if (event.kind !== 'alive' && event.kind !== 'joined') return;
    const verdict = held?.get(event.member);
    if (verdict === undefined) return;
    held?.delete(event.member);
    if (event.incarnation > verdict || this.rejoinedAtMs.get(observer) === nowMs) return;
    this.violations.push({
      checker: 'incarnation-order', atMs: nowMs,
      message: `${this.c.label}${observer} held ${event.member} suspect or dead at incarnation `
        + `${verdict} and took it back (${event.kind}) at incarnation ${event.incarnation}: only `
        + 'a higher incarnation refutes (SWIM §4.2)',
    });
  }

  // -------------------------------------------------------------------------------------
  // Helpers

  /** Moves a pending crash sample to the results; an observer that went away stops counting. */
  private finish(target: NodeId): void {
    const pending = this.pending.get(target);
    if (pending === undefined) return;
    this.pending.delete(target);
    this.crashes.push(pending.sample);
    const settled = pending.settled;
    pending.settled = undefined;
    settled?.();
  }

  /** Ends every pending crash sample (the end of the run): those are incomplete. */
  finishAll(): void {
    for (const target of [...this.pending.keys()]) this.finish(target);
  }

  /** Members that crash or leave no longer owe a verdict about earlier crashes. */
  onMemberGone(id: NodeId): void {
    for (const pending of this.pending.values()) {
      if (!pending.waiting.delete(id) || pending.waiting.size > 0) continue;
      pending.sample.fullMs = this.c.scheduler.nowMs - pending.crashedAtMs;
      this.finish(pending.target);
    }
  }

  private checkDissemination(target: NodeId, crashedAtMs: number, boundMs: number): void {
    const pending = this.pending.get(target);
    if (pending === undefined || pending.crashedAtMs !== crashedAtMs) return;
    const nowMs = this.c.scheduler.nowMs;
    if (!this.disturbedWithin(crashedAtMs, nowMs)) {
      const some = [...pending.waiting].slice(0, 5).join(', ');
      this.violations.push({
        checker: 'crash-dissemination', atMs: nowMs,
        message: `${this.c.label}${target} crashed at ${crashedAtMs.toFixed(1)} ms; `
          + `${pending.waiting.size} live members still do not hold it dead after ${boundMs} `
          + `ms (${some})`,
      });
    }
    this.finish(target);
  }

  private checkClaim(leader: NodeId, generation: number): void {
    const claimer = this.claimers.get(generation);
    if (claimer === undefined) {
      this.claimers.set(generation, leader);
    } else if (claimer !== leader) {
      this.violations.push({
        checker: 'one-coordinator-per-generation', atMs: this.c.scheduler.nowMs,
        message: `${this.c.label}generation ${generation} has two coordinators: ${claimer} and `
          + `${leader}`,
      });
    }
  }

  private unanimousLiveLeader(): NodeId | undefined {
    const agreed = this.c.world.agreement.unanimous();
    return agreed !== undefined && this.c.world.isMember(agreed.leader) ? agreed.leader : undefined;
  }

  private endWatch(watch: Watch): void {
    if (this.watch !== watch) return;
    this.watch = undefined;
    const nowMs = this.c.scheduler.nowMs;
    const leader = this.unanimousLiveLeader();
    this.agreements.push({
      kind: watch.kind,
      firstMs: watch.firstMs === undefined ? undefined : watch.firstMs - watch.startMs,
      settledMs: leader === undefined || watch.lastMs === undefined
        ? undefined : watch.lastMs - watch.startMs,
      leader,
    });
    const after = `${(nowMs - watch.startMs).toFixed(0)} ms after ${watch.kind}`;
    if (leader === undefined) {
      this.violations.push({
        checker: 'leader-agreement', atMs: nowMs,
        message: `${this.c.label}${after}, the members do not all name one live leader: `
          + `${this.c.world.agreement.describe()}`,
      });
    }
    const mismatch = this.c.world.viewMismatch(VIEW_SAMPLE_MAX);
    if (mismatch !== undefined) {
      this.violations.push({
        checker: 'view-agreement', atMs: nowMs, message: `${this.c.label}${after}: ${mismatch}`,
      });
    }
    watch.done();
  }

  private disturbedWithin(fromMs: number, toMs: number): boolean {
    for (const d of this.disturbances) {
      if (d.fromMs <= toMs && d.toMs >= fromMs) return true;
    }
    return false;
  }
}
