/**
 * Scenario `raft`: a 3- or 5-node Raft cluster (the real RaftNode, RaftRuntime and write-ahead
 * log, on simulated disks, clocks and network) serving a key-value register workload from
 * simulated clients, under the full nemesis: loss, duplication, reordering, delay, partitions
 * (full, partial, asymmetric), crash-restart with unsynced data lost or torn, pauses and clock
 * drift. Most gets are ReadIndex reads (no log write, served by leaders and followers), the rest
 * go through the log.
 *
 * `--snapshots`: state machines snapshot every few dozen entries and the log before it is
 * dropped; followers are taken down long enough to come back through InstallSnapshot.
 * `--membership`: two spare nodes; members are added (as learners), promoted and removed (the
 * leader too), and leadership is transferred, at random moments (raft-operator.ts).
 * `--hostile`: a forger of Raft frames acts through the safety phase (hostile-actor.ts), as the
 * non-member `evil` only (`--hostile-model authenticated`), or also under members' ids with
 * contradictory frames (`unauthenticated`); `both` (default) alternates by seed parity. Without
 * it, no message may be rejected at all (a rejection in an honest run is a false alarm).
 *
 * Safety phase: faults, with the checkers of raft-checker.ts on every step. Liveness phase: the
 * network heals and every node is up; a leader must emerge and commit within a bound, and at the
 * end every member must have applied the same entries. Finally the client history must be
 * linearizable (operations that timed out count as maybe applied).
 */
import { assert } from '../../../core/assert.js';
import { nodeId, type LogIndex, type NodeId } from '../../../core/ids.js';
import {
  RAFT_DEFAULTS_LOCAL, RAFT_NO_MUTANTS, describeRaftMessage, type RaftConfig, type RaftMessage,
  type RaftMutants, type RaftTuning,
} from '../../../core/raft/index.js';
import { RaftRuntime } from '../../../runtime/raft/raft-runtime.js';
import {
  RAFT_RUNTIME_DEFAULTS, type RaftRuntimeConfig,
} from '../../../runtime/raft/runtime-config.js';
import { openWal, WAL_DEFAULTS } from '../../../runtime/wal/index.js';
import { judgeHistory, type HistoryVerdict } from '../../checkers/history-verdict.js';
import type { Operation } from '../../checkers/history.js';
import { checkLinearizable } from '../../checkers/linearizability.js';
import { kvModel, type KvInput, type KvOutput } from '../../checkers/kv-model.js';
import { drawNemesisPlan, FAULT_KINDS, Nemesis, type NemesisTarget } from '../../nemesis.js';
import { Prng } from '../../prng.js';
import type { Scenario, ScenarioOptions, SeedResult, SummaryReport, Violation } from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import type { SimRecorder } from '../../sim-recorder.js';
import { SimHost, type HostContext } from '../../sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../../sim-network.js';
import { formatNumber } from '../../stats.js';
import { TraceHash } from '../../trace-hash.js';
import { CheckedRaftStorage, RaftChecker } from './raft-checker.js';
import {
  HOSTILE_MODELS, RaftHostileActor, type HostileCounts, type HostileModel,
} from './hostile-actor.js';
import { encodeKvCommand, SimKvStateMachine } from './sim-kv.js';
import { RaftOperator } from './raft-operator.js';
import { RaftWorkload, type ReadAnswer } from './raft-workload.js';
import { mutantFlagDescription } from '../../mutant-catches.js';
import { RAFT_MUTANT_CATCHES } from './raft-mutant-catches.js';

export const RAFT_MUTANT_NAMES = Object.keys(RAFT_NO_MUTANTS) as (keyof RaftMutants)[];

/** The mutants a run's `--mutant` option plants (none without it). */
export function mutantsFrom(options: ScenarioOptions): RaftMutants {
  const mutant = options['mutant'];
  return typeof mutant === 'string' ? { ...RAFT_NO_MUTANTS, [mutant]: true } : RAFT_NO_MUTANTS;
}

/**
 * A healthy network for scripted Raft scenarios: no loss, no duplication, ordered streams, a
 * latency tail drawn from the seed (0.1 ms floor, 0.2–2.2 ms mean extra, 10 ms cap).
 */
export function quietRaftNetwork(scheduler: Scheduler, prng: Prng, trace: TraceHash): SimNetwork<RaftMessage> {
  return new SimNetwork<RaftMessage>(scheduler, prng.fork(), trace, {
    faults: { ...NETWORK_FAULTS_NONE, latencyMsMeanExtra: 0.2 + 2 * (prng.nextUint32() / 2 ** 32), latencyMsMax: 10 },
    describe: describeRaftMessage,
    sizeBytes: () => 64,
  });
}

export interface RaftFigures {
  readonly ok: number;
  readonly failed: number;
  readonly unknown: number;
  /** Of the ok calls, gets served by ReadIndex (no log write). */
  readonly reads: number;
  readonly elections: number;
  /** Snapshots taken (local) and installed (from a leader). */
  readonly snapshotsSaved: number;
  readonly snapshotsInstalled: number;
  /** Operator acts (--membership, --snapshots): changes proposed and applied, transfers. */
  readonly membershipChanges: number;
  readonly membershipChangesApplied: number;
  readonly transfers: number;
  readonly crashes: number;
  readonly partitions: number;
  readonly committed: number;
  /** `skipped` when another checker failed first (history-verdict.ts says the rest). */
  readonly linearizability: HistoryVerdict | 'skipped';
  /** Virtual time from the heal to the first successful client call. Unit: ms. */
  readonly recoveryMs: number | undefined;
  /** With --hostile: the model of this seed and what the actor sent. */
  readonly hostile: (HostileCounts & { readonly model: HostileModel }) | undefined;
  /** Messages the Raft cores rejected, by reason. */
  readonly rejected: Readonly<Record<string, number>>;
}

export interface RaftProcess {
  readonly runtime: RaftRuntime<KvOutput>;
  readonly stateMachine: SimKvStateMachine;
  halt(): void;
}

export const raftScenario: Scenario<RaftFigures> = {
  name: 'raft',
  summary: 'Raft cluster with a KV workload under the full nemesis; safety, liveness, linearizability',
  flags: [
    { name: 'nodes', kind: 'integer', description: 'cluster size', defaultValue: 5, min: 1, max: 9 },
    { name: 'safety-s', kind: 'number', description: 'simulated seconds of faults', defaultValue: 10, min: 1, max: 3600 },
    { name: 'liveness-s', kind: 'number', description: 'simulated seconds healed', defaultValue: 6, min: 5, max: 3600 },
    { name: 'clients', kind: 'integer', description: 'simulated clients', defaultValue: 4, min: 1, max: 64 },
    {
      name: 'mutant', kind: 'string', description: mutantFlagDescription('Raft bug'),
      defaultValue: undefined, choices: RAFT_MUTANT_NAMES,
    },
    {
      name: 'snapshots', kind: 'boolean', defaultValue: false,
      description: 'snapshot every few entries, compact the log, and cut followers off long enough to need InstallSnapshot',
    },
    {
      name: 'membership', kind: 'boolean', defaultValue: false,
      description: 'add (as learners, from 2 spare nodes), promote and remove members, and transfer leadership, as operators do',
    },
    {
      name: 'hostile', kind: 'boolean', defaultValue: false,
      description: 'a forger injects every Raft message kind with extreme fields during the ' +
        'safety phase (docs/simulation.md); safety must hold and the cores must reject what ' +
        'contradicts them',
    },
    {
      name: 'hostile-model', kind: 'string', defaultValue: 'both',
      choices: [...HOSTILE_MODELS, 'both'],
      description: 'with --hostile: authenticated (the forger speaks only as non-member ' +
        '"evil"), unauthenticated (it also claims members\' ids, sending only frames a correct ' +
        'member could not send), or both (even seeds authenticated, odd ones unauthenticated)',
    },
  ],
  runSeed: (seed, options, _progress, recorder) => runRaftSeed(seed, options, {}, recorder),
  records: true,
  mutantCatches: RAFT_MUTANT_CATCHES,
  summarize: summarizeRaft,
};

/** Hooks for tests and debugging: look at the cluster at the end of the run. */
export interface RaftSeedHooks {
  readonly atEnd?: (hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>) => void;
}

export function runRaftSeed(seed: number, options: ScenarioOptions, hooks: RaftSeedHooks = {},
  recorder?: SimRecorder): SeedResult<RaftFigures> {
  const nodes = numberOption(options, 'nodes');
  const safetyMs = numberOption(options, 'safety-s') * 1000;
  const livenessMs = numberOption(options, 'liveness-s') * 1000;
  const mutant = options['mutant'];
  const mutants = mutantsFrom(options);
  const prng = new Prng(seed);
  const scheduler = new Scheduler(recorder);
  const trace = new TraceHash();
  const ids = Array.from({ length: nodes }, (_, i) => nodeId(`n${i + 1}`));
  const checker = new RaftChecker(() => scheduler.nowMs, ids);
  const network = new SimNetwork<RaftMessage>(scheduler, prng.fork(), trace, {
    faults: {
      ...NETWORK_FAULTS_NONE,
      lossRate: prng.nextUint32() % 2 === 0 ? 0 : 0.05 * (prng.nextUint32() / 2 ** 32),
      duplicateRate: prng.nextUint32() % 2 === 0 ? 0 : 0.03,
      reorderStreams: prng.nextUint32() % 2 === 0,
      latencyMsMeanExtra: 0.2 + 2 * (prng.nextUint32() / 2 ** 32),
      latencyMsMax: 10,
    },
    describe: describeRaftMessage,
    sizeBytes: () => 64,
  });
  const snapshotsOn = options['snapshots'] === true;
  const membershipOn = options['membership'] === true;
  // Spare nodes start outside the cluster (learners of their own config only).
  const spares = membershipOn ? Array.from({ length: SPARE_NODES }, (_, i) => nodeId(`n${nodes + i + 1}`)) : [];
  const allIds = [...ids, ...spares];
  const { tuning, runtimeConfig } = drawConfigs(prng, mutants, snapshotsOn);
  const violations: Violation[] = [];
  let operator: RaftOperator | undefined;
  const hosts = createHosts({
    scheduler, network, prng, ids, spares, tuning, runtimeConfig, checker, violations,
    onLeader: (id) => operator?.onLeaderElected(id),
  });
  const hostileModel = hostileModelOf(seed, options);
  const plan = drawNemesisPlan(prng, {
    kinds: FAULT_KINDS,
    faultIntervalMsMin: 200,
    faultIntervalMsMax: 3_000,
    downtimeMsMax: 3_000,
    pauseMsMax: 2_000,
    partitionMsMax: 4_000,
    driftRateMax: 0.01,
    crashedMax: allIds.length,
  });
  const nemesis = new Nemesis(prng.fork(), scheduler, nemesisTarget(hosts, network), plan, safetyMs);
  const endMs = safetyMs + livenessMs;
  if (membershipOn || snapshotsOn) {
    operator = new RaftOperator(prng.fork(), scheduler, hosts,
      { membership: membershipOn, snapshots: snapshotsOn, endMs: safetyMs });
  }
  const workload = new RaftWorkload(prng.fork(), scheduler, {
    nodeIds: allIds,
    propose: (node, data, done) => hosts.get(node)!.submit((p) => p.runtime.propose(data, done)),
    read: (node, key, done) => readAt(hosts, node, key, done),
  }, {
    clients: numberOption(options, 'clients'),
    keys: 3,
    thinkMsMean: 20,
    callTimeoutMs: 2 * tuning.electionTimeoutMsMax,
    // Clients stop 3 s before the end: then one directed leader crash, then the final checks.
    stopAtMs: endMs - 3_000,
    getsThroughLogRate: 0.25,
  });
  const broken = (): boolean => {
    checker.configs.afterStep();
    return checker.violations.length > 0 || violations.length > 0;
  };
  const actor = hostileModel === undefined
    ? undefined
    : startHostileActor(hostileModel, prng, nemesis, network, hosts, tuning);
  try {
    nemesis.start();
    operator?.start();
    workload.start();
    scheduler.runUntil(safetyMs, broken);
    if (!broken()) healAll(network, hosts);
    if (!broken()) scheduler.runUntil(endMs - 2_800, broken);
    if (!broken()) crashLeaderAfterWrite(prng, scheduler, hosts);
    if (!broken()) scheduler.runUntil(endMs, broken);
  } catch (error) {
    // An assertion inside the real code (core invariants, runtime order) is a failed seed.
    violations.push({ checker: 'assertion', atMs: scheduler.nowMs, message: String(error) });
  }
  hooks.atEnd?.(hosts);
  if (recorder !== undefined) recordHistory(recorder, workload.history.operations());
  violations.push(...checker.violations);
  if (violations.length === 0) {
    violations.push(...livenessViolations(hosts, workload, safetyMs, endMs, tuning.electionTimeoutMsMax));
  }
  if (violations.length === 0 && actor === undefined && checker.rejectedByReason.size > 0) {
    violations.push({ checker: 'false-rejection', atMs: scheduler.nowMs,
      message: `an honest run rejected messages: ${formatCounts(checker.rejectedByReason)}` });
  }
  const linearizability = violations.length === 0 ? checkHistory(workload, violations, scheduler.nowMs) : 'skipped';
  const recovery = workload.okAtMs.find((t) => t >= safetyMs);
  return {
    seed,
    traceHash: trace.digest(),
    violations,
    figures: {
      ...workload.counts,
      ...operatorFigures(checker, operator),
      elections: checker.elections,
      crashes: nemesis.counts.crashes,
      partitions: nemesis.counts.partitions,
      committed: checker.appliedIndexMax,
      linearizability,
      recoveryMs: recovery === undefined ? undefined : recovery - safetyMs,
      hostile: actor === undefined || hostileModel === undefined
        ? undefined
        : { model: hostileModel, ...actor.counts },
      rejected: Object.fromEntries(checker.rejectedByReason),
    },
    simulatedMs: scheduler.nowMs,
    events: scheduler.eventsRun,
    drawn: {
      ...plan, network: network.currentFaults, mutant: mutant ?? 'none',
      ...(hostileModel === undefined ? {} : { hostileModel }),
      electionTimeoutMsMax: tuning.electionTimeoutMsMax,
      entriesPerMessageMax: tuning.entriesPerMessageMax, inflightMessagesMax: tuning.inflightMessagesMax,
      ...(snapshotsOn ? {
        snapshotEntries: runtimeConfig.snapshotEntries, snapshotCatchUpEntries: runtimeConfig.snapshotCatchUpEntries,
        snapshotChunkBytesMax: tuning.snapshotChunkBytesMax,
      } : {}),
    },
  };
}

/** The --hostile model of a seed, or undefined without --hostile. */
function hostileModelOf(seed: number, options: ScenarioOptions): HostileModel | undefined {
  if (options['hostile'] !== true) return undefined;
  const model = options['hostile-model'];
  if (model === 'authenticated' || model === 'unauthenticated') return model;
  return seed % 2 === 0 ? 'authenticated' : 'unauthenticated';
}

/**
 * The forger acts through the safety phase: every few ms on average (drawn per seed), with
 * floods of 50 frames at once now and then. Its prng forks come last, so runs without
 * --hostile draw exactly what they drew before.
 */
function startHostileActor(model: HostileModel, prng: Prng, nemesis: Nemesis,
  network: SimNetwork<RaftMessage>, hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>,
  tuning: RaftTuning): RaftHostileActor {
  const actor = new RaftHostileActor(prng.fork(), network, {
    model,
    members: [...hosts.keys()],
    view: (id) => {
      const runtime = hosts.get(id)?.process?.runtime;
      return runtime === undefined
        ? undefined
        : { status: runtime.status(), termAt: (index) => runtime.node.termAt(index) };
    },
    snapshotBytesMax: tuning.snapshotBytesMax,
  });
  const hostilePrng = prng.fork();
  nemesis.startHostile(actor, {
    actIntervalMsMean: 2 + 30 * (hostilePrng.nextUint32() / 2 ** 32),
    burstRate: 0.02,
    burstActs: 50,
  }, hostilePrng);
  return actor;
}

function formatCounts(
  counts: ReadonlyMap<string, number> | Readonly<Record<string, number>>,
): string {
  const entries = counts instanceof Map ? [...counts] : Object.entries(counts);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k}=${n}`).join(', ');
}

/** The fault nemesis acts on every host (spares included). */
function nemesisTarget(hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>,
  network: SimNetwork<RaftMessage>): NemesisTarget {
  return {
    nodeIds: [...hosts.keys()],
    network: network as SimNetwork<unknown>,
    isUp: (id) => hosts.get(id)!.isUp,
    crash: (id) => hosts.get(id)!.crash(),
    // The operator nemesis may have restarted it already.
    restart: (id) => {
      if (!hosts.get(id)!.isUp) hosts.get(id)!.restart();
    },
    pause: (id, ms) => hosts.get(id)!.pause(ms),
    setDriftRate: (id, rate) => hosts.get(id)!.clock.setDriftRate(rate),
  };
}

function operatorFigures(checker: RaftChecker, operator: RaftOperator | undefined): Pick<RaftFigures,
  'snapshotsSaved' | 'snapshotsInstalled' | 'membershipChanges' | 'membershipChangesApplied' | 'transfers'> {
  return {
    snapshotsSaved: checker.snapshotsSaved,
    snapshotsInstalled: checker.snapshotsInstalled,
    membershipChanges: operator?.counts.changesProposed ?? 0,
    membershipChangesApplied: operator?.counts.changesApplied ?? 0,
    transfers: operator?.counts.transfers ?? 0,
  };
}

/** The protocol's tuning and the runtime's snapshot settings of one run (swarm). */
function drawConfigs(prng: Prng, mutants: RaftMutants,
  snapshotsOn: boolean): { tuning: RaftTuning; runtimeConfig: RaftRuntimeConfig } {
  const drawnTuning = drawTuning(prng, mutants);
  if (!snapshotsOn) return { tuning: drawnTuning, runtimeConfig: NO_SNAPSHOTS };
  const snapshots = drawSnapshotConfig(prng);
  return {
    tuning: { ...drawnTuning, snapshotChunkBytesMax: snapshots.chunkBytes },
    runtimeConfig: snapshots.runtime,
  };
}

interface HostsSetup {
  readonly scheduler: Scheduler;
  readonly network: SimNetwork<RaftMessage>;
  readonly prng: Prng;
  /** The bootstrap voters, and the spare nodes (learners of their own config only). */
  readonly ids: readonly NodeId[];
  readonly spares: readonly NodeId[];
  readonly tuning: RaftTuning;
  readonly runtimeConfig: RaftRuntimeConfig;
  readonly checker: RaftChecker;
  readonly violations: Violation[];
  readonly onLeader: (id: NodeId) => void;
}

function createHosts(setup: HostsSetup): Map<NodeId, SimHost<RaftMessage, RaftProcess>> {
  const { scheduler, network, prng, ids, spares, tuning } = setup;
  const hosts = new Map<NodeId, SimHost<RaftMessage, RaftProcess>>();
  for (const id of [...ids, ...spares]) {
    // Every machine of the run is a known peer (the operator's list): a spare added by a leader
    // it has no config entry for still hears it.
    const knownPeers = [...ids, ...spares];
    const config: RaftConfig = spares.includes(id)
      ? { ...tuning, id, voters: ids, learners: [id], knownPeers }
      : { ...tuning, id, voters: ids, knownPeers };
    hosts.set(id, new SimHost<RaftMessage, RaftProcess>(id, scheduler, network, prng.fork(), {
      clock: { driftRate: 0, monotonicOffsetMs: prng.nextUint32() % 100_000, wallOffsetMs: 0 },
      storage: { syncLatencyMs: 0.1 + 0.9 * (prng.nextUint32() / 2 ** 32), unsyncedSurvivalRate: 0.5 },
    }, (context) => startProcess(context, config, setup.checker, setup.violations,
      () => scheduler.nowMs, setup.runtimeConfig, setup.onLeader)));
  }
  return hosts;
}

/** The default scenario never snapshots (its seeds and speed stay as they were). */
const NO_SNAPSHOTS: RaftRuntimeConfig = { ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: 0 };

/** Nodes outside the cluster at the start, for --membership to add. */
const SPARE_NODES = 2;

export function startProcess(context: HostContext<RaftMessage>, config: RaftConfig, checker: RaftChecker,
  violations: Violation[], nowMs: () => number, runtimeConfig: RaftRuntimeConfig = NO_SNAPSHOTS,
  onLeader: (id: NodeId) => void = () => undefined): RaftProcess {
  const opened = openWal(context.storage, { ...WAL_DEFAULTS, segmentBytesMax: 64 * 1024 });
  if ('error' in opened) {
    violations.push({ checker: 'wal-recovery', atMs: nowMs(), message: `${context.id}: ${opened.error.message}` });
    throw new Error(opened.error.message);
  }
  const stateMachine = new SimKvStateMachine();
  let runtime: RaftRuntime<KvOutput> | undefined;
  const termAt = (index: LogIndex): number => (index <= 0 ? 0 : runtime?.node.termAt(index) ?? 0);
  const storage = new CheckedRaftStorage(opened.wal, context.id, checker, termAt);
  runtime = new RaftRuntime<KvOutput>(config, {
    clock: context.clock,
    timer: context.timer,
    transport: context.transport,
    storage,
    random: context.random,
    stateMachine: {
      apply: (entry) => {
        checker.onApply(context.id, entry);
        checker.onStateMachineInput(context.id, `entry ${entry.index}`, entry.data);
        return stateMachine.apply(entry);
      },
      snapshot: () => stateMachine.snapshot(),
      restore: (data) => {
        checker.onStateMachineInput(context.id, 'snapshot', data);
        stateMachine.restore(data);
      },
    },
    onEvent: (event) => {
      checker.onRaftEvent(context.id, event);
      if (event.kind === 'role-changed') {
        context.recorder?.note({ kind: 'role', atMs: nowMs(), node: context.id, term: event.term,
          from: event.from, to: event.to, reason: event.reason });
      }
      if (event.kind === 'role-changed' && event.to === 'leader') {
        checker.onLeader(context.id, event.term, (index) => runtime!.node.entry(index),
          runtime!.node.status().compactedIndex);
        onLeader(context.id);
      }
    },
    onFatal: (error) => violations.push({ checker: 'storage', atMs: nowMs(), message: error.message }),
  }, runtimeConfig);
  const started = runtime;
  return { runtime: started, stateMachine, halt: () => started.stop('node crashed') };
}

/** The client operations of a run, into its recording (call to return, with the outcome). */
export function recordHistory(recorder: SimRecorder,
  operations: readonly Operation<KvInput, KvOutput>[]): void {
  for (const op of operations) {
    recorder.note({ kind: 'client', atMs: op.call, endMs: op.return ?? -1, client: op.clientId,
      op: describeKvInput(op.input), outcome: op.outcome === 'ok'
        ? `ok ${JSON.stringify(op.output ?? null)}` : op.outcome });
  }
}

function describeKvInput(input: KvInput): string {
  return JSON.stringify(input);
}

/**
 * A ReadIndex read of `key` at `node`: its state machine is read inside the runtime's callback,
 * the moment it has applied the read's index.
 */
export function readAt(hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>, node: NodeId,
  key: string, done: (answer: ReadAnswer) => void): void {
  hosts.get(node)!.submit((p) => p.runtime.read((outcome) => {
    done(outcome.kind === 'ready' ? { kind: 'ok', value: p.stateMachine.get(key) } : { kind: 'failed' });
  }));
}

function healAll(network: SimNetwork<RaftMessage>, hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>): void {
  network.heal();
  network.setFaults({ ...network.currentFaults, lossRate: 0, duplicateRate: 0 });
  for (const host of hosts.values()) if (!host.isUp) host.restart();
}

/**
 * Swarm over the tuning too: narrow election-timeout spreads make split votes (and the windows
 * where a forgotten vote matters) common; small messages and windows make replication go entry
 * by entry (where committing an old-term entry by count shows). Every choice is a valid config.
 */
function drawTuning(prng: Prng, mutants: RaftMutants): RaftTuning {
  const pick = <T>(choices: readonly T[]): T => choices[prng.nextUint32() % choices.length]!;
  const base = RAFT_DEFAULTS_LOCAL;
  return {
    ...base,
    electionTimeoutMsMax: base.electionTimeoutMsMin + pick([30, 100, 300]),
    entriesPerMessageMax: pick([1, 4, 64, 1024]),
    inflightMessagesMax: pick([1, 4, 256]),
    mutants,
  };
}

/**
 * With --snapshots: snapshot every few dozen entries and keep little log behind, so compaction,
 * recovery from snapshots and InstallSnapshot (in small chunks) happen many times per run.
 */
function drawSnapshotConfig(prng: Prng): { runtime: RaftRuntimeConfig; chunkBytes: number } {
  const pick = <T>(choices: readonly T[]): T => choices[prng.nextUint32() % choices.length]!;
  return {
    runtime: {
      ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: pick([10, 40, 150]), snapshotCatchUpEntries: pick([0, 5, 50]),
    },
    chunkBytes: pick([64, 512, 65_536]),
  };
}

/**
 * The last act of the liveness phase, on a quiet cluster: the leader takes one more write and
 * crashes a moment later (0.3–4 ms: the followers may hold the entry without knowing it is
 * committed), then restarts. The next leader must commit that tail by itself — its no-op at the
 * start of its term does it (Raft §8) — so that at the end every log is fully committed.
 */
function crashLeaderAfterWrite(prng: Prng, scheduler: Scheduler,
  hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>): void {
  const leader = [...hosts.values()].find((h) => h.process?.runtime.status().role === 'leader');
  if (leader === undefined) return;
  leader.submit((p) => p.runtime.propose(encodeKvCommand({ kind: 'put', key: 'k0', value: 'last' }), () => undefined));
  const delayMs = 0.3 + 3.7 * (prng.nextUint32() / 2 ** 32);
  scheduler.schedule(delayMs, () => {
    leader.crash();
    scheduler.schedule(200, () => leader.restart());
  });
}

/** After the heal: a leader committed client work in time, and every replica converged. */
function livenessViolations(hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>,
  workload: RaftWorkload, healedAtMs: number, endMs: number, electionTimeoutMsMax: number): Violation[] {
  const violations: Violation[] = [];
  // A pre-vote round, a vote round and a no-op commit fit in a few election timeouts.
  const boundMs = 5 * electionTimeoutMsMax;
  const firstOk = workload.okAtMs.find((t) => t >= healedAtMs);
  if (firstOk === undefined || firstOk - healedAtMs > boundMs) {
    violations.push({
      checker: 'liveness', atMs: endMs,
      message: `no client write committed within ${boundMs} ms of the heal (first: ${firstOk ?? 'none'})`,
    });
  }
  // Only members must converge: a removed node, or a spare never added, is left behind.
  const members = finalMembers(hosts);
  for (const [id, host] of hosts) {
    const status = host.process?.runtime.status();
    if (!members.has(id)) continue;
    if (status !== undefined && status.commitIndex !== status.lastIndex) {
      violations.push({
        checker: 'fully-committed', atMs: endMs,
        message: `${id} ends with entries ${status.commitIndex + 1}..${status.lastIndex} uncommitted ` +
          `on a quiet, healed cluster (term ${status.term}, role ${status.role})`,
      });
    }
  }
  const digests = new Map<string, NodeId[]>();
  for (const [id, host] of hosts) {
    if (!members.has(id)) continue;
    const digest = host.process?.stateMachine.digest() ?? 'down';
    digests.set(digest, [...(digests.get(digest) ?? []), id]);
  }
  if (digests.size !== 1) {
    const views = [...digests].map(([d, ns]) => `${ns.join(',')}=${d}`).join(' ');
    violations.push({ checker: 'convergence', atMs: endMs, message: `replicas differ at the end: ${views}` });
  }
  return violations;
}

/** The members (voters and learners) per the node that committed furthest. */
function finalMembers(hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>): Set<NodeId> {
  let best: { commitIndex: number; members: NodeId[] } | undefined;
  for (const host of hosts.values()) {
    const status = host.process?.runtime.status();
    if (status === undefined || (best !== undefined && status.commitIndex <= best.commitIndex)) continue;
    best = { commitIndex: status.commitIndex,
      members: [...status.membership.voters, ...status.membership.learners] };
  }
  return new Set(best?.members ?? hosts.keys());
}

/** `unknown` fails the seed too, unless the history is too big for the checker. */
function checkHistory(workload: RaftWorkload, violations: Violation[],
  nowMs: number): HistoryVerdict {
  const result = checkLinearizable(kvModel, workload.history.operations(),
    { stepBudget: 2_000_000 });
  const judged = judgeHistory(result, nowMs);
  if (judged.violation !== undefined) violations.push(judged.violation);
  return judged.verdict;
}

export function numberOption(options: ScenarioOptions, name: string): number {
  const value = options[name];
  assert(typeof value === 'number', () => `option ${name} must be a number: ${String(value)}`);
  return value;
}

function summarizeRaft(results: readonly SeedResult<RaftFigures>[]): SummaryReport {
  const sum = (f: (r: RaftFigures) => number): number => results.reduce((s, r) => s + f(r.figures), 0);
  const verdicts = (v: string): number => results.filter((r) => r.figures.linearizability === v)
    .length;
  const unknownChecks = verdicts('unknown');
  const tooBigChecks = verdicts('too-big');
  const recoveries = results.map((r) => r.figures.recoveryMs).filter((x): x is number => x !== undefined);
  const lines = [
    `client calls: ${sum((f) => f.ok)} ok (${sum((f) => f.reads)} ReadIndex reads), ${sum((f) => f.failed)} failed, ` +
      `${sum((f) => f.unknown)} unknown; ` +
      `${sum((f) => f.committed)} entries committed`,
    `faults: ${sum((f) => f.crashes)} crashes, ${sum((f) => f.partitions)} partitions; ` +
      `${sum((f) => f.elections)} elections won`,
    ...(sum((f) => f.membershipChanges) === 0 ? [] : [
      `membership: ${sum((f) => f.membershipChanges)} changes proposed, ` +
        `${sum((f) => f.membershipChangesApplied)} applied; ${sum((f) => f.transfers)} leadership transfers`]),
    ...(sum((f) => f.snapshotsSaved) === 0 ? [] : [
      `snapshots: ${sum((f) => f.snapshotsSaved)} taken, ${sum((f) => f.snapshotsInstalled)} ` +
        'installed from a leader']),
    `linearizability: ${verdicts('ok')} histories ok, ${verdicts('illegal')} illegal, `
      + `${unknownChecks} unknown (budget ran out: failed), ${tooBigChecks} too big for the `
      + `checker (not checked), ${verdicts('skipped')} skipped (another checker failed)`,
    `after the heal, first commit within ${formatNumber(Math.max(0, ...recoveries), 0)} ms at worst`,
    ...hostileLines(results),
  ];
  return {
    lines,
    data: {
      ok: sum((f) => f.ok), failed: sum((f) => f.failed), unknown: sum((f) => f.unknown),
      elections: sum((f) => f.elections), crashes: sum((f) => f.crashes), unknownChecks,
      tooBigChecks,
      rejected: rejectedTotals(results),
      ...hostileData(results),
    },
    violations: [],
  };
}

function rejectedTotals(results: readonly SeedResult<RaftFigures>[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const r of results) {
    for (const [reason, n] of Object.entries(r.figures.rejected)) {
      totals[reason] = (totals[reason] ?? 0) + n;
    }
  }
  return Object.fromEntries(Object.entries(totals).sort(([a], [b]) => a.localeCompare(b)));
}

function hostileData(results: readonly SeedResult<RaftFigures>[]): Record<string, unknown> {
  const hostile = results.map((r) => r.figures.hostile).filter((h) => h !== undefined);
  if (hostile.length === 0) return {};
  const sum = (f: (h: HostileCounts) => number): number => hostile.reduce((s, h) => s + f(h), 0);
  return {
    hostile: {
      seedsAuthenticated: hostile.filter((h) => h.model === 'authenticated').length,
      seedsUnauthenticated: hostile.filter((h) => h.model === 'unauthenticated').length,
      asSelf: sum((h) => h.asSelf), spoofed: sum((h) => h.spoofed),
      malformed: sum((h) => h.malformed),
    },
  };
}

/** With --hostile: what the forger sent, and what the cores rejected, by reason. */
function hostileLines(results: readonly SeedResult<RaftFigures>[]): string[] {
  const data = hostileData(results)['hostile'] as
    | { seedsAuthenticated: number; seedsUnauthenticated: number; asSelf: number; spoofed: number;
      malformed: number }
    | undefined;
  if (data === undefined) return [];
  return [
    `hostile: ${data.seedsAuthenticated} seeds authenticated, ` +
      `${data.seedsUnauthenticated} unauthenticated; ` +
      `forged frames: ${data.asSelf} as evil, ${data.spoofed} under member ids, ` +
      `${data.malformed} malformed (refused by the validator)`,
    `rejected by the cores: ${formatCounts(rejectedTotals(results))}`,
  ];
}
