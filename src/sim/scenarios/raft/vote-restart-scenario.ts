/**
 * Scenario `raft-vote-restart`: a voter restarts between two candidates' requests of one term,
 * the shape behind two-leaders-in-a-term bugs (an unpersisted or reset vote). Three nodes, each
 * step triggered by the cluster's state, latencies and timers from the seed:
 *
 * 1. Y is paused (SIGSTOP); the leader crashes and restarts at once (no leader anywhere).
 * 2. One of the other two, W, wins some term T with the vote of the third, U.
 * 3. W is cut off from everyone; U crashes and restarts at once, after its vote is on disk.
 * 4. Y resumes (still in an older term) and campaigns for T, asking U. A correct U remembers
 *    (on disk) that it voted for W in T and refuses; with the mutant `voteNotPersisted` it
 *    grants, and Y becomes a second leader of T: election safety catches it.
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

type Hosts = ReadonlyMap<NodeId, SimHost<RaftMessage, RaftProcess>>;

export interface VoteRestartFigures {
  readonly stepsReached: number;
}

export const raftVoteRestartScenario: Scenario<VoteRestartFigures> = {
  name: 'raft-vote-restart',
  summary: 'a voter restarts between two candidates of one term (votes must survive restarts)',
  flags: [{
    name: 'mutant', kind: 'string', description: 'TEST-ONLY: plant a known Raft bug',
    defaultValue: undefined, choices: RAFT_MUTANT_NAMES,
  }],
  runSeed: (seed, options) => runVoteRestartSeed(seed, options),
  summarize: (results): SummaryReport => {
    const complete = results.filter((r) => r.figures.stepsReached >= 4).length;
    return { lines: [`the double-request situation was set up in ${complete} of ${results.length} seeds`], data: { complete }, violations: [] };
  },
};

export function runVoteRestartSeed(seed: number, options: ScenarioOptions): SeedResult<VoteRestartFigures> {
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
  const ids = Array.from({ length: 3 }, (_, i) => nodeId(`n${i + 1}`));
  const violations: Violation[] = [];
  const hosts = new Map<NodeId, SimHost<RaftMessage, RaftProcess>>();
  for (const id of ids) {
    const config: RaftConfig = { ...RAFT_DEFAULTS_LOCAL, mutants, id, voters: ids };
    hosts.set(id, new SimHost<RaftMessage, RaftProcess>(id, scheduler, network, prng.fork(), {
      clock: { driftRate: 0, monotonicOffsetMs: prng.nextUint32() % 100_000, wallOffsetMs: 0 },
      storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
    }, (context) => startProcess(context, config, checker, violations, () => scheduler.nowMs)));
  }
  const broken = (): boolean => checker.violations.length > 0 || violations.length > 0;
  let stepsReached = 0;
  try {
    stepsReached = playVoteRestart(scheduler, network, hosts, ids, broken);
    network.heal();
    for (const host of hosts.values()) {
      host.resume();
      if (!host.isUp) host.restart();
    }
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

function playVoteRestart(scheduler: Scheduler, network: SimNetwork<RaftMessage>, hosts: Hosts,
  ids: readonly NodeId[], broken: () => boolean): number {
  const until = (what: () => boolean, withinMs: number): boolean =>
    scheduler.runUntil(scheduler.nowMs + withinMs, () => broken() || what()) && !broken();
  const status = (id: NodeId) => hosts.get(id)?.process?.runtime.status();
  const bounce = (id: NodeId): void => {
    hosts.get(id)!.crash();
    hosts.get(id)!.restart();
  };
  if (!until(() => ids.some((id) => status(id)?.role === 'leader' && status(id)!.commitIndex > 0), 5_000)) return 0;
  const v = ids.find((id) => status(id)?.role === 'leader')!;
  const [first, second] = ids.filter((id) => id !== v) as [NodeId, NodeId];
  // 1: no leader anywhere; `second` paused.
  hosts.get(second)!.pause(60_000);
  bounce(v);
  // 2: one of V and `first` wins term T with the other's vote.
  if (!until(() => status(v)?.role === 'leader' || status(first)?.role === 'leader', 5_000)) return 1;
  const winner = status(v)?.role === 'leader' ? v : first;
  const voter = winner === v ? first : v;
  const term = status(winner)!.term;
  // 3: the winner is cut off from everyone; the voter restarts once its vote is durable.
  for (const other of ids.filter((id) => id !== winner)) {
    network.blockLink(winner, other);
    network.blockLink(other, winner);
  }
  if (!until(() => status(voter)?.vote === winner, 100)) return 2;
  until(() => false, 5);
  bounce(voter);
  // 4: `second` wakes up (still in an older term) and campaigns for T, asking the voter.
  hosts.get(second)!.resume();
  until(() => status(second)?.role === 'leader' || (status(second)?.term ?? 0) > term, 3_000);
  return 4;
}
