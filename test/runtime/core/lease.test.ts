/**
 * Goal: leases through the real consistent core (ConsistentCore: Raft runtime, write-ahead
 * log, KvStore and LeaseTracker wired as the server runs them): grants and TTL validation,
 * keep-alives only on the leader, a kept-alive lease and its keys surviving a leader crash,
 * the lease ending within the documented bounds once keep-alives stop, a leader cut off
 * from the others revoking nothing, and keep-alives arriving a few at a time sharing heartbeat
 * rounds (keepAliveLingerMs) at the cost of at most a heartbeat of waiting. Method: three
 * members on SimHosts (virtual time, simulated network and disks, seeded); every wait is
 * virtual.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeId } from '../../../src/core/ids.js';
import { leaseEndBoundsMs, leaseTtlMsMin } from '../../../src/core/kv/index.js';
import { RAFT_DEFAULTS_LOCAL } from '../../../src/core/raft/index.js';
import type { LeaseConfig } from '../../../src/runtime/lease/index.js';
import type { KvWrite } from '../../../src/runtime/core/consistent-core.js';
import { CoreCluster, type Unstamped } from './core-cluster.js';

const LEASE: LeaseConfig = { checkpointIntervalMs: 500, leasesPerEntryMax: 1000, retryDelayMs: 50 };
const TTL_MS = 2000;

class Cluster extends CoreCluster {
  constructor(seed: number, lease: LeaseConfig = LEASE) {
    super(seed, { lease });
  }

  override grant(id: NodeId, ttlMs = TTL_MS): number {
    return super.grant(id, ttlMs);
  }
}

const bounds = leaseEndBoundsMs(TTL_MS, {
  electionTimeoutMsMax: RAFT_DEFAULTS_LOCAL.electionTimeoutMsMax,
  clockRateErrorMax: RAFT_DEFAULTS_LOCAL.clockRateErrorMax,
  checkpointIntervalMs: LEASE.checkpointIntervalMs,
});

describe('server: consistent core: leases', () => {
  test('a grant below the TTL minimum is refused, naming it; keep-alives go to the leader', () => {
    const cluster = new Cluster(1);
    const leader = cluster.elect();
    const short = cluster.write(leader, { kind: 'lease-grant', ttlMs: 1000 });
    assert.equal(short.kind, 'failed');
    const minMs = leaseTtlMsMin(RAFT_DEFAULTS_LOCAL); // 2 × 600 / (0.99/1.01 − 1/3)
    assert.equal(minMs, 1856);
    assert.match(short.kind === 'failed' ? short.error.message : '', /at least 1856 ms/);
    const leaseId = cluster.grant(leader);
    const follower = cluster.ids.find((id) => id !== leader) as NodeId;
    const refused = cluster.keepAlive(follower, leaseId);
    assert.equal(refused.kind === 'failed' && refused.error.code, 'CONCLAVE_NOT_LEADER');
    const answered = cluster.keepAlive(leader, leaseId);
    assert.equal(answered.kind, 'ok');
    assert.ok(answered.kind === 'ok' && answered.value.remainingMs > TTL_MS - 50);
    const unknown = cluster.keepAlive(leader, 9999);
    assert.equal(unknown.kind === 'failed' && unknown.error.code, 'CONCLAVE_LEASE_EXPIRED');
  });

  test('a kept-alive lease and its key outlive a leader crash, then end within the bounds', () => {
    const cluster = new Cluster(2);
    let leader = cluster.elect();
    const leaseId = cluster.grant(leader);
    assert.equal(cluster.write(leader, { kind: 'put', key: 'svc/a', value: 'up', lease: leaseId })
      .kind, 'applied');
    let lastAckMs = cluster.nowMs;
    const keepAliveAnywhere = (): void => {
      for (const id of cluster.ids) {
        if (cluster.hosts.get(id)?.isUp !== true) continue;
        const sentAtMs = cluster.nowMs;
        if (cluster.keepAlive(id, leaseId).kind === 'ok') lastAckMs = sentAtMs;
      }
    };
    for (let i = 0; i < 3; i++) {
      cluster.run(TTL_MS / 3);
      keepAliveAnywhere();
    }
    cluster.hosts.get(leader)?.crash();
    for (let i = 0; i < 6; i++) {
      cluster.run(TTL_MS / 3);
      keepAliveAnywhere();
      assert.ok(cluster.nowMs - lastAckMs < TTL_MS, 'no keep-alive answered for a whole TTL');
    }
    leader = cluster.elect();
    assert.equal(cluster.core(leader).store.get('svc/a')?.lease, leaseId, 'key lost');
    const stoppedAtMs = cluster.nowMs;
    cluster.scheduler.runUntil(stoppedAtMs + 3 * TTL_MS,
      () => cluster.core(leader).store.lease(leaseId) === undefined);
    const endedAtMs = cluster.nowMs;
    assert.ok(endedAtMs >= lastAckMs + bounds.earliestMs, 'ended too early');
    assert.ok(endedAtMs <= lastAckMs + bounds.latestMs + 200,
      `ended ${endedAtMs - lastAckMs} ms after the last answered keep-alive`);
    cluster.run(500);
    for (const id of cluster.ids.filter((n) => cluster.hosts.get(n)?.isUp === true)) {
      assert.equal(cluster.core(id).store.get('svc/a'), undefined, `${id} kept the key`);
    }
  });

  test('a leader cut off from the others revokes nothing; the new leader does', () => {
    const cluster = new Cluster(3);
    const leader = cluster.elect();
    const leaseId = cluster.grant(leader);
    const others = cluster.ids.filter((id) => id !== leader);
    cluster.network.partition([[leader], others]);
    cluster.run(3 * TTL_MS);
    assert.equal(cluster.core(leader).leases.stats().expireEntries, 0);
    assert.notEqual(cluster.core(leader).status().role, 'leader');
    const expired = others.map((id) => cluster.core(id).leases.stats().expireEntries);
    assert.equal(expired.reduce((a, b) => a + b, 0), 1);
    assert.equal(cluster.core(others[0] as NodeId).store.lease(leaseId), undefined);
    cluster.network.heal();
    cluster.run(1000);
    assert.equal(cluster.core(leader).store.lease(leaseId), undefined);
  });

  test('keep-alives a few at a time share heartbeat rounds when lingering a heartbeat', () => {
    const sent = (lingerMs: number): { messages: number; idleMessages: number; waitMs: number } => {
      const cluster = new Cluster(4, { ...LEASE, keepAliveLingerMs: lingerMs });
      const leader = cluster.elect();
      const leaseIds = Array.from({ length: 20 }, () => cluster.grant(leader, 60_000));
      const messagesOf = (): number => cluster.network.sentByNode.get(leader)?.messages ?? 0;
      cluster.run(1000);
      const idleFrom = messagesOf();
      cluster.run(1000);
      const from = messagesOf();
      const idleMessages = from - idleFrom;
      // 200 keep-alives over one second, one every 5 ms: etcd's clientv3 rhythm for 667 leases.
      const waitsMs: number[] = [];
      for (let i = 0; i < 200; i++) {
        cluster.scheduler.schedule(1 + 5 * i, () => cluster.hosts.get(leader)?.submit((p) => {
          const sentAtMs = cluster.nowMs;
          p.core.keepAlive(leaseIds[i % leaseIds.length] as number, (outcome) => {
            assert.equal(outcome.kind, 'ok');
            waitsMs.push(cluster.nowMs - sentAtMs);
          });
        }));
      }
      cluster.run(1000);
      const messages = messagesOf() - from;
      cluster.run(200);
      assert.equal(waitsMs.length, 200);
      return { messages, idleMessages, waitMs: Math.max(...waitsMs) };
    };
    const heartbeatMs = RAFT_DEFAULTS_LOCAL.heartbeatIntervalMs;
    const lingering = sent(heartbeatMs);
    const eager = sent(0);
    // Rounds a heartbeat apart stand in for Raft's idle heartbeats; the rest is about one
    // renewal entry per round (observed: 106 messages against 40 idle, 705 without lingering).
    assert.ok(lingering.messages <= 3 * lingering.idleMessages,
      `lingering: ${lingering.messages} messages, idle ${lingering.idleMessages}`);
    assert.ok(eager.messages >= 3 * lingering.messages,
      `without lingering ${eager.messages} messages, with ${lingering.messages}`);
    // At most a heartbeat more than without lingering (a round and a commit take a few ms here).
    assert.ok(lingering.waitMs <= heartbeatMs + 10, `answered after ${lingering.waitMs} ms`);
    assert.ok(eager.waitMs <= 10, `answered after ${eager.waitMs} ms without lingering`);
  });
});

/**
 * The leader applies its own proposals from the commands it encoded (no decode): its state must
 * be exactly the state followers reach by decoding the same entries, and the kept commands
 * must be dropped whatever becomes of each proposal.
 */
describe('server: consistent core: applying its own proposals', () => {
  const snapshotOf = (cluster: Cluster, id: NodeId): unknown => cluster.core(id).store.toSnapshot();

  test('the leader reaches the state followers decode, and keeps no command after', () => {
    const cluster = new Cluster(5);
    const leader = cluster.elect();
    const leaseId = cluster.grant(leader, 60_000);
    const writes: Unstamped<KvWrite>[] = [
      { kind: 'put', key: 'a', value: 'x' }, { kind: 'put', key: 'a/1', value: '😀', prevKv: true },
      { kind: 'put', key: 'b', value: 'y', lease: leaseId },
      { kind: 'txn', compare: [{ key: 'a', target: 'value', result: 'equal', value: 'x' }],
        success: [{ kind: 'put', key: 'c', value: 'z' }, { kind: 'range', key: 'a', prefix: true }],
        failure: [] },
      { kind: 'delete', key: 'a', prefix: true, prevKv: true }, { kind: 'compact', revision: 3 },
      { kind: 'put', key: 'b', value: 'y', lease: 9999 }, // refused by the store: no such lease
      { kind: 'lease-revoke', leaseId },
    ];
    for (const write of writes) {
      assert.equal(cluster.write(leader, write).kind, 'applied', JSON.stringify(write));
    }
    cluster.run(500);
    assert.equal(cluster.core(leader).proposedCommandCount, 0);
    const expected = snapshotOf(cluster, leader);
    for (const id of cluster.ids) assert.deepStrictEqual(snapshotOf(cluster, id), expected, id);
  });

  test('proposals of a deposed leader are dropped, and it applies the new leader entries', () => {
    const cluster = new Cluster(6);
    const leader = cluster.elect();
    const others = cluster.ids.filter((id) => id !== leader);
    cluster.network.partition([[leader], others]);
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      cluster.hosts.get(leader)?.submit((p) => p.core.write({ kind: 'put', clientId: 'old',
        sequence: i + 1, key: `k${i}`, value: 'lost' }, (outcome) => outcomes.push(outcome.kind)));
    }
    cluster.run(50);
    assert.equal(cluster.core(leader).proposedCommandCount, 5);
    cluster.run(3000);
    const newLeader = cluster.elect();
    assert.notEqual(newLeader, leader);
    // Enough entries to cover every index the old leader used: each of its proposals ends
    // when another entry applies at its index (Raft §5.3).
    for (let i = 0; i < 5; i++) {
      assert.equal(cluster.write(newLeader, { kind: 'put', key: `k${i}`, value: 'kept' }).kind,
        'applied');
    }
    cluster.network.heal();
    cluster.run(2000);
    assert.equal(outcomes.length, 5);
    assert.ok(outcomes.every((kind) => kind !== 'applied'), outcomes.join());
    assert.equal(cluster.core(leader).proposedCommandCount, 0);
    assert.equal(cluster.core(leader).store.get('k0')?.value, 'kept');
    const expected = snapshotOf(cluster, newLeader);
    for (const id of cluster.ids) assert.deepStrictEqual(snapshotOf(cluster, id), expected, id);
  });
});
