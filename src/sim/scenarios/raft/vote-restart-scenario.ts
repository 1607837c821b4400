/**
 * Scenario `raft-vote-restart`: a voter restarts between two candidates' requests of one term,
 * the shape behind two-leaders-in-a-term bugs (an unpersisted or reset vote). Three nodes by
 * default (`--nodes 5` too), each step triggered by the cluster's state, latencies and timers
 * from the seed. With M the majority of N nodes:
 *
 * 1. N − M nodes (the sleepers, Y) are paused (SIGSTOP); the leader crashes and restarts at once
 *    (no leader anywhere). M nodes are awake: just enough for a majority.
 * 2. One of the awake, W, wins some term T with the votes of the other awake ones (U).
 * 3. W is cut off from everyone; 2M − N of its voters crash and restart at once, after their
 *    votes are on disk (one, for an odd N).
 * 4. The first sleeper resumes (still in an older term) and campaigns for T; once it does, the
 *    other sleepers resume too. The sleepers and the restarted voters are a majority. A correct
 *    voter remembers (on disk) that it voted for W in T and refuses; with the mutant
 *    `voteNotPersisted` it grants, and the sleeper becomes a second leader of T: election
 *    safety catches it.
 * 5. Everything heals; the cluster must converge.
 */
import type { NodeId } from '../../../core/ids.js';
import { directedScenario, type DirectedWorld } from './directed.js';

const voteRestart = directedScenario({
  name: 'raft-vote-restart',
  summary: 'a voter restarts between two candidates of one term (votes must survive restarts)',
  nodes: 3,
  nodesRange: { min: 3, max: 5 },
  storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
  completeAtStep: 4,
  play: playVoteRestart,
});

export const raftVoteRestartScenario = voteRestart.scenario;
export const runVoteRestartSeed = voteRestart.run;

function playVoteRestart(world: DirectedWorld): number {
  const { ids, hosts, network, until, status, bounce } = world;
  const leading = (id: NodeId): boolean => status(id)?.role === 'leader';
  if (!until(() => ids.some((id) => leading(id) && status(id)!.commitIndex > 0), 5_000)) return 0;
  const v = ids.find(leading)!;
  const majority = Math.floor(ids.length / 2) + 1;
  const others = ids.filter((id) => id !== v);
  const awake = [v, ...others.slice(0, majority - 1)];
  const sleepers = others.slice(majority - 1);
  // 1: no leader anywhere; the sleepers paused.
  for (const sleeper of sleepers) hosts.get(sleeper)!.pause(60_000);
  // With more than one sleeper, W's vote requests would wait in their queues and be granted on
  // resume (W then holds every vote of T): the sleepers are cut off while they sleep.
  if (sleepers.length > 1) network.partition([sleepers, awake]);
  bounce(v);
  // 2: one of the awake wins term T with the others' votes.
  if (!until(() => awake.some(leading), 5_000)) return 1;
  const winner = awake.find(leading)!;
  const forgetful = awake.filter((id) => id !== winner).slice(0, 2 * majority - ids.length);
  const term = status(winner)!.term;
  // 3: the winner is cut off from everyone; its voters restart once their votes are durable.
  if (sleepers.length > 1) network.heal();
  network.partition([[winner], ids.filter((id) => id !== winner)]);
  if (!until(() => forgetful.every((id) => status(id)?.vote === winner), 100)) return 2;
  until(() => false, 5);
  for (const voter of forgetful) bounce(voter);
  // 4: the first sleeper wakes up (still in an older term) and campaigns for T; then the rest.
  const [first, ...rest] = sleepers as [NodeId, ...NodeId[]];
  hosts.get(first)!.resume();
  const campaigned = (id: NodeId): boolean => leading(id) || (status(id)?.term ?? 0) > term;
  if (rest.length > 0) {
    until(() => (status(first)?.term ?? 0) >= term, 3_000);
    for (const sleeper of rest) hosts.get(sleeper)!.resume();
  }
  until(() => sleepers.some(campaigned), 3_000);
  return 4;
}
