/**
 * Goal: the runtime's write path (Raft thesis §10.2.1 and group commit). The leader's appends
 * leave while its own sync of the same entries runs; an entry commits on a majority of
 * durable copies, the leader's counted only once its sync reported back; followers acknowledge
 * only after their own sync; and the runtime keeps taking proposals, acknowledgements and new
 * batches while a sync is in flight. Method: a 3-node RuntimeCluster (real runtime, WAL and KV
 * on simulated disks and network) whose nodes' sync reports a test can hold (SyncGate): the
 * data reaches the disk, but the node hears of it only on release.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeId } from '../../../src/core/ids.js';
import { encodeKvCommand } from '../../../src/sim/scenarios/raft/sim-kv.js';
import { RuntimeCluster } from './runtime-cluster.js';

interface Put {
  readonly index: () => number | undefined;
  readonly applied: () => boolean;
}

/** Proposes key=value at `leader`: the handle tells the entry's index and whether it applied. */
function put(c: RuntimeCluster, leader: NodeId, key: string, value: string): Put {
  let applied = false;
  const before = c.runtime(leader).status().lastIndex;
  c.runtime(leader).propose(encodeKvCommand({ kind: 'put', key, value }), (outcome) => {
    assert.equal(outcome.kind, 'applied');
    applied = true;
  });
  const index = c.runtime(leader).status().lastIndex > before ? before + 1 : undefined;
  return { index: () => index, applied: () => applied };
}

function cutOff(c: RuntimeCluster, a: NodeId, b: NodeId): void {
  c.network.blockLink(a, b);
  c.network.blockLink(b, a);
}

function followersOf(c: RuntimeCluster, leader: NodeId): [NodeId, NodeId] {
  return c.ids.filter((id) => id !== leader) as [NodeId, NodeId];
}

describe('runtime: raft: leader sync (thesis §10.2.1)', () => {
  test('a leader whose own sync has not reported commits on its followers\' copies', () => {
    const c = new RuntimeCluster({ seed: 31 });
    const leader = c.elect();
    c.syncGates.get(leader)!.hold();
    const p = put(c, leader, 'k', 'v');
    assert.ok(c.runUntil(p.applied, 100), 'applied without the leader\'s sync');
    const status = c.runtime(leader).status();
    assert.ok(status.stableIndex < p.index()!, `stable ${status.stableIndex} < ${p.index()}`);
    c.syncGates.get(leader)!.release();
    assert.ok(c.runUntil(() => c.runtime(leader).status().stableIndex === status.lastIndex, 100));
  });

  test('with one follower cut off, an entry waits for the leader\'s own sync', () => {
    const c = new RuntimeCluster({ seed: 32 });
    const leader = c.elect();
    const [f1, f2] = followersOf(c, leader);
    cutOff(c, leader, f2);
    c.syncGates.get(leader)!.hold();
    const p = put(c, leader, 'k', 'v');
    assert.equal(c.runUntil(p.applied, 300), false);
    const status = c.runtime(leader).status();
    assert.equal(status.progress.find((pr) => pr.id === f1)?.matchIndex, p.index(),
      `${f1} holds it durably`);
    assert.ok(status.commitIndex < p.index()!, 'one durable copy of three');
    c.syncGates.get(leader)!.release();
    assert.ok(c.runUntil(p.applied, 100));
  });

  test('a follower acknowledges an entry only after its own sync reported back', () => {
    const c = new RuntimeCluster({ seed: 33 });
    const leader = c.elect();
    const [f1, f2] = followersOf(c, leader);
    cutOff(c, leader, f2);
    c.syncGates.get(f1)!.hold();
    const p = put(c, leader, 'k', 'v');
    // Less than an election timeout: a follower whose disk never answers stops answering
    // heartbeats too (they queue behind the sync), and check-quorum would depose the leader.
    assert.equal(c.runUntil(p.applied, 100), false);
    assert.ok(c.runtime(f1).status().lastIndex >= p.index()!, `${f1} has the entry`);
    const match = c.runtime(leader).status().progress.find((pr) => pr.id === f1)?.matchIndex;
    assert.ok(match! < p.index()!, `no acknowledgement from ${f1} yet (match ${match})`);
    c.syncGates.get(f1)!.release();
    assert.ok(c.runUntil(p.applied, 100));
  });

  test('proposals replicate and commit batch after batch while a leader sync is in flight', () => {
    const c = new RuntimeCluster({ seed: 34 });
    const leader = c.elect();
    c.syncGates.get(leader)!.hold();
    const stableBefore = c.runtime(leader).status().stableIndex;
    for (let i = 0; i < 20; i++) {
      const p = put(c, leader, `k${i}`, `v${i}`);
      assert.ok(c.runUntil(p.applied, 100), `put ${i} applied`);
    }
    const status = c.runtime(leader).status();
    assert.equal(status.stableIndex, stableBefore, 'not one of its syncs reported back');
    assert.equal(status.appliedIndex, stableBefore + 20);
    c.syncGates.get(leader)!.release();
    assert.ok(c.runUntil(() => c.runtime(leader).status().stableIndex === status.lastIndex, 100));
  });
});
