/**
 * client: a stream client killed mid-batch (kill -9 of its process) leaves no request applied
 * twice. Method: a real three-member cluster (the built bin); a child process sends batches of
 * stamped puts over one stream, one message per batch (stream-kill-child.ts); it is killed
 * while a batch (the third or later) is sent and not wholly acknowledged. Then the batches it had sent are sent again with the
 * same idempotency keys over a new stream (as a client that retries does), every answer must
 * be the put's result (or DUPLICATE_STALE for a batch that a later one superseded), and every
 * key of every batch must exist exactly once with version 1: a put applied twice would have
 * made it version 2.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { StreamClientTransport } from '../../src/adapters/stream-client-transport.js';
import { connect, type ConclaveClient } from '../../src/client/index.js';
import { BUILT, RealCluster } from '../support/real-cluster.js';
import { deadlineMs } from '../support/deadlines.js';

const CHILD = fileURLToPath(new URL('./stream-kill-child.ts', import.meta.url));
const WIDTH = 64;

describe('client: stream client killed mid-batch', { skip: !BUILT && 'npm run build first' }, () => {
  let cluster: RealCluster;
  let client: ConclaveClient;
  before(async () => {
    cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 50, electionTimeoutMs: 500 });
    await cluster.waitForLeader();
    client = connect({ endpoints: cluster.endpoints });
  });
  after(async () => {
    client.close();
    await cluster.stop();
  });

  test('kill -9 with a batch in flight: re-sent with the same keys, applied once',
    async () => {
      const leader = cluster.endpoint(await cluster.waitForLeader());
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, `http://${leader}`,
        String(WIDTH)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let sentMax = 0;
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const killed = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no half-acknowledged batch; `
          + `stderr: ${stderr.slice(-1000)}`)), deadlineMs(20_000));
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          for (const m of text.matchAll(/^sent (\d+)$/gm)) sentMax = Math.max(sentMax, Number(m[1]));
          // Mid-batch: from the third batch on, the last one sent is not wholly acknowledged.
          const whole = new RegExp(`^acked ${sentMax} ${WIDTH}$`, 'm').test(text);
          if (sentMax >= 3 && !whole && child.exitCode === null) {
            clearTimeout(timer);
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }
        });
        child.once('exit', (code) => {
          if (code !== null) reject(new Error(`the child exited ${code}: ${stderr.slice(-1000)}`));
        });
      });
      await killed;
      assert.ok(sentMax >= 3, `sent ${sentMax}`);
      const retry = new StreamClientTransport();
      try {
        for (let batch = 1; batch <= sentMax; batch++) {
          const answers = await Promise.all(Array.from({ length: WIDTH }, (_, i) =>
            retry.call(`http://${leader}`, { kind: 'put', key: `k/${batch}/${i}`,
              value: `v${batch}.${i}`, clientId: `kill9.${i}`, sequence: batch })));
          for (const answer of answers) {
            const ok = answer.kind === 'ok' && (answer.body as { kind?: string }).kind === 'put';
            const stale = answer.kind === 'refused'
              && answer.error.code === 'CONCLAVE_DUPLICATE_STALE' && batch < sentMax;
            assert.ok(ok || stale, `batch ${batch}: ${JSON.stringify(answer).slice(0, 300)}`);
          }
        }
      } finally {
        retry.close();
      }
      const { kvs } = await client.kv.range('k/');
      const twice = kvs.filter((kv) => kv.version !== 1).map((kv) => kv.key);
      assert.deepEqual(twice, [], 'no put applied twice');
      // The batch cut by the kill is whole now: its re-sent puts applied (once).
      const cut = kvs.filter((kv) => kv.key.startsWith(`k/${sentMax}/`)).length;
      assert.equal(cut, WIDTH);
    });
});
