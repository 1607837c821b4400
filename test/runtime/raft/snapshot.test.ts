/**
 * Goal: snapshots through the runtime and the write-ahead log (Raft §7): every node snapshots
 * its state machine every few entries and drops the log before it; a follower that was down
 * while the leader compacted past its log is restored from InstallSnapshot (in chunks); a
 * restart recovers from the snapshot plus the log after it. Method: a 3-node RuntimeCluster
 * (real runtime, WAL with small segments, KV state machine with snapshot/restore).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeId } from '../../../src/core/ids.js';
import { WAL_DEFAULTS } from '../../../src/runtime/wal/config.js';
import { encodeKvCommand } from '../../../src/sim/scenarios/raft/sim-kv.js';
import { RuntimeCluster } from './runtime-cluster.js';

/** Proposes `count` puts at the leader, one after the other, and runs until all applied. */
function write(c: RuntimeCluster, leader: NodeId, count: number, prefix: string): void {
  let applied = 0;
  for (let i = 0; i < count; i++) {
    c.runtime(leader).propose(encodeKvCommand({ kind: 'put', key: `k${i % 7}`, value: `${prefix}${i}` }),
      (o) => {
        assert.equal(o.kind, 'applied');
        applied++;
      });
    c.runUntil(() => false, 1);
  }
  c.runUntil(() => applied === count, 5_000);
  assert.equal(applied, count);
}

function cluster(seed: number, steppedSnapshots = false, stepMs = 0): RuntimeCluster {
  return new RuntimeCluster({
    seed,
    runtime: { snapshotEntries: 20, snapshotCatchUpEntries: 5, snapshotStepIntervalMs: stepMs },
    wal: { ...WAL_DEFAULTS, segmentBytesMax: 1024, recordBytesMax: 1024 * 1024 },
    tuning: { snapshotChunkBytesMax: 100 },
    steppedSnapshots,
  });
}

for (const stepped of [false, true]) {
describe(`runtime: raft: snapshots${stepped ? ' in steps' : ''}`, () => {
  test('a follower is restored from InstallSnapshot after the leader compacted past its log', () => {
    const c = cluster(31, stepped);
    const leader = c.elect();
    const follower = c.ids.find((id) => id !== leader)!;
    write(c, leader, 10, 'a');
    c.hosts.get(follower)!.crash();
    write(c, leader, 120, 'b');
    const leaderStatus = c.runtime(leader).status();
    assert.ok(leaderStatus.compactedIndex > 10, `leader compacted to ${leaderStatus.compactedIndex}`);
    c.hosts.get(follower)!.restart();
    const restarted = c.hosts.get(follower)!.process!;
    assert.ok(restarted.runtime.status().lastIndex < leaderStatus.compactedIndex,
      'the follower\'s log ends before the leader\'s compacted prefix');
    c.runUntil(() => restarted.stateMachine.digest() ===
      c.hosts.get(leader)!.process!.stateMachine.digest(), 20_000);
    assert.equal(restarted.stateMachine.digest(), c.hosts.get(leader)!.process!.stateMachine.digest());
    const status = restarted.runtime.status();
    assert.ok(status.snapshotIndex >= leaderStatus.compactedIndex, 'installed the leader\'s snapshot');
    assert.ok(restarted.wal.stats().snapshotsWritten >= 1, 'and made it durable');
    // More writes replicate normally after the snapshot.
    write(c, leader, 5, 'c');
    c.runUntil(() => false, 100);
    assert.equal(restarted.stateMachine.get('k0'), c.hosts.get(leader)!.process!.stateMachine.get('k0'));
  });

  test('every node restarts from its snapshot plus the log after it', () => {
    const c = cluster(32, stepped);
    const leader = c.elect();
    write(c, leader, 75, 'x');
    c.runUntil(() => false, 200);
    const appliedBefore = c.runtime(leader).status().appliedIndex;
    for (const id of c.ids) {
      const segments = c.hosts.get(id)!.storage.list().filter((f) => f.startsWith('wal-'));
      assert.ok(!segments.includes('wal-0000000001.log'), `${id} dropped its first segment`);
      c.hosts.get(id)!.crash();
    }
    for (const id of c.ids) c.hosts.get(id)!.restart();
    for (const id of c.ids) {
      const process = c.hosts.get(id)!.process!;
      const snapshot = process.wal.recovered.snapshot;
      assert.ok(snapshot !== undefined, `${id} recovered a snapshot`);
      assert.equal(process.stateMachine.appliedIndex, snapshot.meta.index, 'restored from it');
    }
    const next = c.elect();
    write(c, next, 3, 'y');
    c.runUntil(() => false, 100);
    const digests = new Set(c.ids.map((id) => c.hosts.get(id)!.process!.stateMachine.digest()));
    assert.equal(digests.size, 1, [...digests].join(' '));
    assert.ok(c.runtime(next).status().appliedIndex > appliedBefore, 'nothing committed was lost');
    if (stepped) assert.ok(c.snapshotSteps.begun > 0, 'snapshots were taken in steps');
  });
});
}

describe('runtime: raft: snapshots in steps', () => {
  test('a stepped snapshot overtaken by the leader\'s snapshot is dropped, not recorded', () => {
    // The follower's own snapshot is held mid-way while it is cut off, falls behind, and is
    // sent the leader's newer one after the heal. The runtime cancels its own and keeps the
    // installed one.
    const c = cluster(33, true, 10);
    const leader = c.elect();
    const follower = c.ids.find((id) => id !== leader)!;
    c.heldSnapshots.add(follower);
    write(c, leader, 25, 'a');
    c.network.partition([[follower], c.ids.filter((id) => id !== follower)]);
    const begun = c.snapshotSteps.begun;
    write(c, leader, 100, 'b');
    c.runUntil(() => false, 2_000);
    c.network.heal();
    c.runUntil(() => c.runtime(follower).status().appliedIndex >=
      c.runtime(leader).status().commitIndex, 20_000);
    assert.ok(begun > 0 && c.snapshotSteps.cancelled > 0,
      `begun ${begun}, cancelled ${c.snapshotSteps.cancelled}`);
    const status = c.runtime(follower).status();
    assert.ok(status.snapshotIndex >= c.runtime(leader).status().compactedIndex,
      `follower holds snapshot ${status.snapshotIndex}`);
    assert.equal(c.hosts.get(follower)!.process!.stateMachine.digest(),
      c.hosts.get(leader)!.process!.stateMachine.digest());
  });
});
