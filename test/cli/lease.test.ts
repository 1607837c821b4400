/**
 * cli: lease — `conclave lease grant|keepalive|ttl|list|revoke` round trip: the id printed by
 * grant works in every other subcommand, text and --json output, a revoked lease answers
 * CONCLAVE_LEASE_EXPIRED (exit 1), bad ids and TTLs exit 2 naming the problem, and
 * `grant --keep-alive` keeps a lease alive past its TTL until Ctrl-C, then exits 0.
 * Method: runCli in-process against the lease fake cluster (real HTTP API, keep-alive stream
 * and LeaseTracker on loopback); --keep-alive runs as a real process (cli-process.ts) so it
 * can get a real SIGINT. Waits are conditions with deadlines sized for a loaded machine
 * (test/support/deadlines.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { LeaseFakeCluster } from '../client/lease-fake-cluster.js';
import { CliProcess, stopAll } from './cli-process.js';
import { until } from '../support/conditions.js';
import { cliClientFlags, deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';

let cluster: LeaseFakeCluster;
let endpoints: string[];

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), exitCode: 0 };
  const code = await runCli([...args, ...endpoints, ...cliClientFlags()], io);
  return { code, out, err: err.join('\n') };
}

describe('cli: lease', () => {
  before(async () => {
    cluster = await LeaseFakeCluster.start(3);
    endpoints = ['--endpoints', cluster.endpoints.join(',')];
  });
  after(async () => {
    await stopAll();
    await cluster.stop();
  });

  test('grant, keepalive, ttl --keys, list, revoke: a round trip by the printed id', async () => {
    const grant = await run(['lease', 'grant', '--ttl', '30']);
    assert.equal(grant.code, 0, grant.err);
    assert.match(grant.out[0] ?? '', /^\d+$/, 'grant prints the id alone');
    const id = grant.out[0] ?? '';
    // Attach a key over the HTTP API, as a user's service would (`kv put` has no --lease).
    const put = await fetch(`${cluster.nodes[0]?.url}/v1/kv/put`, { method: 'POST', body:
      JSON.stringify({ key: 'svc/a', value: 'up', lease: Number(id), clientId: 't', sequence: 1 }),
    redirect: 'follow' });
    assert.equal(put.status, 200);
    const keepalive = await run(['lease', 'keepalive', id]);
    assert.match(keepalive.out[0] ?? '',
      new RegExp(`^lease ${id} kept alive: ttl 30000 ms, remaining \\d+ ms$`));
    const ttl = await run(['lease', 'ttl', id, '--keys']);
    assert.match(ttl.out[0] ?? '', new RegExp(`^lease ${id}: ttl 30000 ms, remaining \\d+ ms$`));
    assert.deepEqual(ttl.out.slice(1), ['svc/a']);
    const ttlJson = JSON.parse((await run(['lease', 'ttl', id, '--json'])).out[0] ?? '') as
      { leaseId: number; ttlMs: number };
    assert.deepEqual([ttlJson.leaseId, ttlJson.ttlMs], [Number(id), 30_000]);
    const list = await run(['lease', 'list']);
    assert.match(list.out[0] ?? '', /^LEASE\s+TTL_MS\s+REMAINING_MS\s+KEYS$/);
    assert.ok(list.out.some((l) => new RegExp(`^${id}\\s+30000\\s+\\S+\\s+1$`).test(l)),
      list.out.join('\n'));
    const listJson = JSON.parse((await run(['lease', 'list', '--json'])).out[0] ?? '') as
      { leases: { leaseId: number }[] };
    assert.ok(listJson.leases.some((l) => l.leaseId === Number(id)));
    const revoke = await run(['lease', 'revoke', id]);
    assert.match(revoke.out[0] ?? '', new RegExp(`^revoked lease ${id}: deleted 1 keys, `
      + 'revision \\d+$'));
    const gone = await run(['lease', 'ttl', id]);
    assert.equal(gone.code, 1);
    assert.match(gone.err, /^conclave lease ttl: CONCLAVE_LEASE_EXPIRED: /);
  });

  test('usage: a bad id, a missing or bad --ttl, a TTL below the minimum', async () => {
    const badId = await run(['lease', 'ttl', 'abc']);
    assert.equal(badId.code, 2);
    assert.match(badId.err, /value 'abc' is invalid for argument 'id'\. expected an integer/);
    const noTtl = await run(['lease', 'grant']);
    assert.equal(noTtl.code, 2);
    assert.match(noTtl.err, /required option '--ttl <seconds>'/);
    const zero = await run(['lease', 'grant', '--ttl', '0']);
    assert.equal(zero.code, 2);
    assert.match(zero.err, /--ttl <seconds>.*expected seconds/);
    // The fake's minimum is 93 ms: the server's message names it; the cluster refused (exit 1).
    const short = await run(['lease', 'grant', '--ttl', '0.05']);
    assert.equal(short.code, 1);
    assert.match(short.err, /CONCLAVE_REQUEST_INVALID: ttlMs must be at least 93 ms/);
  });

  test('grant --keep-alive keeps the lease past its TTL until Ctrl-C, then exits 0', async () => {
    // TTL 6 s: keep-alives every 2 s leave room for a loaded machine's scheduling delays (the
    // process may starve 4 s before its lease is at risk).
    const ttlMs = 6000;
    const p = new CliProcess(['lease', 'grant', '--ttl', String(ttlMs / 1000), '--keep-alive',
      ...endpoints, ...cliClientFlags()]);
    const id = Number((await p.line(/^\d+$/, deadlineMs(PROCESS_START_MS_IDLE))).text);
    const seen = cluster.keepAlivesSeen;
    // Past 1.3 TTLs of keep-alives.
    await until(() => cluster.keepAlivesSeen >= seen + 4, deadlineMs(4 * ttlMs / 3));
    assert.ok(cluster.store.leases().some((l) => l.id === id), 'still alive past its TTL');
    p.signal('SIGINT');
    assert.equal(await p.exited(deadlineMs(1000)), 0, p.text('stderr'));
    // Not revoked: it runs out on its own.
    await until(() => !cluster.store.leases().some((l) => l.id === id), deadlineMs(2 * ttlMs));
  });
});
