/**
 * cli: compact — `conclave compact REV` compacts the history: text and --json output, a second
 * compaction at or below the first and one ahead of the store refused with one line (exit 1),
 * bad usage exit 2; afterwards a watch or a read from a compacted revision is answered
 * CONCLAVE_KV_COMPACTED, as before compaction existed. Method: runCli in-process against the
 * fake cluster of the client tests (the real HTTP API and KvStore on loopback).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeCluster } from '../client/fake-cluster.js';
import { runCliInProcess } from './run-in-process.js';

const run = runCliInProcess;

let fake: FakeCluster;
let endpoints: string[];

describe('cli: compact', () => {
  before(async () => {
    fake = await FakeCluster.start({ nodes: 3 });
    endpoints = ['--endpoints', fake.endpoints.join(','), '--deadline-ms', '2000'];
  });
  after(async () => {
    await fake.stop();
  });

  test('compacts, says so; older revisions are then answered compacted', async () => {
    const first = await run(['kv', 'put', 'ck/a', '1', ...endpoints]);
    const revision = Number(/revision (\d+)/.exec(first.out[0] ?? '')?.[1]);
    await run(['kv', 'put', 'ck/a', '2', ...endpoints]);
    await run(['kv', 'put', 'ck/a', '3', ...endpoints]);
    const compacted = await run(['compact', String(revision + 1), ...endpoints]);
    assert.deepEqual([compacted.code, compacted.out], [0, [`compacted revision ${revision + 1}`]]);
    const watch = await run(['watch', 'ck/a', '--from-revision', String(revision), '--count', '1',
      ...endpoints]);
    assert.equal(watch.code, 1);
    assert.match(watch.err.join('\n'), /CONCLAVE_KV_COMPACTED/);
    const read = await run(['kv', 'get', 'ck/a', '--revision', String(revision), ...endpoints]);
    assert.equal(read.code, 1);
    assert.match(read.err.join('\n'), /CONCLAVE_KV_COMPACTED/);
    const kept = await run(['watch', 'ck/a', '--from-revision', String(revision + 2),
      '--count', '1', ...endpoints]);
    assert.deepEqual([kept.code, kept.out], [0, [`${revision + 2} PUT ck/a 3`]]);
  });

  test('--json; refusals (already compacted, ahead of the store) exit 1 on one line', async () => {
    const put = await run(['kv', 'put', 'ck/b', '1', '--json', ...endpoints]);
    const { revision } = JSON.parse(put.out[0] ?? '{}') as { revision: number };
    const json = await run(['compact', String(revision), '--json', ...endpoints]);
    assert.equal(json.code, 0, json.err.join('\n'));
    assert.deepEqual(JSON.parse(json.out[0] ?? '{}'), { kind: 'compact', revision,
      compactRevision: revision });
    const again = await run(['compact', String(revision), ...endpoints]);
    assert.equal(again.code, 1);
    assert.equal(again.err.length, 1);
    assert.match(again.err[0] ?? '', /^conclave compact: CONCLAVE_KV_COMPACTED: /);
    const ahead = await run(['compact', String(revision + 1000), ...endpoints]);
    assert.equal(ahead.code, 1);
    assert.match(ahead.err[0] ?? '', /CONCLAVE_KV_FUTURE_REVISION/);
  });

  test('a revision that is not a positive integer is a usage error naming the argument', async () => {
    for (const bad of ['0', '-3', 'x', '1.5']) {
      const r = await run(['compact', bad, ...endpoints]);
      assert.equal(r.code, 2, bad);
      assert.match(r.err.join('\n'), /revision/, bad);
    }
    const help = await run(['compact', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.out.join('\n'), /compact the history up to REVISION/);
  });
});
