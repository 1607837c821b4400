/**
 * Goal: snapshots of the real consistent core (Raft §7 with the key-value store as the state
 * machine): the store is snapshotted in steps every few entries while writes go on; a member
 * down past compaction catches up through InstallSnapshot (in small chunks) and then holds
 * exactly the leader's state — keys, history with its compact revision, leases (with a shadow
 * deadline restarted on the follower) and the idempotency table (a retry of an acknowledged
 * write is answered from it, not applied twice); a restart of every member recovers from its
 * snapshot plus the log after it. Method: three ConsistentCores on SimHosts (virtual time,
 * simulated disks and network), snapshots every 20 entries with steps 1 ms apart.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeId } from '../../../src/core/ids.js';
import { CoreCluster } from './core-cluster.js';

function cluster(seed: number): CoreCluster {
  return new CoreCluster(seed, {
    raft: { snapshotChunkBytesMax: 256 },
    raftRuntime: { snapshotEntries: 20, snapshotCatchUpEntries: 2, snapshotStepIntervalMs: 1 },
  });
}

function put(c: CoreCluster, leader: NodeId, key: string, value: string, sequence: number,
  lease?: number): void {
  const outcome = c.writeAs(leader, { kind: 'put', key, value,
    ...(lease === undefined ? {} : { lease }) }, 'writer', sequence);
  assert.equal(outcome.kind, 'applied', JSON.stringify(outcome));
}

/** Runs until every member applied the leader's commit index. */
function settle(c: CoreCluster, leader: NodeId): void {
  c.scheduler.runUntil(c.nowMs + 10_000, () => c.ids.every((id) =>
    c.hosts.get(id)?.process?.core.status().appliedIndex === c.core(leader).status().commitIndex));
}

describe('runtime: consistent core: snapshots', () => {
  test('a member down past compaction catches up through InstallSnapshot, same state', () => {
    const c = cluster(41);
    const leader = c.elect();
    const follower = c.ids.find((id) => id !== leader)!;
    const leaseId = c.grant(leader, 60_000);
    put(c, leader, 'held', 'by-lease', 1, leaseId);
    c.hosts.get(follower)!.crash();
    let sequence = 1;
    for (let i = 0; i < 120; i++) put(c, leader, `k${i % 9}`, `v${i}`, ++sequence);
    assert.equal(c.write(leader, { kind: 'compact', revision: 50 }).kind, 'applied');
    for (let i = 0; i < 30; i++) put(c, leader, `k${i % 9}`, `w${i}`, ++sequence);
    const leaderCore = c.core(leader);
    assert.ok(leaderCore.status().compactedIndex > 10, 'the leader compacted its log');
    c.hosts.get(follower)!.restart();
    settle(c, leader);
    const restarted = c.core(follower);
    assert.ok(restarted.status().snapshotIndex > 10, 'installed the leader\'s snapshot');
    assert.deepEqual(restarted.store.toSnapshot().kvs, leaderCore.store.toSnapshot().kvs);
    const { appliedIndex: _a, ...leaderState } = leaderCore.store.toSnapshot();
    const { appliedIndex: _b, ...followerState } = restarted.store.toSnapshot();
    assert.deepEqual(followerState, leaderState);
    assert.equal(restarted.store.compactRevision, 50);
    assert.ok(restarted.leases.shadowMs(leaseId) !== undefined, 'the lease has a shadow deadline');
    // The idempotency table came with the snapshot: a retry gets the saved answer.
    const revisionBefore = leaderCore.store.revision;
    const retry = c.writeAs(leader, { kind: 'put', key: 'k0', value: 'w29' }, 'writer', sequence);
    assert.equal(retry.kind, 'applied');
    assert.equal(leaderCore.store.revision, revisionBefore, 'the retry changed nothing');
    assert.equal(restarted.store.clientRecord('writer')?.sequence, sequence);
  });

  test('every member restarts from its snapshot plus the log after it', () => {
    const c = cluster(42);
    const leader = c.elect();
    for (let i = 0; i < 75; i++) put(c, leader, `k${i % 5}`, `v${i}`, i + 1);
    settle(c, leader);
    const before = c.core(leader).store.toSnapshot();
    for (const id of c.ids) {
      assert.ok(c.core(id).status().snapshotIndex > 0, `${id} took a snapshot`);
      c.hosts.get(id)!.crash();
    }
    for (const id of c.ids) c.hosts.get(id)!.restart();
    const next = c.elect();
    settle(c, next);
    for (const id of c.ids) {
      assert.deepEqual(c.core(id).store.toSnapshot().kvs, before.kvs, id);
      assert.equal(c.core(id).store.revision, before.revision, id);
    }
  });
});
