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
import type { NodeId } from '../../../core/ids.js';
import { directedScenario, type DirectedWorld } from './directed.js';

const voteRestart = directedScenario({
  name: 'raft-vote-restart',
  summary: 'a voter restarts between two candidates of one term (votes must survive restarts)',
  nodes: 3,
  storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
  completeAtStep: 4,
  play: playVoteRestart,
});

export const raftVoteRestartScenario = voteRestart.scenario;
export const runVoteRestartSeed = voteRestart.run;

function playVoteRestart(world: DirectedWorld): number {
  const { ids, hosts, network, until, status, bounce } = world;
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
