/**
 * cli: snapshot — backups on real processes. `conclave snapshot save` streams a backup from a
 * live three-member cluster (asked through a follower, which redirects to the leader) after
 * 300 acknowledged puts; `snapshot status` checks it; a copy with one flipped byte and a
 * truncated copy are refused by status and restore with one clear line. `snapshot restore`
 * refuses the backed-up cluster's own id and a non-empty data dir, then seeds three new data
 * dirs; the restored cluster starts, elects a leader and serves every key of the backup (a
 * linearizable range equals the original's), under a cluster id that differs from the
 * original's, its members on other ports than the original's (given by `--cluster`) and
 * listing those addresses. Method: real processes and sockets, every wait a condition with a deadline.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cliClientFlags } from '../support/deadlines.js';
import { call } from '../support/kv-http.js';
import { BUILT, RealCluster, type RealMember } from '../support/real-cluster.js';
import { runCliInProcess } from './run-in-process.js';

const PUTS = 300;

const run = runCliInProcess;

async function everyKey(endpoint: string): Promise<Record<string, string>> {
  const outcome = await call(endpoint, '/v1/kv/range', { key: 'bk/', prefix: true }, 10_000);
  assert.ok(outcome.kind === 'ok', JSON.stringify(outcome));
  const kvs = (outcome.body as { kvs: { key: string; value: string }[] }).kvs;
  return Object.fromEntries(kvs.map((kv) => [kv.key, kv.value]));
}

function clusterIdOf(cluster: RealCluster, member: RealMember): string {
  const text = readFileSync(join(cluster.dataDir, member.name, 'member.id'), 'utf8');
  return (JSON.parse(text) as { clusterId: string }).clusterId;
}

const clusters: RealCluster[] = [];
after(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
});

const timing = { heartbeatMs: 50, electionTimeoutMs: 500 };

describe('cli: snapshot', { skip: !BUILT && 'run npm run build first' }, () => {
  test('save, status, refusals, restore into three new data dirs: every key served',
    async () => {
    const original = await RealCluster.start({ nodes: 3, ...timing });
    clusters.push(original);
    const leader = await original.waitForLeader();
    for (let i = 0; i < PUTS; i++) {
      const outcome = await call(original.endpoint(leader), '/v1/kv/put', { key: `bk/${i}`,
        value: `v${i}`, clientId: 'backup-test', sequence: i + 1 }, 10_000);
      assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
    }
    const expected = await everyKey(original.endpoint(leader));
    assert.equal(Object.keys(expected).length, PUTS);
    const follower = original.members.find((m) => m !== leader)!;
    const file = join(original.dataDir, 'backup.cbak');
    const saved = await run(['snapshot', 'save', file, '--json', '--endpoints',
      original.endpoint(follower), ...cliClientFlags()]);
    assert.equal(saved.code, 0, saved.err.join('\n'));
    const summary = JSON.parse(saved.out[0] ?? '{}') as Record<string, unknown>;
    assert.equal(summary['keys'], PUTS);
    assert.equal(existsSync(`${file}.part`), false);

    const status = await run(['snapshot', 'status', file, '--json']);
    assert.equal(status.code, 0, status.err.join('\n'));
    const checked = JSON.parse(status.out[0] ?? '{}') as Record<string, unknown>;
    assert.deepEqual([checked['keys'], checked['revision'], checked['checksumOk'],
      checked['checksum']], [PUTS, summary['revision'], true, summary['checksum']]);
    await refusesDamage(file);

    const restoredDirs = join(original.dataDir, 'restored');
    const token = 'restored-1';
    const restored = await RealCluster.start({ nodes: 3, ...timing,
      serverArgs: ['--initial-cluster-token', token],
      beforeLaunch: async (cluster) => {
        const initial = cluster.members.map((m) => `${m.name}=127.0.0.1:${m.peerPort}`).join(',');
        const restore = (name: string, dir: string, tokenGiven: string,
          flag = '--initial-cluster') => run(['snapshot', 'restore', file, '--data-dir', dir,
          '--name', name, flag, initial, '--initial-cluster-token', tokenGiven]);
        // The original's names and (empty) token would make the original's cluster id.
        const same = await restore('n1', join(restoredDirs, 'same'), '');
        assert.equal(same.code, 2);
        assert.match(same.err[0] ?? '', /backed-up cluster's id .*new --initial-cluster-token/);
        mkdirSync(join(restoredDirs, 'full'), { recursive: true, mode: 0o700 });
        writeFileSync(join(restoredDirs, 'full', 'x'), 'x');
        const full = await restore('n1', join(restoredDirs, 'full'), token);
        assert.match(full.err[0] ?? '', /is not empty/);
        for (const m of cluster.members) {
          // conclave server's name for the flag; the ports are new (not the original's).
          const r = await restore(m.name, join(cluster.dataDir, m.name), token, '--cluster');
          assert.equal(r.code, 0, r.err.join('\n'));
        }
      } });
    clusters.push(restored);
    const newLeader = await restored.waitForLeader();
    assert.deepEqual(await everyKey(restored.endpoint(newLeader)), expected);
    assert.notEqual(clusterIdOf(restored, newLeader), clusterIdOf(original, leader));
    // The members reach each other at the new --cluster addresses (the leader's own port, and
    // the test's proxy to each other member: RealCluster puts one on every link).
    const listed = await run(['member', 'list', '--json', '--endpoints',
      restored.endpoint(newLeader), ...cliClientFlags()]);
    const rows = (JSON.parse(listed.out[0] ?? '{}') as { members?: { name: string;
      peerAddr: string | null }[] }).members ?? [];
    assert.deepEqual(rows.map((r) => [r.name, r.peerAddr]).sort(), restored.members.map((m) =>
      [m.name, `127.0.0.1:${m === newLeader ? m.peerPort
        : restored.proxies.get(`${newLeader.name}>${m.name}`)!.port}`]).sort());
    assert.ok(restored.members.every((m) => !original.members.some((o) => o.peerPort
      === m.peerPort)), 'restored onto other ports');
    // The restored cluster takes writes after the backup's revision.
    const put = await call(restored.endpoint(newLeader), '/v1/kv/put', { key: 'bk/new',
      value: 'after', clientId: 'restored', sequence: 1 }, 10_000);
    assert.equal(put.kind, 'ok', JSON.stringify(put));
    assert.ok(Number((put as { body: Record<string, unknown> }).body['revision'])
      > Number(summary['revision']));
  });
});

/** A flipped byte and a cut file: refused by status and restore, one line each. */
async function refusesDamage(file: string): Promise<void> {
  const bytes = readFileSync(file);
  const flipped = Buffer.from(bytes);
  flipped[Math.floor(bytes.length / 2)]! ^= 0x40;
  writeFileSync(`${file}.flipped`, flipped);
  writeFileSync(`${file}.cut`, bytes.subarray(0, bytes.length - 100));
  const bad = await run(['snapshot', 'status', `${file}.flipped`]);
  assert.equal(bad.code, 1);
  assert.equal(bad.err.length, 1);
  assert.match(bad.err[0] ?? '', /CONCLAVE_STORAGE_CORRUPT: .* is not a usable backup: damaged/);
  const cut = await run(['snapshot', 'status', `${file}.cut`]);
  assert.equal(cut.code, 1);
  assert.match(cut.err[0] ?? '', /is not a usable backup: truncated after/);
  const restore = await run(['snapshot', 'restore', `${file}.cut`, '--data-dir',
    `${file}.dir`, '--name', 'n1', '--initial-cluster', 'n1=127.0.0.1:1', '--initial-cluster-token',
    'x']);
  assert.equal(restore.code, 1);
  assert.match(restore.err[0] ?? '', /truncated/);
  assert.equal(existsSync(`${file}.dir`), false);
}
