/**
 * Goal: the leader-side lease tracker keeps the promises of docs/leases.md: it revokes a lease
 * when its TTL passes with no keep-alive, answers keep-alives only once they will survive a
 * leader change (renewal marks, checkpoints), checkpoints only kept-alive leases and in
 * batches, starts a new leader from the checkpoint rather than the full TTL, honours an earlier
 * leader's renewal that arrives after the election, and never revokes anything once deposed.
 * Method: the mini cluster (mini-cluster.ts: real KvStores and LeaseTrackers on simulated
 * clocks over a model of the Raft log) driven through exact virtual-time scenarios.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LeaseConfig } from '../../../src/runtime/lease/index.js';
import { MiniCluster } from './mini-cluster.js';

const CONFIG: LeaseConfig = { checkpointIntervalMs: 100, leasesPerEntryMax: 1000,
  retryDelayMs: 10 };
const DELTA = 4; // the mini cluster's commit delay

function started(config: LeaseConfig = CONFIG): MiniCluster {
  const cluster = new MiniCluster({ config });
  cluster.elect(0);
  cluster.run(20);
  return cluster;
}

const kinds = (cluster: MiniCluster, kind: string, node?: number): number =>
  cluster.proposals.filter((p) => p.command.kind === kind
    && (node === undefined || p.node === node)).length;

describe('lease tracker: expiry', () => {
  test('a lease with no keep-alive is revoked TTL after its grant, keys and all', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    const grantedAtMs = cluster.nowMs;
    cluster.client({ kind: 'put', key: 'k', value: 'v', lease: leaseId });
    cluster.run(990);
    assert.equal(cluster.endedAtMs.has(leaseId), false, 'ended before its TTL');
    cluster.run(100);
    const endedAtMs = cluster.endedAtMs.get(leaseId);
    assert.ok(endedAtMs !== undefined, 'not revoked');
    // TTL, then a confirmation round and a commit.
    assert.ok(endedAtMs >= grantedAtMs + 1000 && endedAtMs <= grantedAtMs + 1000 + 3 * DELTA,
      `ended at +${endedAtMs - grantedAtMs} ms`);
    for (const node of cluster.nodes) {
      cluster.run(20);
      assert.equal(node.store.get('k'), undefined);
      assert.equal(node.store.lease(leaseId), undefined);
    }
  });

  test('a keep-alive moves the end to TTL after it', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    cluster.run(500);
    const sentAtMs = cluster.nowMs;
    const call = cluster.keepAlive(leaseId);
    cluster.run(3 * DELTA);
    assert.equal(call.answer?.kind, 'ok');
    cluster.run(2000);
    const endedAtMs = cluster.endedAtMs.get(leaseId) ?? Infinity;
    assert.ok(endedAtMs >= sentAtMs + 1000 && endedAtMs <= sentAtMs + 1000 + 3 * DELTA,
      `ended ${endedAtMs - sentAtMs} ms after the keep-alive`);
  });

  test('keep-alives of unknown or expired leases are refused; followers send callers on', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    assert.deepEqual(cluster.keepAlive(leaseId, 1).answer, { kind: 'not-leader' });
    const unknown = cluster.keepAlive(999);
    assert.deepEqual(unknown.answer, { kind: 'not-found', leaseId: 999 });
    cluster.run(1100);
    assert.deepEqual(cluster.keepAlive(leaseId).answer, { kind: 'not-found', leaseId });
  });
});

describe('lease tracker: keep-alives and renewal marks', () => {
  test('the first keep-alive after a checkpoint writes a renewal; the next ones write none', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    cluster.run(30); // past the promotion checkpoint, well before the next one
    const first = cluster.keepAlive(leaseId);
    cluster.run(3 * DELTA);
    assert.equal(first.answer?.kind, 'ok');
    const second = cluster.keepAlive(leaseId);
    const third = cluster.keepAlive(leaseId);
    cluster.run(2 * DELTA);
    assert.deepEqual([second.answer?.kind, third.answer?.kind], ['ok', 'ok']);
    assert.equal(kinds(cluster, 'lease-renew'), 1);
    assert.equal(cluster.node(0).tracker.stats().keepAlivesAnswered, 3);
    cluster.run(CONFIG.checkpointIntervalMs); // a checkpoint clears the mark
    const after = cluster.keepAlive(leaseId);
    cluster.run(3 * DELTA);
    assert.equal(after.answer?.kind, 'ok');
    assert.equal(kinds(cluster, 'lease-renew'), 2);
  });

  test('an answer reports the remaining TTL on the leader', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    const call = cluster.keepAlive(leaseId);
    cluster.run(3 * DELTA);
    assert.equal(call.answer?.kind, 'ok');
    const answer = call.answer as { remainingMs: number; ttlMs: number };
    assert.equal(answer.ttlMs, 1000);
    assert.ok(answer.remainingMs > 1000 - 3 * DELTA && answer.remainingMs <= 1000,
      `remaining ${answer.remainingMs}`);
  });
});

describe('lease tracker: checkpoints', () => {
  test('only kept-alive leases are checkpointed, in entries of at most leasesPerEntryMax', () => {
    const cluster = started({ ...CONFIG, leasesPerEntryMax: 2 });
    const ids = [1, 2, 3, 4, 5, 6].map(() => cluster.grant(5000));
    cluster.run(150);
    assert.equal(kinds(cluster, 'lease-checkpoint'), 0, 'idle leases cost no checkpoint');
    for (const id of ids.slice(0, 5)) cluster.keepAlive(id);
    cluster.run(CONFIG.checkpointIntervalMs + 3 * DELTA);
    const checkpoints = cluster.proposals.filter((p) => p.command.kind === 'lease-checkpoint');
    assert.deepEqual(checkpoints.map((p) => p.command.kind === 'lease-checkpoint'
      && p.command.leases.map((l) => l.leaseId)), [ids.slice(0, 2), ids.slice(2, 4),
      ids.slice(4, 5)]);
    for (const id of ids.slice(0, 5)) {
      assert.equal(cluster.node(1).store.lease(id)?.renewing, false);
    }
  });

  test('a new leader goes on from the checkpoint, not from the full TTL', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    cluster.run(300);
    const keptAtMs = cluster.nowMs;
    cluster.keepAlive(leaseId);
    cluster.run(150); // a checkpoint records about 850 ms left, and followers apply it
    cluster.changeLeader(1, 150);
    cluster.run(150 + 2 * DELTA); // in office, and established by its first commit
    const remaining = cluster.node(1).tracker.remainingMs(leaseId) ?? 0;
    const expected = keptAtMs + 1000 - cluster.nowMs;
    assert.ok(Math.abs(remaining - expected) <= 2 * DELTA,
      `new leader has ${remaining} ms left; the old one promised ${expected}`);
    cluster.run(1000);
    const endedAtMs = cluster.endedAtMs.get(leaseId) ?? Infinity;
    assert.ok(endedAtMs <= keptAtMs + 1000 + 4 * DELTA, `ended ${endedAtMs - keptAtMs} ms after`);
  });

  test('a lease kept alive since the last checkpoint restarts its full TTL at the election', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    cluster.run(30);
    const keptAtMs = cluster.nowMs;
    const call = cluster.keepAlive(leaseId);
    cluster.run(3 * DELTA); // answered through a renewal mark; no checkpoint yet
    assert.equal(call.answer?.kind, 'ok');
    cluster.changeLeader(1, 100);
    cluster.run(100 + 2 * DELTA); // node 1 learns of the renewal with its first commit
    const remaining = cluster.node(1).tracker.remainingMs(leaseId) ?? 0;
    assert.ok(remaining >= 1000 - 2 * DELTA, `the new leader gives ${remaining} ms`);
    cluster.run(2000);
    const endedAtMs = cluster.endedAtMs.get(leaseId) ?? 0;
    assert.ok(endedAtMs >= keptAtMs + 1000, 'ended before TTL after an acknowledged keep-alive');
    assert.ok(endedAtMs <= keptAtMs + 1000 + CONFIG.checkpointIntervalMs + 400 + 4 * DELTA);
  });
});

describe('lease tracker: leader changes', () => {
  test('a deposed leader that still believes it leads proposes no expiry and acks nothing', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    cluster.run(500);
    cluster.changeLeader(1, 300, { staleMs: 5000 });
    const proposalsBefore = cluster.proposals.length;
    cluster.run(200);
    const call = cluster.keepAlive(leaseId, 0);
    cluster.run(3000);
    assert.equal(call.answer?.kind, 'unavailable');
    const fromOld = cluster.proposals.slice(proposalsBefore).filter((p) => p.node === 0);
    assert.deepEqual(fromOld.filter((p) => p.command.kind === 'lease-expire'), []);
    assert.ok(cluster.endedAtMs.has(leaseId), 'the new leader revoked it');
    assert.equal(cluster.proposals.filter((p) => p.command.kind === 'lease-expire'
      && p.node === 1).length, 1);
  });

  test('an earlier leader renewal applied after the election saves a lease found expired', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    cluster.run(100);
    const keptAtMs = cluster.nowMs;
    const call = cluster.keepAlive(leaseId);
    cluster.run(2 * DELTA); // the renewal commits; followers have not heard yet
    assert.equal(call.answer?.kind, 'ok');
    cluster.changeLeader(1, 1000); // node 1's own view: the lease ran out during the gap
    cluster.run(3000);
    const endedAtMs = cluster.endedAtMs.get(leaseId) ?? 0;
    assert.ok(endedAtMs >= keptAtMs + 1000, `ended ${endedAtMs - keptAtMs} ms after a keep-alive`);
  });

  test('a lease granted before the new office is established counts from its grant', () => {
    const cluster = started();
    cluster.changeLeader(1, 100, { firstCommitMs: 60 }); // slow followers
    cluster.run(130); // node 1 is in office, not established until its first commit
    const grantSentAtMs = cluster.nowMs;
    const leaseId = cluster.grant(1000); // answered after the first commit, 30 ms later
    cluster.run(grantSentAtMs + 1000 - 1 - cluster.nowMs);
    assert.equal(cluster.endedAtMs.has(leaseId), false, 'ended before TTL after its grant');
    cluster.run(100);
    assert.ok(cluster.endedAtMs.has(leaseId));
  });

  test('leaving office fails every waiting keep-alive with not-leader', () => {
    const cluster = started();
    const leaseId = cluster.grant(1000);
    const call = cluster.keepAlive(leaseId);
    cluster.changeLeader(1, 100);
    assert.deepEqual(call.answer, { kind: 'not-leader' });
    assert.equal(cluster.node(0).tracker.stats().leading, false);
  });
});
