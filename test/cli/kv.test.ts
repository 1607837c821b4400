/**
 * cli: kv, status, watch — the commands that talk to a cluster: their output (text and
 * --json), exit codes (0 ok, 1 the cluster could not, 2 usage) and one-line errors.
 * Method: runCli in-process with captured output against the fake cluster of the client
 * tests (the real HTTP API on loopback); unreachable and leaderless clusters with short
 * deadlines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeCluster } from '../client/fake-cluster.js';
import { runCliInProcess } from './run-in-process.js';

const run = runCliInProcess;

let fake: FakeCluster;
let endpoints: string[];

describe('cli: kv', () => {
  before(async () => {
    fake = await FakeCluster.start({ nodes: 3 });
    endpoints = ['--endpoints', fake.endpoints.join(',')];
  });
  after(async () => {
    await fake.stop();
  });

  test('put, get, range and del print plain results, exit 0', async () => {
    const put = await run(['kv', 'put', 'cli/a', 'hello world', ...endpoints]);
    assert.equal(put.code, 0, put.err.join('\n'));
    assert.match(put.out[0] ?? '', /^OK revision \d+$/);
    await run(['kv', 'put', 'cli/b', '2', ...endpoints]);
    const get = await run(['kv', 'get', 'cli/a', ...endpoints]);
    assert.deepEqual([get.code, get.out], [0, ['hello world']]);
    const range = await run(['kv', 'range', 'cli/', ...endpoints]);
    assert.deepEqual(range.out, ['cli/a\thello world', 'cli/b\t2']);
    const limited = await run(['kv', 'range', 'cli/', '--limit', '1', ...endpoints]);
    assert.deepEqual(limited.out, ['cli/a\thello world']);
    assert.match(limited.err.join(''), /1 of 2 keys/);
    const del = await run(['kv', 'del', 'cli/', '--prefix', ...endpoints]);
    assert.match(del.out[0] ?? '', /^deleted 2 revision \d+$/);
  });

  test('get of a missing key: nothing on stdout, one line on stderr, exit 1', async () => {
    const r = await run(['kv', 'get', 'cli/none', ...endpoints]);
    assert.equal(r.code, 1);
    assert.deepEqual(r.out, []);
    assert.equal(r.err.length, 1);
    assert.match(r.err[0] ?? '', /cli\/none not found/);
  });

  test('--json prints one parsable object per command', async () => {
    const put = await run(['kv', 'put', 'json/k', 'v', '--json', ...endpoints]);
    const parsed = JSON.parse(put.out[0] ?? '') as { kind: string; revision: number };
    assert.equal(parsed.kind, 'put');
    const get = await run(['kv', 'get', 'json/k', '--json', '--serializable', ...endpoints]);
    const got = JSON.parse(get.out[0] ?? '') as { found: boolean; kv: { value: string } };
    assert.deepEqual([got.found, got.kv.value], [true, 'v']);
    const range = await run(['kv', 'range', '', '--json', ...endpoints]);
    assert.ok((JSON.parse(range.out[0] ?? '') as { count: number }).count >= 1);
  });

  test('endpoints come from $CONCLAVE_ENDPOINTS when there is no flag', async () => {
    const saved = process.env['CONCLAVE_ENDPOINTS'];
    process.env['CONCLAVE_ENDPOINTS'] = fake.endpoints.join(',');
    try {
      assert.equal((await run(['kv', 'put', 'env/k', 'v'])).code, 0);
      process.env['CONCLAVE_ENDPOINTS'] = 'not an endpoint';
      const bad = await run(['kv', 'get', 'env/k']);
      assert.equal(bad.code, 2);
      assert.match(bad.err.join('\n'), /CONCLAVE_ENDPOINTS is invalid/);
    } finally {
      if (saved === undefined) delete process.env['CONCLAVE_ENDPOINTS'];
      else process.env['CONCLAVE_ENDPOINTS'] = saved;
    }
  });

  test('bad flags and arguments exit 2 naming the problem', async () => {
    const badEndpoint = await run(['kv', 'get', 'k', '--endpoints', 'nohost']);
    assert.equal(badEndpoint.code, 2);
    assert.match(badEndpoint.err.join('\n'), /--endpoints.*names no port/);
    const badLimit = await run(['kv', 'range', 'p', '--limit', 'many', ...endpoints]);
    assert.equal(badLimit.code, 2);
    assert.match(badLimit.err.join('\n'), /--limit/);
    assert.equal((await run(['kv', 'put', ...endpoints])).code, 2); // no KEY
    assert.equal((await run(['kv', 'frob', ...endpoints])).code, 2);
    const help = await run(['kv', 'put', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.out.join('\n'), /--endpoints/);
  });

  test('an unreachable cluster: one line, exit 1, no stack trace', async () => {
    const gone = await FakeCluster.start({ nodes: 1 });
    await gone.stop();
    const r = await run(['kv', 'put', 'k', 'v', '--endpoints', gone.endpoints.join(','),
      '--deadline-ms', '100']);
    assert.equal(r.code, 1);
    assert.equal(r.err.length, 1);
    assert.match(r.err[0] ?? '',
      /^conclave kv put: CONCLAVE_UNAVAILABLE: .*ECONNREFUSED.*\(not applied\)$/);
  });

  test('no leader: NO_QUORUM in one line, exit 1; --json adds the error', async () => {
    fake.elect(undefined);
    fake.leaderKnown = false;
    try {
      const r = await run(['kv', 'put', 'k', 'v', '--json', '--deadline-ms', '100', ...endpoints]);
      assert.equal(r.code, 1);
      assert.match(r.err[0] ?? '', /CONCLAVE_NO_QUORUM/);
      const parsed = JSON.parse(r.out[0] ?? '') as { error: { code: string; outcome: string } };
      assert.deepEqual(parsed.error.code, 'CONCLAVE_NO_QUORUM');
      assert.deepEqual(parsed.error.outcome, 'failed');
      const status = await run(['status', ...endpoints]);
      assert.equal(status.code, 1);
      assert.match(status.out[0] ?? '', /leader: none/);
      assert.match(status.err.join('\n'), /CONCLAVE_NO_QUORUM: no member knows a leader/);
    } finally {
      fake.elect('n1');
      fake.leaderKnown = true;
    }
  });
});

describe('cli: status', () => {
  before(async () => {
    fake = await FakeCluster.start({ nodes: 3 });
    endpoints = ['--endpoints', fake.endpoints.join(',')];
  });
  after(async () => {
    await fake.stop();
  });

  test('prints the leader, term, commit index and a row per member', async () => {
    await fake.node('n2').down();
    try {
      const r = await run(['status', ...endpoints]);
      assert.equal(r.code, 0, r.err.join('\n'));
      assert.match(r.out[0] ?? '',
        /^leader: n1 \(http:\/\/127\.0\.0\.1:\d+\) {2}term: \d+ {2}commit index: 0/);
      assert.match(r.out[1] ?? '', /^ID\s+ROLE\s+HEALTH\s+TERM\s+COMMIT/);
      assert.match(r.out[2] ?? '', /^n1\s+leader\s+up/);
      assert.match(r.out[3] ?? '', /^n2\s+follower\s+down/);
      assert.match(r.out[4] ?? '', /^n3\s+follower\s+up/);
      assert.match(r.out.join('\n'), /n2 is down: .*ECONNREFUSED/);
    } finally {
      await fake.node('n2').up();
    }
  });

  test('--json prints the ClusterStatus object', async () => {
    const r = await run(['status', '--json', ...endpoints]);
    const parsed = JSON.parse(r.out[0] ?? '') as { leaderId: string; members: unknown[] };
    assert.equal(parsed.leaderId, 'n1');
    assert.equal(parsed.members.length, 3);
  });
});

describe('cli: watch', () => {
  before(async () => {
    fake = await FakeCluster.start({ nodes: 3 });
    endpoints = ['--endpoints', fake.endpoints.join(',')];
  });
  after(async () => {
    await fake.stop();
  });

  test('prints history and changes as lines, and --json as one object per line', async () => {
    const first = await run(['kv', 'put', 'wk/a', '1', ...endpoints]);
    const revision = Number(/revision (\d+)/.exec(first.out[0] ?? '')?.[1]);
    await run(['kv', 'put', 'wk/b', '2', ...endpoints]);
    await run(['kv', 'del', 'wk/a', ...endpoints]);
    const text = await run(['watch', '--prefix', 'wk/', '--from-revision', String(revision),
      '--count', '3', ...endpoints]);
    assert.equal(text.code, 0, text.err.join('\n'));
    assert.deepEqual(text.out, [`${revision} PUT wk/a 1`, `${revision + 1} PUT wk/b 2`,
      `${revision + 2} DELETE wk/a`]);
    const json = await run(['watch', 'wk/b', '--from-revision', String(revision), '--count', '1',
      '--json', ...endpoints]);
    const event = JSON.parse(json.out[0] ?? '') as { revision: number; type: string };
    assert.deepEqual([event.revision, event.type], [revision + 1, 'put']);
  });

  test('live events are printed as they happen', async () => {
    const pending = run(['watch', 'live/k', '--count', '1', ...endpoints]);
    const start = performance.now();
    while (!fake.nodes.some((n) => n.hub.size > 0)) {
      assert.ok(performance.now() - start < 2000, 'the watch did not open');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await run(['kv', 'put', 'live/k', 'now', ...endpoints]);
    const r = await pending;
    assert.match(r.out[0] ?? '', /^\d+ PUT live\/k now$/);
  });

  test('KEY and --prefix together, or neither, is a usage error (exit 2)', async () => {
    const both = await run(['watch', 'k', '--prefix', 'p', ...endpoints]);
    assert.equal(both.code, 2);
    assert.match(both.err[0] ?? '', /exactly one of KEY or --prefix/);
    assert.equal((await run(['watch', ...endpoints])).code, 2);
    assert.equal((await run(['watch', 'k', '--from-revision', '-1', ...endpoints])).code, 2);
  });

  test('a compacted history: one line, exit 1', async () => {
    for (let i = 0; i < 3; i++) await run(['kv', 'put', 'cmp/k', String(i), ...endpoints]);
    fake.compact(fake.store.revision - 1);
    const r = await run(['watch', 'cmp/k', '--from-revision', '1', ...endpoints]);
    assert.equal(r.code, 1);
    assert.equal(r.err.length, 1);
    assert.match(r.err[0] ?? '', /^conclave watch: CONCLAVE_KV_COMPACTED: /);
  });
});
