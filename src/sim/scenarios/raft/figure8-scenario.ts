/**
 * Scenario `raft-figure8`: the Raft paper's Figure 8, played by the real code in the simulator,
 * each step triggered by the cluster's own state (not by fixed times), with the seed drawing the
 * network's latencies and the nodes' timers. Five nodes, entries replicated one per message:
 *
 * 1. Leader A and one follower B are cut off from C, D, E; A appends X at index i, B copies it.
 * 2. C, D, E elect a leader E' (term > A's); E' appends its no-op at index i and is cut off at
 *    once, so the no-op reaches nobody; it syncs it, then crashes.
 * 3. {A, B} rejoin C and D; A or B wins (its log ends in X) and replicates X to C or D before its
 *    own no-op. A correct leader does not commit X by counting (§5.4.2): only its no-op's commit
 *    commits X. The moment the new leader's commit index reaches i, {A, B} are cut off again
 *    (so nothing more leaves them), the leader applies X, and both crash.
 * 4. E' restarts. If X was committed without the no-op on a majority (mutant
 *    `commitPreviousTermByCount`), E' can win with C and D and overwrite index i: the checkers see
 *    a committed entry lost. A correct cluster never lets E' win.
 * 5. Everything heals; the cluster must converge.
 */
import { nodeId, type NodeId } from '../../../core/ids.js';
import {
  RAFT_DEFAULTS_LOCAL, RAFT_NO_MUTANTS, describeRaftMessage, type RaftConfig, type RaftMessage,
  type RaftMutants,
} from '../../../core/raft/index.js';
import { Prng } from '../../prng.js';
import type { Scenario, ScenarioOptions, SeedResult, SummaryReport, Violation } from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import { SimHost } from '../../sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../../sim-network.js';
import { TraceHash } from '../../trace-hash.js';
import { RaftChecker } from './raft-checker.js';
import { RAFT_MUTANT_NAMES, startProcess, type RaftProcess } from './raft-scenario.js';
import { encodeKvCommand } from './sim-kv.js';

type Hosts = ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>;

export interface Figure8Figures {
  /** How far the script got (1–5); 5 means the whole Figure 8 situation was set up. */
  readonly stepsReached: number;
}

export const raftFigure8Scenario: Scenario<Figure8Figures> = {
  name: 'raft-figure8',
  summary: 'Raft Figure 8 (committing a previous-term entry), scripted against the real code',
  flags: [{
    name: 'mutant', kind: 'string', description: 'TEST-ONLY: plant a known Raft bug',
    defaultValue: undefined, choices: RAFT_MUTANT_NAMES,
  }],
  runSeed: (seed, options) => runFigure8Seed(seed, options),
  summarize: (results): SummaryReport => {
    const complete = results.filter((r) => r.figures.stepsReached >= 5).length;
    return {
      lines: [`Figure 8 set up completely in ${complete} of ${results.length} seeds`],
      data: { complete }, violations: [],
    };
  },
};

export function runFigure8Seed(seed: number, options: ScenarioOptions): SeedResult<Figure8Figures> {
  const mutant = options['mutant'];
  const mutants: RaftMutants = typeof mutant === 'string' ? { ...RAFT_NO_MUTANTS, [mutant]: true } : RAFT_NO_MUTANTS;
  const prng = new Prng(seed);
  const scheduler = new Scheduler();
  const trace = new TraceHash();
  const checker = new RaftChecker(() => scheduler.nowMs);
  const network = new SimNetwork<RaftMessage>(scheduler, prng.fork(), trace, {
    faults: { ...NETWORK_FAULTS_NONE, latencyMsMeanExtra: 0.2 + 2 * (prng.nextUint32() / 2 ** 32), latencyMsMax: 10 },
    describe: describeRaftMessage, sizeBytes: () => 64,
  });
  const ids = Array.from({ length: 5 }, (_, i) => nodeId(`n${i + 1}`));
  const violations: Violation[] = [];
  const hosts = new Map<NodeId, SimHost<RaftMessage, RaftProcess>>();
  for (const id of ids) {
    const config: RaftConfig = { ...RAFT_DEFAULTS_LOCAL, entriesPerMessageMax: 1, inflightMessagesMax: 1, mutants, id, voters: ids };
    hosts.set(id, new SimHost<RaftMessage, RaftProcess>(id, scheduler, network, prng.fork(), {
      clock: { driftRate: 0, monotonicOffsetMs: prng.nextUint32() % 100_000, wallOffsetMs: 0 },
      storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
    }, (context) => startProcess(context, config, checker, violations, () => scheduler.nowMs)));
  }
  const broken = (): boolean => checker.violations.length > 0 || violations.length > 0;
  let stepsReached = 0;
  try {
    stepsReached = playFigure8(scheduler, network, hosts, ids, broken);
    network.heal();
    for (const host of hosts.values()) if (!host.isUp) host.restart();
    scheduler.runUntil(scheduler.nowMs + 5_000, broken);
  } catch (error) {
    violations.push({ checker: 'assertion', atMs: scheduler.nowMs, message: String(error) });
  }
  violations.push(...checker.violations);
  return {
    seed, traceHash: trace.digest(), violations, figures: { stepsReached },
    simulatedMs: scheduler.nowMs, events: scheduler.eventsRun, drawn: { mutant: mutant ?? 'none' },
  };
}

/** Runs the script; returns the last step reached (a step not reached in time ends the script). */
function playFigure8(scheduler: Scheduler, network: SimNetwork<RaftMessage>, hosts: Hosts,
  ids: readonly NodeId[], broken: () => boolean): number {
  const until = (what: () => boolean, withinMs: number): boolean =>
    scheduler.runUntil(scheduler.nowMs + withinMs, () => broken() || what()) && !broken();
  const status = (id: NodeId) => hosts.get(id)?.process?.runtime.status();
  const leaderAmong = (among: readonly NodeId[]): NodeId | undefined => among.find((id) => status(id)?.role === 'leader');
  // 0: a stable leader with everything committed.
  if (!until(() => { const l = leaderAmong(ids); return l !== undefined && status(l)!.commitIndex === status(l)!.lastIndex && status(l)!.commitIndex > 0; }, 5_000)) return 0;
  const a = leaderAmong(ids)!;
  const b = ids.find((id) => id !== a)!;
  const rest = ids.filter((id) => id !== a && id !== b);
  // 1: {A, B} | {C, D, E}; A appends X, B copies it.
  network.partition([[a, b], rest]);
  const xIndex = status(a)!.lastIndex + 1;
  hosts.get(a)!.submit((p) => p.runtime.propose(encodeKvCommand({ kind: 'put', key: 'x', value: 'X' }), () => undefined));
  if (!until(() => (status(b)?.lastIndex ?? 0) >= xIndex, 2_000)) return 1;
  // 2: C, D, E elect E'; cut E' off at once; it syncs its no-op at index i, then crashes.
  if (!until(() => leaderAmong(rest) !== undefined, 5_000)) return 2;
  const e = leaderAmong(rest)!;
  network.heal();
  network.partition([[a, b], rest.filter((id) => id !== e), [e]]);
  if (!until(() => (status(e)?.stableIndex ?? 0) >= xIndex, 1_000)) return 2;
  hosts.get(e)!.crash();
  // 3: {A, B} meet C and D; the new leader replicates X; crash it (and its partner) once it commits i.
  network.heal();
  if (!until(() => { const l = leaderAmong([a, b]); return l !== undefined && status(l)!.commitIndex >= xIndex; }, 5_000)) return 3;
  // Cut {A, B} off the moment the leader's commit index reaches i (before its next messages
  // leave), let it apply, then crash both.
  const l = leaderAmong([a, b])!;
  network.partition([[a, b], rest]);
  if (!until(() => (status(l)?.appliedIndex ?? 0) >= xIndex, 1_000)) return 3;
  for (const id of [a, b]) hosts.get(id)!.crash();
  network.heal();
  // 4: E' restarts among C and D: a correct cluster never lets it overwrite index i.
  hosts.get(e)!.restart();
  until(() => false, 3_000);
  return 5;
}
