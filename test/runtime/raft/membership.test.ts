/**
 * Goal: membership changes through the runtime: `addVoter` brings a new node in as a learner
 * and promotes it once caught up; removing the leader works (it steps down after its removal
 * commits, the cluster elects another without waiting an election timeout, and writes go on).
 * Method: a RuntimeCluster of 3 voters and 1 spare node (real runtime and WAL, simulated
 * network and disks, virtual time).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../src/core/ids.js';
import type { MembershipOutcome } from '../../../src/runtime/raft/raft-runtime.js';
import { encodeKvCommand } from '../../../src/sim/scenarios/raft/sim-kv.js';
import { RuntimeCluster } from './runtime-cluster.js';

function putAt(c: RuntimeCluster, node: string, value: string): string {
  let outcome: string | undefined;
  c.runtime(nodeId(node)).propose(encodeKvCommand({ kind: 'put', key: 'k', value }), (o) => {
    outcome = o.kind;
  });
  c.runUntil(() => outcome !== undefined, 3_000);
  return outcome ?? 'none';
}

describe('runtime: raft: membership', () => {
  test('addVoter: the new node joins as a learner and is promoted once caught up', () => {
    const c = new RuntimeCluster({ nodes: 3, spares: 1, seed: 41 });
    const leader = c.elect();
    for (let i = 0; i < 20; i++) assert.equal(putAt(c, leader, `v${i}`), 'applied');
    let outcome: MembershipOutcome | undefined;
    c.runtime(leader).addVoter(nodeId('n4'), (o) => {
      outcome = o;
    });
    c.runUntil(() => outcome !== undefined, 5_000);
    assert.equal(outcome?.kind, 'applied', JSON.stringify(outcome));
    const membership = c.runtime(leader).status().membership;
    assert.deepEqual([...membership.voters].sort(), ['n1', 'n2', 'n3', 'n4']);
    assert.deepEqual(membership.learners, []);
    c.runUntil(() => false, 200);
    assert.equal(c.hosts.get(nodeId('n4'))!.process!.stateMachine.get('k'), 'v19');
    assert.deepEqual([...c.runtime(nodeId('n4')).status().membership.voters].sort(),
      ['n1', 'n2', 'n3', 'n4']);
  });

  test('removing the leader: it steps down once committed, another leads at once', () => {
    const c = new RuntimeCluster({ nodes: 3, seed: 42 });
    const leader = c.elect();
    c.runUntil(() => false, 100);
    const startMs = c.scheduler.nowMs;
    let outcome: MembershipOutcome | undefined;
    c.runtime(leader).changeMembership({ kind: 'remove', node: leader }, (o) => {
      outcome = o;
    });
    c.runUntil(() => outcome !== undefined && c.leadersElectedSince(startMs).length > 0, 5_000);
    assert.equal(outcome?.kind, 'applied');
    const next = c.leadersElectedSince(startMs)[0]!;
    assert.notEqual(next.node, leader);
    assert.ok(next.atMs - startMs < c.tuning.electionTimeoutMsMin / 10,
      `new leader after ${next.atMs - startMs} ms`);
    assert.notEqual(c.runtime(leader).status().role, 'leader');
    assert.equal(putAt(c, next.node, 'after'), 'applied');
    c.runUntil(() => false, 2_000);
    assert.equal(c.leadersElectedSince(startMs).length, 1, 'the removed node does not disrupt');
  });

  test('a second change while one is pending, and a premature promotion, are refused', () => {
    const c = new RuntimeCluster({ nodes: 3, spares: 1, seed: 43 });
    const leader = c.elect();
    const reasons: string[] = [];
    const record = (o: MembershipOutcome): void => {
      reasons.push(o.kind === 'failed' ? o.reason : o.kind);
    };
    c.runtime(leader).changeMembership({ kind: 'add-learner', node: nodeId('n4') }, record);
    c.runtime(leader).changeMembership({ kind: 'add-learner', node: nodeId('n5') }, record);
    assert.match(reasons[0] ?? '', /^change-pending/);
    c.runUntil(() => reasons.length === 2, 2_000);
    assert.equal(reasons[1], 'applied');
  });
});
