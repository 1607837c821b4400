/**
 * Shared scaffolding of the directed Raft scenarios (raft-figure8, raft-vote-restart,
 * raft-ack-crash): a small cluster of the real code on simulated hosts with the safety checkers
 * on, a script that advances the run until the cluster reaches a state (never by fixed times),
 * and the common ending: heal everything, let the cluster converge, report.
 */
import { nodeId, type NodeId } from '../../../core/ids.js';
import {
  RAFT_DEFAULTS_LOCAL, type RaftConfig, type RaftMessage, type RaftStatus, type RaftTuning,
} from '../../../core/raft/index.js';
import { Prng } from '../../prng.js';
import type {
  Scenario, ScenarioOptions, SeedProgressListener, SeedResult, SummaryReport, Violation,
} from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import type { SimRecorder } from '../../sim-recorder.js';
import { SimHost } from '../../sim-host.js';
import type { SimNetwork } from '../../sim-network.js';
import type { SimStorageOptions } from '../../sim-storage.js';
import { TraceHash } from '../../trace-hash.js';
import { RaftChecker } from './raft-checker.js';
import { mutantsFrom, quietRaftNetwork, RAFT_MUTANT_NAMES, startProcess, type RaftProcess } from './raft-scenario.js';
import { mutantFlagDescription } from '../../mutant-catches.js';
import { RAFT_MUTANT_CATCHES } from './raft-mutant-catches.js';

export interface DirectedFigures {
  /** How far the script got; the scenario's doc says what each step is. */
  readonly stepsReached: number;
}

/** What a script works with. */
export interface DirectedWorld {
  readonly ids: readonly NodeId[];
  readonly hosts: ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>;
  readonly network: SimNetwork<RaftMessage>;
  /** Runs until `what` holds (true) or `withinMs` passes or an invariant breaks (false). */
  until(what: () => boolean, withinMs: number): boolean;
  status(id: NodeId): RaftStatus | undefined;
  /** kill -9 and an immediate restart. */
  bounce(id: NodeId): void;
}

export interface DirectedSpec {
  readonly name: string;
  readonly summary: string;
  /** Cluster size by default. */
  readonly nodes: number;
  /** When set, `--nodes` may choose another size in [min, max] (the script must handle it). */
  readonly nodesRange?: { readonly min: number; readonly max: number };
  readonly tuning?: Partial<RaftTuning>;
  readonly storage: SimStorageOptions;
  /** The last step number that means "the dangerous situation was set up". */
  readonly completeAtStep: number;
  readonly play: (world: DirectedWorld) => number;
}

export function directedScenario(spec: DirectedSpec): {
  scenario: Scenario<DirectedFigures>;
  run: (seed: number, options: ScenarioOptions, recorder?: SimRecorder) =>
    SeedResult<DirectedFigures>;
} {
  const run = (seed: number, options: ScenarioOptions,
    recorder?: SimRecorder): SeedResult<DirectedFigures> =>
    runDirected(spec, seed, options, recorder);
  const scenario: Scenario<DirectedFigures> = {
    name: spec.name,
    summary: spec.summary,
    flags: [...spec.nodesRange === undefined ? [] : [{
      name: 'nodes', kind: 'integer' as const, description: 'cluster size',
      defaultValue: spec.nodes, min: spec.nodesRange.min, max: spec.nodesRange.max,
    }], {
      name: 'mutant', kind: 'string', description: mutantFlagDescription('Raft bug'),
      defaultValue: undefined, choices: RAFT_MUTANT_NAMES,
    }],
    mutantCatches: RAFT_MUTANT_CATCHES,
    runSeed: (seed, options, _progress?: SeedProgressListener, recorder?: SimRecorder) =>
      run(seed, options, recorder),
    records: true,
    summarize: (results): SummaryReport => {
      const complete = results.filter((r) => r.figures.stepsReached >= spec.completeAtStep).length;
      return {
        lines: [`the scripted situation was set up in ${complete} of ${results.length} seeds`],
        data: { complete }, violations: [],
      };
    },
  };
  return { scenario, run };
}

function runDirected(spec: DirectedSpec, seed: number, options: ScenarioOptions,
  recorder?: SimRecorder): SeedResult<DirectedFigures> {
  const mutant = options['mutant'];
  const mutants = mutantsFrom(options);
  const prng = new Prng(seed);
  const scheduler = new Scheduler(recorder);
  const trace = new TraceHash();
  const checker = new RaftChecker(() => scheduler.nowMs);
  const network = quietRaftNetwork(scheduler, prng, trace);
  const nodes = typeof options['nodes'] === 'number' ? options['nodes'] : spec.nodes;
  const ids = Array.from({ length: nodes }, (_, i) => nodeId(`n${i + 1}`));
  const violations: Violation[] = [];
  const hosts = new Map<NodeId, SimHost<RaftMessage, RaftProcess>>();
  for (const id of ids) {
    const config: RaftConfig = { ...RAFT_DEFAULTS_LOCAL, ...spec.tuning, mutants, id, voters: ids };
    hosts.set(id, new SimHost<RaftMessage, RaftProcess>(id, scheduler, network, prng.fork(), {
      clock: { driftRate: 0, monotonicOffsetMs: prng.nextUint32() % 100_000, wallOffsetMs: 0 },
      storage: spec.storage,
    }, (context) => startProcess(context, config, checker, violations, () => scheduler.nowMs)));
  }
  const broken = (): boolean => checker.violations.length > 0 || violations.length > 0;
  const world: DirectedWorld = {
    ids, hosts, network,
    until: (what, withinMs) => scheduler.runUntil(scheduler.nowMs + withinMs, () => broken() || what()) && !broken(),
    status: (id) => hosts.get(id)?.process?.runtime.status(),
    bounce: (id) => {
      hosts.get(id)!.crash();
      hosts.get(id)!.restart();
    },
  };
  let stepsReached = 0;
  try {
    stepsReached = spec.play(world);
    network.heal();
    for (const host of hosts.values()) {
      host.resume();
      if (!host.isUp) host.restart();
    }
    scheduler.runUntil(scheduler.nowMs + 5_000, broken);
  } catch (error) {
    // An assertion inside the real code is a failed seed, reported with its replay command.
    violations.push({ checker: 'assertion', atMs: scheduler.nowMs, message: String(error) });
  }
  violations.push(...checker.violations);
  return {
    seed, traceHash: trace.digest(), violations, figures: { stepsReached },
    simulatedMs: scheduler.nowMs, events: scheduler.eventsRun, drawn: { mutant: mutant ?? 'none' },
  };
}

/** The leader among `among`, if exactly one of them leads now. */
export function leaderAmong(world: DirectedWorld, among: readonly NodeId[]): NodeId | undefined {
  return among.find((id) => world.status(id)?.role === 'leader');
}
