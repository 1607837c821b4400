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
import type { NodeId } from '../../../core/ids.js';
import { directedScenario, type DirectedWorld } from './directed.js';
import { encodeKvCommand } from './sim-kv.js';

const ackCrash = directedScenario({
  name: 'raft-ack-crash',
  summary: 'a follower dies between acknowledging an entry and syncing it (acks must follow fsync)',
  nodes: 3,
  // Slow disks and power loss: nothing unsynced survives a crash.
  storage: { syncLatencyMs: 5, unsyncedSurvivalRate: 0 },
  completeAtStep: 3,
  play: playAckCrash,
});

export const raftAckCrashScenario = ackCrash.scenario;
export const runAckCrashSeed = ackCrash.run;

function playAckCrash(world: DirectedWorld): number {
  const { ids, hosts, network, until, status } = world;
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
