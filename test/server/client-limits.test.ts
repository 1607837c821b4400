/**
 * server: client limits — real `conclave server` processes attacked as a buggy or hostile
 * client would (issue #14): watch streams that never read while large values and large prevKv
 * values flow, a slow watcher, bodies at and past --max-request-bytes, slow senders holding
 * unfinished bodies, more connections than --max-connections, a reused idempotency key, a full
 * store. Each time the member stays up and serves, its peak RSS stays under a ceiling far
 * above normal (300 MiB; a member idles near 70 MiB), and each refusal is the documented error.
 * Method: real time; every wait is a condition with a deadline derived from the cluster's
 * timings and generous for a loaded 2-core machine.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect } from '../../src/client/index.js';
import type { KvEvent } from '../../src/core/kv/index.js';
import { BUILT, RealCluster, waitFor, type RealMember } from '../support/real-cluster.js';

const RSS_CEILING_MIB = 300;
const MIB = 1024 * 1024;
const DEADLINE_MS = 30_000;

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** One request on its own connection; follows no redirect. */
function request(member: RealMember, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: member.clientPort, method, path,
      headers: { connection: 'close', ...(body === undefined ? {}
        : { 'content-length': Buffer.byteLength(body) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, body: text === '' ? {}
          : JSON.parse(text) as Record<string, unknown> });
      });
      res.on('error', reject);
    });
    req.setTimeout(DEADLINE_MS, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

const post = (m: RealMember, path: string, body: unknown): Promise<Answer> =>
  request(m, 'POST', path, typeof body === 'string' ? body : JSON.stringify(body));

/** A write through whoever leads, again after a leader change (a retry keeps its key). */
async function write(cluster: RealCluster, path: string, body: unknown): Promise<Answer> {
  const end = performance.now() + DEADLINE_MS;
  for (;;) {
    const leader = await cluster.waitForLeader(DEADLINE_MS);
    const answer = await post(leader, path, body);
    const code = errorCode(answer);
    // 307 and NO_QUORUM: not applied, so trying again cannot apply it twice.
    if ((answer.status !== 307 && code !== 'CONCLAVE_NO_QUORUM') || performance.now() > end) {
      return answer;
    }
  }
}

const errorCode = (answer: Answer): unknown =>
  (answer.body['error'] as { code?: unknown } | undefined)?.code;

/** Peak resident memory of a member's process. Unit: MiB. */
function peakRssMiB(member: RealMember): number {
  const status = readFileSync(`/proc/${member.child?.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Raw connections that send `head` and never read what comes back. */
async function unread(member: RealMember, count: number, head: string): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = net.connect(member.clientPort, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve).once('error', resolve));
    socket.write(head);
    socket.pause();
    sockets.push(socket);
  }
  return sockets;
}

async function metric(member: RealMember, name: string): Promise<number> {
  const text = await new Promise<string>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: member.clientPort, path: '/metrics' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/** Serves: a small write through the leader is applied, and `member` answers a local read. */
async function serves(cluster: RealCluster, member: RealMember): Promise<void> {
  const written = await write(cluster, '/v1/kv/put', { key: 'probe/serves', value: 'yes' });
  assert.equal(written.status, 200, JSON.stringify(written.body));
  await waitFor(async () => {
    const read = await post(member, '/v1/kv/range', { key: 'probe/serves',
      consistency: 'serializable' }).catch(() => undefined);
    return read?.status === 200 && (read.body['kvs'] as unknown[]).length === 1 ? true : undefined;
  }, DEADLINE_MS, `${member.name} to serve a read`);
}

const NOT_BUILT = !BUILT && 'run npm run build first';

describe('server: client limits (real processes)', { skip: NOT_BUILT }, () => {
  let cluster: RealCluster;
  before(async () => {
    cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 100, electionTimeoutMs: 1000,
      serverArgs: ['--max-watcher-buffer-bytes', String(256 * 1024),
        '--quota-backend-bytes', String(12 * MIB), '--max-inflight-body-bytes', String(6 * MIB),
        '--body-timeout-ms', '3000'] });
    await cluster.waitForLeader(DEADLINE_MS);
  });
  after(async () => {
    await cluster?.stop();
  });

  test('unread watchers, 1 MB values and 1 MB prevKv: canceled slow, RSS bounded, members serve',
    async () => {
      const leader = await cluster.waitForLeader(DEADLINE_MS);
      const follower = cluster.members.find((m) => m !== leader) as RealMember;
      const canceledBefore = await metric(follower, 'conclave_watchers_canceled_slow');
      const value = 'x'.repeat(1_000_000);
      const onLeader = await unread(leader, 200,
        'GET /v1/watch?key=big HTTP/1.1\r\nHost: t\r\n\r\n');
      const onFollower = await unread(follower, 100,
        'GET /v1/watch?key=p/&prefix=true HTTP/1.1\r\nHost: t\r\n\r\n');
      try {
        assert.equal((await write(cluster, '/v1/kv/put', { key: 'big', value })).status, 200);
        // 6 MB of values, then small puts over them: each event carries a 1 MB prevKv. 12 MB
        // per watcher is more than the kernel's socket buffers take (about 4 MB on loopback).
        for (let i = 0; i < 12; i++) {
          const answer = await write(cluster, '/v1/kv/put', { key: `p/${i % 6}`,
            value: i < 6 ? value : 's' });
          assert.equal(answer.status, 200);
        }
        let canceled = 0;
        await waitFor(async () => {
          canceled = await metric(follower, 'conclave_watchers_canceled_slow') - canceledBefore;
          return canceled >= 90 ? true : undefined;
        }, DEADLINE_MS, `unread watchers canceled (${canceled} so far)`);
        assert.ok(await metric(follower, 'conclave_watch_queued_bytes') <= 64 * MIB);
        await serves(cluster, leader);
        await serves(cluster, follower);
        for (const m of [leader, follower]) {
          assert.ok(peakRssMiB(m) < RSS_CEILING_MIB, `${m.name} peaked at ${peakRssMiB(m)} MiB`);
        }
      } finally {
        for (const s of [...onLeader, ...onFollower]) s.destroy();
      }
      await write(cluster, '/v1/kv/delete', { key: 'p/', prefix: true });
      await write(cluster, '/v1/kv/delete', { key: 'big' });
    });

  test('a slow watcher is canceled slow; the client resumes from nextRevision, missing nothing',
    async () => {
      const leader = await cluster.waitForLeader(DEADLINE_MS);
      const follower = cluster.members.find((m) => m !== leader) as RealMember;
      const canceledBefore = await metric(follower, 'conclave_watchers_canceled_slow');
      // The HTTP watch path: its client stops reading a stalled watch, so the member sees it
      // slow (over the stream the client cuts a stalled watch itself: stream-client-transport.ts).
      const client = connect({ endpoints: [cluster.endpoint(follower)], transport: 'http' });
      const start = Number((await request(follower, 'GET', '/v1/status')).body['revision']) + 1;
      const watch = client.watch({ prefix: 'sw/' }, { fromRevision: start });
      const iterator = watch[Symbol.asyncIterator]();
      const first = iterator.next(); // opens the stream, then the consumer stalls
      const revisions: number[] = [];
      const value = 'w'.repeat(32 * 1024);
      try {
        // 32 KiB events until the server gave up on the stalled stream (kernel buffers first).
        for (let i = 0; i < 600; i++) {
          const answer = await write(cluster, '/v1/kv/put', { key: `sw/${i % 20}`, value });
          assert.equal(answer.status, 200);
          revisions.push(answer.body['revision'] as number);
          if (i % 20 === 19 && await metric(follower, 'conclave_watchers_canceled_slow')
            > canceledBefore) break;
        }
        assert.ok(await metric(follower, 'conclave_watchers_canceled_slow') > canceledBefore,
          'the stalled watcher was canceled');
        const seen: KvEvent[] = [];
        let next = await first;
        while (!next.done) {
          seen.push(next.value);
          if (seen.length === revisions.length) break;
          next = await iterator.next();
        }
        assert.deepEqual(seen.map((e) => e.kv.modRevision), revisions);
      } finally {
        watch.close();
        client.close();
      }
    });

  test('a body of exactly --max-request-bytes is applied everywhere; one byte more is 413',
    async () => {
      const limit = 1.5 * MIB;
      const frame = JSON.stringify({ key: 'lim/max', value: '' });
      const body = JSON.stringify({ key: 'lim/max', value: 'v'.repeat(limit - frame.length) });
      assert.equal(Buffer.byteLength(body), limit);
      const accepted = await write(cluster, '/v1/kv/put', body);
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
      for (const member of cluster.members) {
        await waitFor(async () => {
          const read = await post(member, '/v1/kv/range', { key: 'lim/max',
            consistency: 'serializable' });
          const kv = (read.body['kvs'] as { value: string }[] | undefined)?.[0];
          return kv?.value.length === limit - frame.length ? true : undefined;
        }, DEADLINE_MS, `${member.name} to hold the largest value`);
      }
      const over = await write(cluster, '/v1/kv/put', `${body.slice(0, -2)}v"}`);
      assert.equal(over.status, 413);
      assert.equal(errorCode(over), 'CONCLAVE_REQUEST_INVALID');
      await write(cluster, '/v1/kv/delete', { key: 'lim/max' });
    });

  test('slow senders of unfinished bodies are cut off: 503 at the in-flight bound, 408 later',
    async () => {
      const leader = await cluster.waitForLeader(DEADLINE_MS);
      const chunk = 'x'.repeat(64 * 1024);
      const answers: string[] = [];
      const closed: Promise<void>[] = [];
      for (let i = 0; i < 8; i++) {
        const socket = net.connect(leader.clientPort, '127.0.0.1');
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString()));
        socket.on('error', () => undefined);
        closed.push(new Promise((resolve) => socket.once('close', () => {
          answers.push(text);
          resolve();
        })));
        await new Promise<void>((resolve) => socket.once('connect', resolve));
        socket.write('POST /v1/kv/put HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n');
        // 1.4 MB of a body that never ends (6 MiB may be held in all: 4 of these).
        for (let sent = 0; sent < 1_400_000; sent += chunk.length) {
          socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        }
      }
      await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, DEADLINE_MS))]);
      assert.equal(answers.length, 8, 'every slow sender was disconnected');
      const got = (status: string, code: string): boolean =>
        answers.some((a) => a.startsWith(`HTTP/1.1 ${status}`) && a.includes(code));
      assert.ok(got('503', 'CONCLAVE_LIMIT_EXCEEDED'), answers.map((a) => a.slice(0, 40)).join('|'));
      assert.ok(got('408', 'CONCLAVE_TIMEOUT'));
      assert.ok(peakRssMiB(leader) < RSS_CEILING_MIB, `peaked at ${peakRssMiB(leader)} MiB`);
      await serves(cluster, leader);
    });

  test('a reused idempotency key with another body is 409; writes without one apply each time',
    async () => {
      const first = await write(cluster, '/v1/kv/put', { key: 'idem/a', value: '1',
        clientId: 'limits-test', sequence: 1 });
      assert.equal(first.status, 200);
      const retry = await write(cluster, '/v1/kv/put', { key: 'idem/a', value: '1',
        clientId: 'limits-test', sequence: 1 });
      assert.deepEqual(retry.body, first.body, 'a retry gets the first answer');
      const reused = await write(cluster, '/v1/kv/put', { key: 'idem/a', value: '2',
        clientId: 'limits-test', sequence: 1 });
      assert.equal(reused.status, 409);
      assert.deepEqual(reused.body['error'] && [errorCode(reused),
        (reused.body['error'] as { outcome: string }).outcome],
      ['CONCLAVE_IDEMPOTENCY_MISMATCH', 'failed']);
      const bare = { key: 'idem/b', value: 'same' };
      const one = await write(cluster, '/v1/kv/put', bare);
      const two = await write(cluster, '/v1/kv/put', bare);
      assert.ok((two.body['revision'] as number) > (one.body['revision'] as number));
      const read = await write(cluster, '/v1/kv/range', { key: 'idem/', prefix: true });
      assert.deepEqual((read.body['kvs'] as { value: string; version: number }[])
        .map((kv) => [kv.value, kv.version]), [['1', 1], ['same', 2]]);
    });

  test('a full store refuses writes with 507 and NOSPACE on every member; deletes clear it',
    async () => {
      const value = 'q'.repeat(MIB);
      let refused: Answer | undefined;
      for (let i = 0; i < 40 && refused === undefined; i++) {
        const answer = await write(cluster, '/v1/kv/put', { key: `q/${i}`, value });
        if (answer.status !== 200) refused = answer;
      }
      assert.equal(refused?.status, 507);
      assert.equal(errorCode(refused as Answer), 'CONCLAVE_QUOTA_EXCEEDED');
      assert.equal((refused?.body['error'] as { outcome: string }).outcome, 'failed');
      const alarmsOf = async (m: RealMember): Promise<unknown> =>
        (await request(m, 'GET', '/v1/status')).body['alarms'];
      for (const m of cluster.members) {
        await waitFor(async () => (JSON.stringify(await alarmsOf(m)) === '["NOSPACE"]' ? true
          : undefined), DEADLINE_MS, `${m.name} to raise NOSPACE`);
      }
      const small = await write(cluster, '/v1/kv/put', { key: 'q/small', value: 's' });
      assert.equal(small.status, 507, 'while NOSPACE is on, no write adds data');
      const freed = await write(cluster, '/v1/kv/delete', { key: 'q/', prefix: true });
      assert.equal(freed.status, 200);
      for (const m of cluster.members) {
        await waitFor(async () => (JSON.stringify(await alarmsOf(m)) === '[]' ? true : undefined),
          DEADLINE_MS, `${m.name} to clear NOSPACE`);
      }
      const again = await write(cluster, '/v1/kv/put', { key: 'q/small', value: 's' });
      assert.equal(again.status, 200);
    });
});

describe('server: connection limit (real process)', { skip: NOT_BUILT }, () => {
  let cluster: RealCluster;
  before(async () => {
    cluster = await RealCluster.start({ nodes: 1, heartbeatMs: 100, electionTimeoutMs: 1000,
      serverArgs: ['--max-connections', '8'] });
    await cluster.waitForLeader(DEADLINE_MS);
  });
  after(async () => {
    await cluster?.stop();
  });

  test('past --max-connections a connection gets 503 LIMIT_EXCEEDED; closing one makes room',
    async () => {
      const member = cluster.members[0] as RealMember;
      const held = await unread(member, 8, '');
      try {
        const refused = await new Promise<string>((resolve) => {
          const socket = net.connect(member.clientPort, '127.0.0.1');
          let text = '';
          socket.on('data', (c: Buffer) => (text += c.toString()));
          socket.on('close', () => resolve(text));
          socket.on('error', () => undefined);
        });
        assert.match(refused, /^HTTP\/1\.1 503 /);
        assert.match(refused, /CONCLAVE_LIMIT_EXCEEDED/);
        held.pop()?.destroy();
        await waitFor(async () => (await request(member, 'GET', '/v1/status')
          .catch(() => undefined))?.status === 200 ? true : undefined, DEADLINE_MS,
        'a connection accepted again');
      } finally {
        for (const s of held) s.destroy();
      }
    });
});
