/**
 * server: snapshots — three real `conclave server` processes snapshotting every 100 entries
 * and keeping 10 entries behind each snapshot. A follower is killed (kill -9) while the leader
 * writes past two snapshots, so the log it needs is gone from memory and disk everywhere; it
 * restarts, catches up through InstallSnapshot over TCP (the snapshot in chunks), and then
 * serves exactly the leader's state: a serializable range on it equals the leader's
 * linearizable range at the same revision, and linearizable reads through it (after the leader
 * is killed too, so the new leader may well be the restarted member) return every write.
 * `<data-dir>/snap` holds at most two snapshot files.
 * Method: real time, but every wait is a condition with a deadline.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { call } from '../support/kv-http.js';
import { BUILT, RealCluster, waitFor, type RealMember } from '../support/real-cluster.js';

const SNAPSHOT_COUNT = 100;
const KEYS = 40;
/** Puts written while the follower is down: past two snapshots (and then some). */
const PUTS = 3 * SNAPSHOT_COUNT + 50;

const clusters: RealCluster[] = [];
after(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

async function metric(cluster: RealCluster, member: RealMember, line: string): Promise<number> {
  try {
    const text = await (await fetch(`http://${cluster.endpoint(member)}/metrics`,
      { signal: AbortSignal.timeout(1000) })).text();
    const found = text.split('\n').find((l) => l.startsWith(`${line} `));
    return found === undefined ? 0 : Number(found.slice(line.length + 1));
  } catch {
    return 0;
  }
}

interface Status { role: string; appliedIndex: number; commitIndex: number; snapshotIndex: number }

async function statusOf(cluster: RealCluster, member: RealMember): Promise<Status | undefined> {
  return (await cluster.status(member)) as unknown as Status | undefined;
}

async function range(endpoint: string, body: Record<string, unknown>): Promise<{
  revision: number; kvs: { key: string; value: string; modRevision: number }[] }> {
  const outcome = await call(endpoint, '/v1/kv/range', { key: 'k', prefix: true, ...body }, 5000);
  assert.ok(outcome.kind === 'ok', JSON.stringify(outcome));
  return outcome.body as never;
}

describe('server: snapshots', { skip: !BUILT && 'run npm run build first' }, () => {
  test('a follower down past two snapshots catches up through InstallSnapshot, same reads',
    async () => {
    const timing = { heartbeatMs: 50, electionTimeoutMs: 500 };
    // Generous: a restart and a catch-up on a loaded 2-core machine take seconds.
    const deadlineMs = 120 * timing.electionTimeoutMs;
    const cluster = await RealCluster.start({ nodes: 3, ...timing, serverArgs: [
      '--snapshot-count', String(SNAPSHOT_COUNT), '--snapshot-catchup-entries', '10'] });
    clusters.push(cluster);
    const leader = await cluster.waitForLeader(deadlineMs);
    const follower = cluster.members.find((m) => m !== leader)!;
    await cluster.kill9(follower);

    // Four writers on their own keys, so the puts take a few seconds even on a loaded machine.
    const expected = new Map<string, string>();
    await Promise.all([0, 1, 2, 3].map(async (writer) => {
      for (let i = writer; i < PUTS; i += 4) {
        const key = `k${String(i % KEYS).padStart(3, '0')}`;
        const value = `v${i}-${'x'.repeat(i % 50)}`;
        const outcome = await call(cluster.endpoint(leader), '/v1/kv/put',
          { key, value, clientId: `writer-${writer}`, sequence: i + 1 }, 10_000);
        assert.equal(outcome.kind, 'ok', `put ${i}: ${JSON.stringify(outcome)}`);
        expected.set(key, value);
      }
    }));
    // The leader snapshotted past the follower's log twice over; its old segments are gone.
    await waitFor(async () => {
      const status = await statusOf(cluster, leader);
      return status !== undefined && status.snapshotIndex >= 2 * SNAPSHOT_COUNT
        ? status : undefined;
    }, deadlineMs, 'two snapshots on the leader');
    const snapFiles = readdirSync(join(cluster.dataDir, leader.name, 'snap'))
      .filter((f) => f.endsWith('.snap'));
    assert.ok(snapFiles.length >= 1 && snapFiles.length <= 2,
      `snapshot files: ${snapFiles.join(', ')}`);

    cluster.launch(follower);
    const leaderStatus = (await statusOf(cluster, leader))!;
    await waitFor(async () => {
      const status = await statusOf(cluster, follower);
      return status !== undefined && status.appliedIndex >= leaderStatus.commitIndex
        ? status : undefined;
    }, deadlineMs, `${follower.name} applying up to ${leaderStatus.commitIndex}`);
    const installed = await metric(cluster, follower, 'conclave_snapshots_total{kind="installed"}');
    assert.ok(installed >= 1, `${follower.name} installed ${installed} snapshots`);

    // The same state: the leader's linearizable range and the follower's own at that revision.
    const onLeader = await range(cluster.endpoint(leader), {});
    const onFollower = await waitFor(async () => {
      const outcome = await call(cluster.endpoint(follower), '/v1/kv/range',
        { key: 'k', prefix: true, consistency: 'serializable' }, 5000);
      const body = outcome.kind === 'ok' ? outcome.body as never as typeof onLeader : undefined;
      return body !== undefined && body.revision >= onLeader.revision ? body : undefined;
    }, deadlineMs, `${follower.name} at revision ${onLeader.revision}`);
    assert.deepEqual(onFollower.kvs, onLeader.kvs);
    assert.deepEqual(new Map(onLeader.kvs.map((kv) => [kv.key, kv.value])), expected);

    // Without the old leader: reads through the restarted member still see every write.
    await cluster.kill9(leader);
    await cluster.waitForLeader(deadlineMs);
    const after = await waitFor(async () => {
      const outcome = await call(cluster.endpoint(follower), '/v1/kv/range',
        { key: 'k', prefix: true }, 5000);
      return outcome.kind === 'ok' ? outcome.body as never as typeof onLeader : undefined;
    }, deadlineMs, 'a linearizable read through the restarted member');
    assert.deepEqual(new Map(after.kvs.map((kv) => [kv.key, kv.value])), expected);
  });
});
