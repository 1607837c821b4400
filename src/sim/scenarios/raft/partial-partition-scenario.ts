/**
 * Scenario `raft-partial-partition`: partial failures of the links around a healthy leader, the
 * shapes behind the Cloudflare 2020 outage. Even seeds: the link between the leader and one
 * follower fails both ways, while both still reach everyone else (with pre-vote and leader
 * stickiness the cut-off follower cannot depose the leader the others still hear from). Odd
 * seeds: the leader still sends but hears nobody (its heartbeats keep followers from campaigning;
 * only check-quorum makes it step down). Without check-quorum (mutant
 * `preVoteWithoutCheckQuorum`) the second shape leaves the cluster unable to commit for good.
 *
 * Checks (goal G11): at most 3 elections per simulated minute under the partial partition, and
 * client writes commit in every 5-second window. Safety checkers run as in `raft`.
 */
import { nodeId, type NodeId } from '../../../core/ids.js';
import { RAFT_DEFAULTS_LOCAL, type RaftConfig, type RaftMessage } from '../../../core/raft/index.js';
import { Prng } from '../../prng.js';
import type { Scenario, ScenarioOptions, SeedResult, SummaryReport, Violation } from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import { SimHost } from '../../sim-host.js';
import { formatNumber } from '../../stats.js';
import { TraceHash } from '../../trace-hash.js';
import { RaftChecker } from './raft-checker.js';
import {
  mutantsFrom, numberOption, quietRaftNetwork, RAFT_MUTANT_NAMES, readAt, startProcess, type RaftProcess,
} from './raft-scenario.js';
import { RaftWorkload } from './raft-workload.js';
import { mutantFlagDescription } from '../../mutant-catches.js';
import { RAFT_MUTANT_CATCHES } from './raft-mutant-catches.js';

export const ELECTIONS_PER_MINUTE_MAX = 3;
const WINDOW_MS = 5_000;

export interface PartialPartitionFigures {
  readonly electionsPerMinute: number;
  readonly ok: number;
  readonly emptyWindows: number;
}

export const raftPartialPartitionScenario: Scenario<PartialPartitionFigures> = {
  name: 'raft-partial-partition',
  summary: 'leader cut off from one follower only: elections per minute, and commits continue',
  flags: [
    { name: 'nodes', kind: 'integer', description: 'cluster size', defaultValue: 3, min: 3, max: 9 },
    { name: 'partition-s', kind: 'number', description: 'simulated seconds under the partial partition', defaultValue: 60, min: 10, max: 3600 },
    {
      name: 'mutant', kind: 'string', description: mutantFlagDescription('Raft bug'),
      defaultValue: undefined, choices: RAFT_MUTANT_NAMES,
    },
  ],
  mutantCatches: RAFT_MUTANT_CATCHES,
  runSeed: (seed, options) => runPartialPartitionSeed(seed, options),
  summarize: summarizePartialPartition,
};

export function runPartialPartitionSeed(seed: number, options: ScenarioOptions): SeedResult<PartialPartitionFigures> {
  const nodes = numberOption(options, 'nodes');
  const partitionMs = numberOption(options, 'partition-s') * 1000;
  const mutant = options['mutant'];
  const mutants = mutantsFrom(options);
  const prng = new Prng(seed);
  const scheduler = new Scheduler();
  const trace = new TraceHash();
  const checker = new RaftChecker(() => scheduler.nowMs);
  const network = quietRaftNetwork(scheduler, prng, trace);
  const ids = Array.from({ length: nodes }, (_, i) => nodeId(`n${i + 1}`));
  const violations: Violation[] = [];
  const hosts = new Map<NodeId, SimHost<RaftMessage, RaftProcess>>();
  for (const id of ids) {
    const config: RaftConfig = { ...RAFT_DEFAULTS_LOCAL, mutants, id, voters: ids };
    hosts.set(id, new SimHost<RaftMessage, RaftProcess>(id, scheduler, network, prng.fork(), {
      clock: { driftRate: 0, monotonicOffsetMs: prng.nextUint32() % 100_000, wallOffsetMs: 0 },
      storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
    }, (context) => startProcess(context, config, checker, violations, () => scheduler.nowMs)));
  }
  const warmUpMs = 3_000;
  const endMs = warmUpMs + partitionMs;
  const workload = new RaftWorkload(prng.fork(), scheduler, {
    nodeIds: ids,
    propose: (node, data, done) => hosts.get(node)!.submit((p) => p.runtime.propose(data, done)),
    read: (node, key, done) => readAt(hosts, node, key, done),
  }, {
    clients: 2, keys: 3, thinkMsMean: 50, callTimeoutMs: 1_200, stopAtMs: endMs, getsThroughLogRate: 0.25,
  });
  workload.start();
  scheduler.runUntil(warmUpMs);
  const leader = [...hosts].find(([, h]) => h.process?.runtime.status().role === 'leader')?.[0];
  const shape = seed % 2 === 0 ? 'one-link' : 'leader-deaf';
  const electionsBefore = checker.elections;
  if (leader === undefined) {
    violations.push({ checker: 'liveness', atMs: warmUpMs, message: 'no leader after the warm-up' });
  } else if (shape === 'one-link') {
    const follower = ids.find((id) => id !== leader)!;
    network.blockLink(leader, follower);
    network.blockLink(follower, leader);
  } else {
    // The leader still sends (its heartbeats keep everyone from campaigning) but hears nobody:
    // only check-quorum makes it step down.
    for (const id of ids) if (id !== leader) network.blockLink(id, leader);
  }
  scheduler.runUntil(endMs, () => checker.violations.length > 0);
  violations.push(...checker.violations);
  const electionsPerMinute = (checker.elections - electionsBefore) / (partitionMs / 60_000);
  if (electionsPerMinute > ELECTIONS_PER_MINUTE_MAX) {
    violations.push({
      checker: 'elections-per-minute', atMs: endMs,
      message: `${formatNumber(electionsPerMinute, 1)} elections per minute under a partial partition ` +
        `(at most ${ELECTIONS_PER_MINUTE_MAX})`,
    });
  }
  const emptyWindows = countEmptyWindows(workload.okAtMs, warmUpMs, endMs);
  if (emptyWindows > 0) {
    violations.push({
      checker: 'majority-keeps-committing', atMs: endMs,
      message: `${emptyWindows} windows of ${WINDOW_MS} ms without a committed client write`,
    });
  }
  return {
    seed, traceHash: trace.digest(), violations,
    figures: { electionsPerMinute, ok: workload.counts.ok, emptyWindows },
    simulatedMs: scheduler.nowMs, events: scheduler.eventsRun,
    drawn: { leader: leader ?? 'none', shape, mutant: mutant ?? 'none' },
  };
}

function countEmptyWindows(okAtMs: readonly number[], fromMs: number, toMs: number): number {
  let empty = 0;
  for (let start = fromMs; start + WINDOW_MS <= toMs; start += WINDOW_MS) {
    if (!okAtMs.some((t) => t >= start && t < start + WINDOW_MS)) empty++;
  }
  return empty;
}

function summarizePartialPartition(results: readonly SeedResult<PartialPartitionFigures>[]): SummaryReport {
  const rates = results.map((r) => r.figures.electionsPerMinute);
  const mean = rates.reduce((a, b) => a + b, 0) / Math.max(1, rates.length);
  return {
    lines: [`elections per minute under the partial partition: mean ${formatNumber(mean, 2)}, ` +
      `max ${formatNumber(Math.max(0, ...rates), 2)}`],
    data: { electionsPerMinuteMean: mean, electionsPerMinuteMax: Math.max(0, ...rates) },
    violations: [],
  };
}
