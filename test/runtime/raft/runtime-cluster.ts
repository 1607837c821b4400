/**
 * A small simulated cluster of RaftRuntimes for the runtime tests: the real runtime, write-ahead
 * log and KV state machine on SimHosts (virtual time, simulated disks and network), with hooks
 * to observe role changes by virtual time. Not a test file itself.
 */
import { nodeId, type NodeId } from '../../../src/core/ids.js';
import {
  RAFT_DEFAULTS_LOCAL, describeRaftMessage, type RaftConfig, type RaftEvent, type RaftMessage,
  type RaftTuning,
} from '../../../src/core/raft/index.js';
import { RaftRuntime, type StateMachine } from '../../../src/runtime/raft/raft-runtime.js';
import {
  RAFT_RUNTIME_DEFAULTS, type RaftRuntimeConfig,
} from '../../../src/runtime/raft/runtime-config.js';
import type { Storage } from '../../../src/ports/storage.js';
import { openWal, type Wal, type WalConfig, WAL_DEFAULTS } from '../../../src/runtime/wal/index.js';
import type { KvOutput } from '../../../src/sim/checkers/kv-model.js';
import { Prng } from '../../../src/sim/prng.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimHost, type HostContext } from '../../../src/sim/sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork, type NetworkFaults } from '../../../src/sim/sim-network.js';
import { TraceHash } from '../../../src/sim/trace-hash.js';
import { SimKvStateMachine } from '../../../src/sim/scenarios/raft/sim-kv.js';

/**
 * A node's disk whose syncs a test can hold: while held, a completed sync reports back only
 * when `release` is called (the data is durable; the node just does not know yet).
 */
export class SyncGate {
  private held = false;
  private waiting: (() => void)[] = [];

  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    const waiting = this.waiting;
    this.waiting = [];
    for (const report of waiting) report();
  }

  /** `storage` with every sync's report passed through this gate. */
  wrap(storage: Storage): Storage {
    const gated = (done: (error?: Error) => void) => (error?: Error): void => {
      if (this.held) this.waiting.push(() => done(error));
      else done(error);
    };
    return {
      list: () => storage.list(),
      read: (name) => storage.read(name),
      append: (name, bytes) => storage.append(name, bytes),
      truncate: (name, sizeBytes) => storage.truncate(name, sizeBytes),
      remove: (name) => storage.remove(name),
      rename: (from, to) => storage.rename(from, to),
      sync: (name, done) => storage.sync(name, gated(done)),
      syncDir: (done) => storage.syncDir(gated(done)),
    };
  }
}

export interface RuntimeProcess {
  readonly runtime: RaftRuntime<KvOutput>;
  readonly stateMachine: SimKvStateMachine;
  readonly wal: Wal;
  halt(): void;
}

export interface RuntimeClusterOptions {
  readonly nodes?: number;
  /** Extra nodes, started as learners of their own config only: an `add-learner` brings them in. */
  readonly spares?: number;
  readonly seed?: number;
  readonly tuning?: Partial<RaftTuning>;
  readonly faults?: Partial<NetworkFaults>;
  /** Default: no snapshots. */
  readonly runtime?: Partial<RaftRuntimeConfig>;
  readonly wal?: WalConfig;
  /**
   * Snapshots taken in steps (`beginSnapshot`, a few timer turns each) and snapshot files
   * written a piece per turn, as the consistent core does; default: at once.
   */
  readonly steppedSnapshots?: boolean;
}

/** Steps each stepped snapshot takes before it hands over its bytes. */
export const SNAPSHOT_STEPS = 5;

/** An event seen by some node, stamped with virtual time. */
export interface SeenEvent {
  readonly atMs: number;
  readonly node: NodeId;
  readonly event: RaftEvent;
}

export class RuntimeCluster {
  readonly scheduler = new Scheduler();
  readonly network: SimNetwork<RaftMessage>;
  readonly ids: readonly NodeId[];
  readonly hosts = new Map<NodeId, SimHost<RaftMessage, RuntimeProcess>>();
  readonly events: SeenEvent[] = [];
  /** Each node's sync gate (kept across restarts): hold a node's syncs to test the write path. */
  readonly syncGates = new Map<NodeId, SyncGate>();
  readonly tuning: RaftTuning;
  private readonly runtimeConfig: RaftRuntimeConfig;
  private readonly walConfig: WalConfig;
  private readonly stepped: boolean;
  /** Stepped snapshots begun and cancelled (all nodes, all lives). */
  readonly snapshotSteps = { begun: 0, cancelled: 0 };
  /** Nodes whose stepped snapshots make no progress while listed here. */
  readonly heldSnapshots = new Set<NodeId>();

  constructor(options: RuntimeClusterOptions = {}) {
    this.stepped = options.steppedSnapshots === true;
    this.runtimeConfig = { ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: 0, ...options.runtime };
    this.walConfig = options.wal ?? WAL_DEFAULTS;
    const prng = new Prng(options.seed ?? 1);
    this.network = new SimNetwork<RaftMessage>(this.scheduler, prng.fork(), new TraceHash(), {
      faults: { ...NETWORK_FAULTS_NONE, ...options.faults },
      describe: describeRaftMessage,
      sizeBytes: () => 64,
    });
    const voterCount = options.nodes ?? 3;
    const total = voterCount + (options.spares ?? 0);
    this.ids = Array.from({ length: total }, (_, i) => nodeId(`n${i + 1}`));
    const voters = this.ids.slice(0, voterCount);
    this.tuning = { ...RAFT_DEFAULTS_LOCAL, ...options.tuning };
    for (const id of this.ids) {
      this.syncGates.set(id, new SyncGate());
      const config: RaftConfig = voters.includes(id)
        ? { ...this.tuning, id, voters }
        : { ...this.tuning, id, voters, learners: [id] };
      this.hosts.set(id, new SimHost<RaftMessage, RuntimeProcess>(id, this.scheduler,
        this.network, prng.fork(), {
          clock: { driftRate: 0, monotonicOffsetMs: 1000, wallOffsetMs: 0 },
          storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
        }, (context) => this.startProcess(context, config)));
    }
  }

  runtime(id: NodeId): RaftRuntime<KvOutput> {
    const process = this.hosts.get(id)?.process;
    if (process === undefined) throw new Error(`${id} is not running`);
    return process.runtime;
  }

  /** The running node that leads in the highest term, if any. */
  leader(): NodeId | undefined {
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

  /** Runs virtual time until `done()` holds (checked after every event) or `withinMs` passes. */
  runUntil(done: () => boolean, withinMs: number): boolean {
    const endMs = this.scheduler.nowMs + withinMs;
    if (done()) return true;
    return this.scheduler.runUntil(endMs, done);
  }

  /** Runs until some node leads and has committed its no-op; returns it. */
  elect(withinMs = 10_000): NodeId {
    const ok = this.runUntil(() => {
      const leader = this.leader();
      if (leader === undefined) return false;
      const status = this.runtime(leader).status();
      return status.commitIndex === status.lastIndex && status.commitIndex > 0;
    }, withinMs);
    const leader = this.leader();
    if (!ok || leader === undefined) throw new Error(`no leader within ${withinMs} ms`);
    return leader;
  }

  /** Role changes to leader seen after `sinceMs`. */
  leadersElectedSince(sinceMs: number): SeenEvent[] {
    return this.events.filter((e) => e.atMs >= sinceMs && e.event.kind === 'role-changed' &&
      e.event.to === 'leader');
  }

  private startProcess(context: HostContext<RaftMessage>, config: RaftConfig): RuntimeProcess {
    const storage = this.syncGates.get(context.id)?.wrap(context.storage) ?? context.storage;
    const yieldTurn = (next: () => void): void => {
      context.timer.setTimer(this.runtimeConfig.snapshotStepIntervalMs, next);
    };
    const opened = openWal(storage, this.walConfig, this.stepped ? { yieldTurn } : {});
    if ('error' in opened) throw new Error(opened.error.message);
    const stateMachine = new SimKvStateMachine();
    const runtime = new RaftRuntime<KvOutput>(config, {
      clock: context.clock,
      timer: context.timer,
      transport: context.transport,
      storage: opened.wal,
      random: context.random,
      stateMachine: this.stepped ? this.steppedMachine(context.id, stateMachine) : stateMachine,
      onEvent: (event) => this.events.push({ atMs: this.scheduler.nowMs, node: context.id, event }),
    }, this.runtimeConfig);
    return { runtime, stateMachine, wal: opened.wal, halt: () => runtime.stop('node crashed') };
  }

  /** `machine` with `beginSnapshot`: the state captured at once, handed over after some steps. */
  private steppedMachine(id: NodeId, machine: SimKvStateMachine): StateMachine<KvOutput> {
    return {
      apply: (entry) => machine.apply(entry),
      restore: (data) => machine.restore(data),
      beginSnapshot: () => {
        this.snapshotSteps.begun++;
        const data = machine.snapshot();
        let left = SNAPSHOT_STEPS;
        return {
          step: () => (this.heldSnapshots.has(id) || --left > 0 ? undefined : data),
          cancel: () => {
            this.snapshotSteps.cancelled++;
          },
        };
      },
    };
  }
}
