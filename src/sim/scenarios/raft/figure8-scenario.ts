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
import type { NodeId } from '../../../core/ids.js';
import { directedScenario, leaderAmong as leaderOf, type DirectedWorld } from './directed.js';
import { encodeKvCommand } from './sim-kv.js';

const figure8 = directedScenario({
  name: 'raft-figure8',
  summary: 'Raft Figure 8 (committing a previous-term entry), scripted against the real code',
  nodes: 5,
  tuning: { entriesPerMessageMax: 1, inflightMessagesMax: 1 },
  storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
  completeAtStep: 5,
  play: playFigure8,
});

export const raftFigure8Scenario = figure8.scenario;
export const runFigure8Seed = figure8.run;

/** Runs the script; returns the last step reached (a step not reached in time ends the script). */
function playFigure8(world: DirectedWorld): number {
  const { ids, hosts, network, until, status } = world;
  const leaderAmong = (among: readonly NodeId[]): NodeId | undefined => leaderOf(world, among);
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
