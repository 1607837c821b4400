/**
 * The nemesis: draws a fault schedule from the seed and plays it against the simulated cluster.
 * Swarm testing (as in TigerBeetle's VOPR): the seed also decides WHICH kinds of fault this run
 * has and how often, so that some runs hammer one fault hard while others mix them.
 *
 * Faults: crash and restart (kill -9, unsynced data lost), process pauses (SIGSTOP/SIGCONT),
 * partitions (halves, one node isolated, asymmetric one-way links, partial: a few links cut),
 * loss bursts, latency spikes, and per-node clock drift. Every fault ends by the end of the
 * safety phase, so the liveness phase runs on a healed network.
 *
 * A hostile actor (optional, `startHostile`): a scenario's forger of protocol messages (for
 * Raft, src/sim/scenarios/raft/hostile-actor.ts), called at random moments of the safety
 * phase, with bursts; its own prng, so runs without it draw the same faults as before.
 */
import { assert, assertNever } from '../core/assert.js';
import type { NodeId } from '../core/ids.js';
import { randomChance, randomFloat, randomInt, shuffle } from '../core/random.js';
import type { Prng } from './prng.js';
import type { Scheduler } from './scheduler.js';
import type { NetworkFaults, SimNetwork } from './sim-network.js';

export type FaultKind =
  | 'crash' | 'bounce' | 'pause' | 'partition' | 'loss-burst' | 'latency-spike' | 'drift';

/**
 * `bounce` is a crash followed by an immediate restart (0–20 ms, a supervisor restarting the
 * process): it hits the windows where state lives only in memory, like an unpersisted vote.
 * Not a kind: the stale-leader fault (`startStaleLeaders`), which runs on its own schedule.
 */
export const FAULT_KINDS: readonly FaultKind[] = [
  'crash', 'bounce', 'pause', 'partition', 'loss-burst', 'latency-spike', 'drift',
];

/** A stale-leader fault under way (NemesisTarget.staleLeader). */
export interface StaleLeaderFault {
  /** The leader whose inbound member links are (or will be) cut. */
  readonly leader: NodeId;
  /** Ends it: a cut not made yet is not made; the nemesis heals the links it cut. */
  disarm(): void;
}

/** A forger of protocol messages: each `act` injects one (or a few) hostile messages. */
export interface HostileActor {
  act(): void;
}

/** How often a hostile actor acts, drawn per run. */
export interface HostilePlan {
  /** Mean time between two acts. Unit: ms. */
  readonly actIntervalMsMean: number;
  /** Chance that an act is a burst of `burstActs` acts at once (a flood). Unit: ratio. */
  readonly burstRate: number;
  readonly burstActs: number;
}

/** What the nemesis acts on. */
export interface NemesisTarget {
  readonly nodeIds: readonly NodeId[];
  crash(id: NodeId): void;
  restart(id: NodeId): void;
  isUp(id: NodeId): boolean;
  pause(id: NodeId, durationMs: number): void;
  setDriftRate(id: NodeId, driftRate: number): void;
  readonly network: SimNetwork<unknown>;
  /**
   * Kind `stale-leader`, a directed partition: the member that leads now hands leadership over
   * and, the moment it tells its successor to campaign (timeout-now), hears no member any more
   * (every member-to-it link cut; it still sends, and clients still reach it both ways). It
   * believes it leads until check-quorum steps it down, an election timeout later, while the
   * successor already commits writes: a linearizable read it answered without confirming its
   * leadership would be stale. Undefined when no member leads now.
   */
  staleLeader?(): StaleLeaderFault | undefined;
}

/** The fault mix of one run, drawn from its seed; printed with every failure. */
export interface NemesisPlan {
  readonly kinds: readonly FaultKind[];
  /** Mean time between two faults. Unit: ms. */
  readonly faultIntervalMsMean: number;
  /** How long a crashed node stays down, at most. Unit: ms. */
  readonly downtimeMsMax: number;
  /** Longest pause. Unit: ms. */
  readonly pauseMsMax: number;
  /** Longest partition. Unit: ms. */
  readonly partitionMsMax: number;
  /** Largest clock rate error drawn per node. Unit: ratio. */
  readonly driftRateMax: number;
  /** Most nodes down at once (keep a majority up to measure liveness, or allow all). */
  readonly crashedMax: number;
}

export interface NemesisBounds {
  readonly faultIntervalMsMin: number;
  readonly faultIntervalMsMax: number;
  readonly downtimeMsMax: number;
  readonly pauseMsMax: number;
  readonly partitionMsMax: number;
  readonly driftRateMax: number;
  readonly crashedMax: number;
  /** Fault kinds this scenario allows (for example no partitions in a single-link test). */
  readonly kinds: readonly FaultKind[];
  /**
   * Kinds every run has, whatever the swarm draws (a scenario that measures detection needs
   * crashes).
   */
  readonly requiredKinds?: readonly FaultKind[];
}

/** Swarm: each allowed kind is on with probability 1/2 (at least one), rates drawn in bounds. */
export function drawNemesisPlan(prng: Prng, bounds: NemesisBounds): NemesisPlan {
  const required = bounds.requiredKinds ?? [];
  let kinds = bounds.kinds.filter((k) => randomChance(prng, 0.5) || required.includes(k));
  if (kinds.length === 0 && bounds.kinds.length > 0) {
    kinds = [bounds.kinds[randomInt(prng, 0, bounds.kinds.length)]!];
  }
  const span = bounds.faultIntervalMsMax - bounds.faultIntervalMsMin;
  return {
    kinds,
    faultIntervalMsMean: bounds.faultIntervalMsMin + randomFloat(prng) * span,
    downtimeMsMax: bounds.downtimeMsMax * (0.25 + 0.75 * randomFloat(prng)),
    pauseMsMax: bounds.pauseMsMax * (0.25 + 0.75 * randomFloat(prng)),
    partitionMsMax: bounds.partitionMsMax * (0.25 + 0.75 * randomFloat(prng)),
    driftRateMax: bounds.driftRateMax * randomFloat(prng),
    crashedMax: bounds.crashedMax,
  };
}

export interface NemesisCounts {
  crashes: number;
  pauses: number;
  partitions: number;
  lossBursts: number;
  latencySpikes: number;
  /** Stale-leader faults started (counted in `partitions` too). */
  staleLeaders: number;
}

/** Plays a plan until `endMs`; by `endMs` every fault has been undone. */
export class Nemesis {
  readonly counts: NemesisCounts = {
    crashes: 0, pauses: 0, partitions: 0, lossBursts: 0, latencySpikes: 0, staleLeaders: 0,
  };
  private readonly baseFaults: NetworkFaults;
  private partitionActive = false;
  private networkFaultActive = false;
  /** When each node's last fault ended (Infinity while one lasts); absent: never disturbed. */
  private readonly nodeDisturbedEndMs = new Map<NodeId, number>();
  /** When the last network-wide fault (partition, loss, latency) ended; Infinity while on. */
  private networkDisturbedEndMs = -Infinity;

  constructor(
    private readonly prng: Prng,
    private readonly scheduler: Scheduler,
    private readonly target: NemesisTarget,
    readonly plan: NemesisPlan,
    private readonly endMs: number,
  ) {
    this.baseFaults = target.network.currentFaults;
  }

  /**
   * The instant since which neither node, nor the network between them, has been under a
   * fault; Infinity while one lasts. Checkers use it to tell "healthy and timely" from not.
   */
  quietSinceMs(a: NodeId, b: NodeId): number {
    return Math.max(
      this.networkDisturbedEndMs,
      this.nodeDisturbedEndMs.get(a) ?? -Infinity,
      this.nodeDisturbedEndMs.get(b) ?? -Infinity,
    );
  }

  /**
   * Lets `actor` act at exponential intervals (mean `plan.actIntervalMsMean`) until the end of
   * the safety phase, drawing from `prng` (not the fault schedule's).
   */
  startHostile(actor: HostileActor, plan: HostilePlan, prng: Prng): void {
    const next = (): void => {
      const gapMs = -Math.log(1 - randomFloat(prng)) * plan.actIntervalMsMean;
      if (this.scheduler.nowMs + gapMs >= this.endMs) return;
      this.scheduler.schedule(gapMs, () => {
        const acts = randomChance(prng, plan.burstRate) ? plan.burstActs : 1;
        for (let i = 0; i < acts; i++) actor.act();
        next();
      });
    };
    next();
  }

  start(): void {
    if (this.plan.kinds.includes('drift')) {
      for (const id of this.target.nodeIds) {
        const rate = (2 * randomFloat(this.prng) - 1) * this.plan.driftRateMax;
        this.target.setDriftRate(id, rate);
        this.scheduler.recorder?.note({ kind: 'drift', atMs: this.scheduler.nowMs, node: id,
          driftRate: rate });
      }
    }
    this.scheduleNext();
  }

  private scheduleNext(): void {
    const gapMs = -Math.log(1 - randomFloat(this.prng)) * this.plan.faultIntervalMsMean;
    if (this.scheduler.nowMs + gapMs >= this.endMs) return;
    this.scheduler.schedule(gapMs, () => {
      this.inject();
      this.scheduleNext();
    });
  }

  /** Time left before the end of the safety phase, so every fault is undone by then. */
  private remainingMs(): number {
    return Math.max(0, this.endMs - this.scheduler.nowMs);
  }

  private inject(): void {
    const kinds = this.plan.kinds.filter((k) => k !== 'drift');
    if (kinds.length === 0) return;
    const kind = kinds[randomInt(this.prng, 0, kinds.length)]!;
    switch (kind) {
      case 'crash': return this.injectCrash(this.plan.downtimeMsMax);
      case 'bounce': return this.injectCrash(20);
      case 'pause': return this.injectPause();
      case 'partition': return this.injectPartition();
      case 'loss-burst': return this.injectNetworkFault('loss');
      case 'latency-spike': return this.injectNetworkFault('latency');
      default: return assertNever(kind, 'fault kind');
    }
  }

  private injectCrash(downtimeMsMax: number): void {
    const up = this.target.nodeIds.filter((id) => this.target.isUp(id));
    const down = this.target.nodeIds.length - up.length;
    if (up.length === 0 || down >= this.plan.crashedMax) return;
    const id = up[randomInt(this.prng, 0, up.length)]!;
    // The replay view may switch a fault off: its draws are made all the same, in the same
    // order, so every later fault of the seed stays as it was.
    if (!this.allowed(`${downtimeMsMax <= 20 ? 'bounce' : 'crash'} ${id}`)) {
      randomFloat(this.prng);
      return;
    }
    this.target.crash(id);
    this.counts.crashes++;
    this.nodeDisturbedEndMs.set(id, Infinity);
    const downtimeMs = Math.min(this.remainingMs(), randomFloat(this.prng) * downtimeMsMax);
    this.scheduler.schedule(downtimeMs, () => {
      this.target.restart(id);
      this.nodeDisturbedEndMs.set(id, this.scheduler.nowMs);
    });
  }

  private injectPause(): void {
    const up = this.target.nodeIds.filter((id) => this.target.isUp(id));
    if (up.length === 0) return;
    const id = up[randomInt(this.prng, 0, up.length)]!;
    const durationMs = Math.min(this.remainingMs(), randomFloat(this.prng) * this.plan.pauseMsMax);
    if (!this.allowed(`pause ${id} for ${durationMs.toFixed(0)} ms`)) return;
    this.target.pause(id, durationMs);
    this.counts.pauses++;
    const endMs = this.scheduler.nowMs + durationMs;
    this.nodeDisturbedEndMs.set(id, Math.max(this.nodeDisturbedEndMs.get(id) ?? -Infinity, endMs));
  }

  private injectPartition(): void {
    if (this.partitionActive) return;
    const network = this.target.network;
    const links = this.drawPartitionLinks();
    const durationMs = Math.min(this.remainingMs(),
      randomFloat(this.prng) * this.plan.partitionMsMax);
    const label = `partition: ${links.length} links cut for ${durationMs.toFixed(0)} ms`;
    if (!this.allowed(label)) return;
    for (const [from, to] of links) network.blockLink(from, to);
    this.scheduler.recorder?.note({ kind: 'partition', atMs: this.scheduler.nowMs,
      links: network.blockedLinkPairs() });
    this.partitionActive = true;
    this.counts.partitions++;
    this.networkDisturbedEndMs = Infinity;
    this.scheduler.schedule(durationMs, () => {
      network.heal();
      this.partitionActive = false;
      if (!this.networkFaultActive) this.networkDisturbedEndMs = this.scheduler.nowMs;
    });
  }

  /**
   * Plays stale-leader faults (NemesisTarget.staleLeader) at exponential intervals of
   * `intervalMsMean` until the end of the safety phase, beside the plan's faults, drawing from
   * `prng` (not the fault schedule's). Each counts as a partition: none starts while another
   * partition lasts (nor a partition while it lasts), the network is disturbed while it lasts,
   * and it ends healed. It lasts half to all of `durationMsMax`: longer than an election
   * timeout, so that the cut leader's check-quorum runs out inside it.
   */
  startStaleLeaders(intervalMsMean: number, durationMsMax: number, prng: Prng): void {
    assert(this.target.staleLeader !== undefined, 'stale-leader faults need target.staleLeader');
    const next = (): void => {
      const gapMs = -Math.log(1 - randomFloat(prng)) * intervalMsMean;
      if (this.scheduler.nowMs + gapMs >= this.endMs) return;
      this.scheduler.schedule(gapMs, () => {
        const durationMs = Math.min(this.remainingMs(),
          (0.5 + 0.5 * randomFloat(prng)) * durationMsMax);
        this.injectStaleLeader(durationMs);
        next();
      });
    };
    next();
  }

  private injectStaleLeader(durationMs: number): void {
    if (this.partitionActive) return;
    if (!this.allowed(`stale leader for ${durationMs.toFixed(0)} ms`)) return;
    const fault = this.target.staleLeader?.();
    if (fault === undefined) return;
    this.partitionActive = true;
    this.counts.partitions++;
    this.counts.staleLeaders++;
    this.networkDisturbedEndMs = Infinity;
    this.scheduler.schedule(durationMs, () => {
      fault.disarm();
      this.target.network.heal();
      this.partitionActive = false;
      if (!this.networkFaultActive) this.networkDisturbedEndMs = this.scheduler.nowMs;
    });
  }

  /** The links a partition cuts, as [from, to] pairs (one direction each). */
  private drawPartitionLinks(): [NodeId, NodeId][] {
    const ids = shuffle(this.prng, [...this.target.nodeIds]);
    const shape = randomInt(this.prng, 0, 4);
    const between = (a: readonly NodeId[], b: readonly NodeId[]): [NodeId, NodeId][] => [
      ...a.flatMap((x) => b.map((y): [NodeId, NodeId] => [x, y])),
      ...b.flatMap((y) => a.map((x): [NodeId, NodeId] => [y, x])),
    ];
    if (shape === 0) {
      // Halves (or any split): two sides that cannot reach each other.
      const cut = randomInt(this.prng, 1, ids.length);
      return between(ids.slice(0, cut), ids.slice(cut));
    }
    if (shape === 1) return between(ids.slice(0, 1), ids.slice(1));
    // Asymmetric: one node can send to nobody but still hears everyone.
    if (shape === 2) return ids.slice(1).map((other): [NodeId, NodeId] => [ids[0]!, other]);
    // Partial: a random subset of links cut in one or both directions.
    const links: [NodeId, NodeId][] = [];
    for (const from of ids) {
      for (const to of ids) {
        if (from !== to && randomChance(this.prng, 0.3)) links.push([from, to]);
      }
    }
    return links;
  }

  /** False when the recording's user switched this fault off (the replay view's what-if). */
  private allowed(label: string): boolean {
    return this.scheduler.recorder?.allowFault(this.scheduler.nowMs, label) ?? true;
  }

  private injectNetworkFault(what: 'loss' | 'latency'): void {
    if (this.networkFaultActive) return;
    const network = this.target.network;
    const base = this.baseFaults;
    const faults = what === 'loss'
      ? { ...base, lossRate: Math.max(base.lossRate, 0.05 + 0.45 * randomFloat(this.prng)) }
      : latencySpike(base, 5 + 95 * randomFloat(this.prng));
    const durationMs = Math.min(this.remainingMs(),
      randomFloat(this.prng) * this.plan.partitionMsMax);
    const label = what === 'loss' ? `loss burst ${(100 * faults.lossRate).toFixed(0)}%`
      : `latency spike to ${faults.latencyMsMax.toFixed(0)} ms`;
    if (!this.allowed(`${label} for ${durationMs.toFixed(0)} ms`)) return;
    network.setFaults(faults);
    if (what === 'loss') this.counts.lossBursts++;
    else this.counts.latencySpikes++;
    this.noteNetwork(faults, what === 'loss' ? 'loss burst' : 'latency spike');
    this.networkFaultActive = true;
    this.networkDisturbedEndMs = Infinity;
    this.scheduler.schedule(durationMs, () => {
      network.setFaults(base);
      this.noteNetwork(base, 'network back to normal');
      this.networkFaultActive = false;
      if (!this.partitionActive) this.networkDisturbedEndMs = this.scheduler.nowMs;
    });
  }

  private noteNetwork(faults: NetworkFaults, label: string): void {
    this.scheduler.recorder?.note({ kind: 'network', atMs: this.scheduler.nowMs,
      lossRate: faults.lossRate, latencyMsMax: faults.latencyMsMax, label });
  }
}

function latencySpike(base: NetworkFaults, spikeMs: number): NetworkFaults {
  return {
    ...base,
    latencyMsMin: base.latencyMsMin + spikeMs / 4,
    latencyMsMeanExtra: base.latencyMsMeanExtra + spikeMs / 2,
    latencyMsMax: base.latencyMsMax + spikeMs,
    duplicateRate: Math.max(base.duplicateRate, 0.02),
  };
}
