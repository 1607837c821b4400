/**
 * Scenario `raft-ack-crash`: a follower acknowledges an entry, the leader commits it, and the
 * follower's machine dies before its disk has the entry — the shape behind "acknowledged before
 * fsync" bugs. Three nodes on slow disks (5 ms syncs), each step triggered by the cluster's state:
 *
 * 1. The leader L is cut off from F2; it appends E, which only F1 can store.
 * 2. The moment L's commit index covers E: F1 loses power (unsynced bytes gone) and L is cut off.
 * 3. F1 restarts; F1 and F2 elect a leader. A correct F1 acknowledged only after its sync, so it
 *    still has E and so does the new leader. With the mutant `ackBeforeSync` F1 acknowledged
 *    early, lost E, and the new leader lacks an entry L committed and applied: leader
 *    completeness catches it.
 * 4. Everything heals; the cluster must converge.
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

export const raftAckCrashScenario: Scenario<{ readonly stepsReached: number }> = {
  name: 'raft-ack-crash',
  summary: 'a follower dies between acknowledging an entry and syncing it (acks must follow fsync)',
  flags: [{
    name: 'mutant', kind: 'string', description: 'TEST-ONLY: plant a known Raft bug',
    defaultValue: undefined, choices: RAFT_MUTANT_NAMES,
  }],
  runSeed: (seed, options) => runAckCrashSeed(seed, options),
  summarize: (results): SummaryReport => {
    const complete = results.filter((r) => r.figures.stepsReached >= 3).length;
    return { lines: [`the crash-after-ack situation was set up in ${complete} of ${results.length} seeds`], data: { complete }, violations: [] };
  },
};

export function runAckCrashSeed(seed: number, options: ScenarioOptions): SeedResult<{ readonly stepsReached: number }> {
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
      // Slow disks and power loss: nothing unsynced survives a crash.
      storage: { syncLatencyMs: 5, unsyncedSurvivalRate: 0 },
    }, (context) => startProcess(context, config, checker, violations, () => scheduler.nowMs)));
  }
  const broken = (): boolean => checker.violations.length > 0 || violations.length > 0;
  let stepsReached = 0;
  try {
    stepsReached = playAckCrash(scheduler, network, hosts, ids, broken);
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

function playAckCrash(scheduler: Scheduler, network: SimNetwork<RaftMessage>, hosts: Hosts,
  ids: readonly NodeId[], broken: () => boolean): number {
  const until = (what: () => boolean, withinMs: number): boolean =>
    scheduler.runUntil(scheduler.nowMs + withinMs, () => broken() || what()) && !broken();
  const status = (id: NodeId) => hosts.get(id)?.process?.runtime.status();
  if (!until(() => ids.some((id) => status(id)?.role === 'leader' && status(id)!.commitIndex > 0), 5_000)) return 0;
  const leader = ids.find((id) => status(id)?.role === 'leader')!;
  if (!until(() => ids.every((id) => status(id)?.commitIndex === status(leader)?.commitIndex), 1_000)) return 0;
  const [f1, f2] = ids.filter((id) => id !== leader) as [NodeId, NodeId];
  // 1: only F1 can store E.
  network.blockLink(leader, f2);
  network.blockLink(f2, leader);
  const index = status(leader)!.lastIndex + 1;
  hosts.get(leader)!.submit((p) => p.runtime.propose(encodeKvCommand({ kind: 'put', key: 'e', value: 'E' }), () => undefined));
  if (!until(() => (status(leader)?.commitIndex ?? 0) >= index, 2_000)) return 1;
  // 2: F1 loses power; L is cut off, applies E on its own, and is out of the game.
  hosts.get(f1)!.crash();
  network.partition([[leader], [f1, f2]]);
  if (!until(() => (status(leader)?.appliedIndex ?? 0) >= index, 1_000)) return 2;
  // 3: F1 and F2 elect a leader among themselves.
  hosts.get(f1)!.restart();
  until(() => status(f1)?.role === 'leader' || status(f2)?.role === 'leader', 5_000);
  return 3;
}
