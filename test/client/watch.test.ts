/**
 * client: watch — events in order, from a revision or from now, across broken streams and
 * dead members, never skipping or repeating one; compaction and closing end it cleanly.
 * Method: the fake cluster (real HTTP API, watch hub and KvStore on loopback) cuts streams in
 * the middle of a line; a scripted server replays events the client already has, to check
 * the duplicate guard and the resume revision it asks for. Nothing sleeps.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, test } from 'node:test';
import {
  connect, type ConclaveClient, type ConnectOptions, type TransportOption, type KvEvent,
} from '../../src/client/index.js';
import { CoordError } from '../../src/errors.js';
import { FakeCluster } from './fake-cluster.js';
import { until } from '../support/conditions.js';
import { deadlineMs, patienceMs } from '../support/deadlines.js';
import { TRANSPORT } from './transport-under-test.js';

// Sized for a loaded machine (test/support/deadlines.ts).
const FAST: Omit<ConnectOptions, 'endpoints'> = {
  requestTimeoutMs: patienceMs(500), retryDeadlineMs: deadlineMs(1000), backoffMsMin: 1,
  backoffMsMax: 20,
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cluster(nodes = 3): Promise<FakeCluster> {
  const c = await FakeCluster.start({ nodes });
  cleanups.push(() => c.stop());
  return c;
}

function client(endpoints: string[], options: Partial<ConnectOptions & TransportOption> = {}):
  ConclaveClient {
  const c = connect({ ...FAST, transport: TRANSPORT, ...options, endpoints });
  cleanups.push(() => c.close());
  return c;
}

async function take(iterator: AsyncIterator<KvEvent>, count: number): Promise<KvEvent[]> {
  const events: KvEvent[] = [];
  while (events.length < count) {
    const next = await iterator.next();
    assert.equal(next.done, false, `the watch ended after ${events.length} of ${count} events`);
    events.push(next.value as KvEvent);
  }
  return events;
}

const summary = (events: readonly KvEvent[]): string[] =>
  events.map((e) => `${e.kv.modRevision} ${e.type} ${e.kv.key}`);

describe('client: watch', () => {
  test('delivers the history from fromRevision, in order, then live events', async () => {
    const fake = await cluster();
    const c = client(fake.endpoints);
    const first = await c.kv.put('w/a', '1');
    await c.kv.put('other', 'x');
    await c.kv.delete('w/a');
    const watch = c.watch({ prefix: 'w/' }, { fromRevision: first.revision });
    const it = watch[Symbol.asyncIterator]();
    const history = await take(it, 2);
    assert.deepEqual(summary(history),
      [`${first.revision} put w/a`, `${first.revision + 2} delete w/a`]);
    const live = await c.kv.put('w/b', '2');
    assert.deepEqual(summary(await take(it, 1)), [`${live.revision} put w/b`]);
    assert.equal(watch.nextRevision, live.revision + 1);
  });

  test('without fromRevision it starts after the revision current when it opened', async () => {
    const fake = await cluster(1);
    const c = client(fake.endpoints);
    await c.kv.put('now/old', '1');
    const it = c.watch({ key: 'now/k' })[Symbol.asyncIterator]();
    const first = it.next();
    await until(() => fake.nodes[0]!.hub.size === 1);
    await c.kv.put('now/k', 'new');
    const event = (await first).value as KvEvent;
    assert.equal(event.kv.value, 'new');
  });

  test('streams cut mid-line on every member: no event skipped or repeated', async () => {
    const fake = await cluster(3);
    const c = client(fake.endpoints);
    const start = fake.store.revision + 1;
    const it = c.watch({ prefix: 'cut/' }, { fromRevision: start })[Symbol.asyncIterator]();
    const pattern = [0, 2, 1, 0, 3];
    fake.nodes.forEach((node, i) => {
      for (const [j, messages] of pattern.entries()) {
        if ((i + j) % 2 === 0) {
          node.faults.push({ path: '/v1/watch', action: 'cut-watch', messages });
        }
      }
    });
    const seen: KvEvent[] = [];
    for (let i = 0; i < 24; i++) {
      // Some revisions carry two events (a transaction): a cut must not split them.
      if (i % 3 === 0) {
        await c.kv.txn({ compare: [], success: [{ kind: 'put', key: `cut/${i}a`, value: '1' },
          { kind: 'put', key: `cut/${i}b`, value: '1' }] });
        seen.push(...await take(it, 2));
      } else {
        await c.kv.put(`cut/${i}`, String(i));
        seen.push(...await take(it, 1));
      }
    }
    const expected = fake.store.eventsSince(start, { key: 'cut/', prefix: true });
    assert.ok(expected.kind === 'events');
    assert.deepEqual(summary(seen), summary(expected.events));
    const opened = fake.nodes.flatMap((n) => n.requests).filter((r) => r.includes('/v1/watch'));
    const cutsLeft = fake.nodes.reduce((sum, n) => sum + n.faults.length, 0);
    assert.ok(opened.length >= 6 && cutsLeft <= 3,
      `${opened.length} streams, ${cutsLeft} cuts left`);
  });

  test('the member serving the watch dies: the watch moves to another one', async () => {
    const fake = await cluster(3);
    const c = client(fake.endpoints);
    const it = c.watch({ prefix: 'fo/' }, { fromRevision: fake.store.revision + 1 })
      [Symbol.asyncIterator]();
    await c.kv.put('fo/1', '1');
    await take(it, 1);
    const serving = fake.nodes.find((n) => n.hub.size === 1)!;
    await serving.down();
    if (fake.leaderId === serving.id) fake.elect(fake.nodes.find((n) => n !== serving)!.id);
    await c.kv.put('fo/2', '2');
    assert.deepEqual(summary(await take(it, 1)).map((s) => s.split(' ')[2]), ['fo/2']);
  });

  test('a compacted history ends the watch with CONCLAVE_KV_COMPACTED', async () => {
    const fake = await cluster(1);
    const c = client(fake.endpoints);
    for (let i = 0; i < 5; i++) await c.kv.put('cmp/k', String(i));
    fake.compact(fake.store.revision - 1);
    const it = c.watch({ key: 'cmp/k' }, { fromRevision: 2 })[Symbol.asyncIterator]();
    await assert.rejects(it.next(), (error: CoordError) => {
      assert.equal(error.code, 'CONCLAVE_KV_COMPACTED');
      assert.match(error.message, /compacted through/);
      return true;
    });
  });

  test('close() ends the iteration; the watch is gone from the server', async () => {
    const fake = await cluster(1);
    const c = client(fake.endpoints);
    const watch = c.watch({ key: 'cl/k' });
    const it = watch[Symbol.asyncIterator]();
    const pending = it.next();
    await until(() => fake.nodes[0]!.hub.size === 1);
    watch.close();
    assert.equal((await pending).done, true);
    await until(() => fake.nodes[0]!.hub.size === 0);
  });

  test('no member reachable: UNAVAILABLE after the retry deadline', async () => {
    const fake = await cluster(2);
    await fake.stop();
    const c = client(fake.endpoints, { retryDeadlineMs: 150 });
    const it = c.watch({ key: 'k' }, { fromRevision: 1 })[Symbol.asyncIterator]();
    await assert.rejects(it.next(), (error: CoordError) => error.code === 'CONCLAVE_UNAVAILABLE');
  });

  test('a replayed event is dropped and the resume asks for the next revision', async () => {
    const event = (rev: number): KvEvent => ({ type: 'put', kv: { key: 'k', value: String(rev),
      createRevision: 2, modRevision: rev, version: rev - 1 } });
    const line = (message: unknown): string => `${JSON.stringify(message)}\n`;
    const asked: string[] = [];
    const server = createServer((req, res) => {
      const from = new URL(req.url ?? '/', 'http://x').searchParams.get('fromRevision') ?? '';
      asked.push(from);
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(line({ kind: 'progress', revision: 9 }));
      if (asked.length === 1) {
        res.write(line({ kind: 'events', events: [event(2), event(3)], nextRevision: 4 }));
        res.write('{"kind":"events","events":[{"type":"put"'); // torn line, then the drop
        res.socket?.end(); // end, not destroy: what was written is flushed first
      } else {
        // A (misbehaving) server that repeats revision 3 before the new one.
        res.write(line({ kind: 'events', events: [event(3), event(4)], nextRevision: 5 }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }));
    // A hand-written HTTP watch server: this test is about the HTTP transport.
    const c = client([`127.0.0.1:${(server.address() as AddressInfo).port}`],
      { transport: 'http' });
    const it = c.watch({ key: 'k' }, { fromRevision: 2 })[Symbol.asyncIterator]();
    assert.deepEqual((await take(it, 3)).map((e) => e.kv.modRevision), [2, 3, 4]);
    assert.deepEqual(asked, ['2', '4']);
  });

  test('canceled (slow): the watch resumes from its nextRevision, nothing lost', async () => {
    const event = (rev: number): KvEvent => ({ type: 'put', kv: { key: 'k', value: String(rev),
      createRevision: 2, modRevision: rev, version: rev - 1 } });
    const line = (message: unknown): string => `${JSON.stringify(message)}\n`;
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(new URL(req.url ?? '/', 'http://x').searchParams.get('fromRevision') ?? '');
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(line({ kind: 'progress', revision: 9 }));
      if (asked.length > 1) {
        res.end(line({ kind: 'events', events: [event(7)], nextRevision: 8 }));
        return;
      }
      // Revisions 3 to 5 changed other keys: the member says so with the cancel's revision.
      res.write(line({ kind: 'events', events: [event(2)], nextRevision: 3 }));
      res.end(line({ kind: 'canceled', reason: 'slow', nextRevision: 6 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }));
    // A hand-written HTTP watch server: this test is about the HTTP transport.
    const c = client([`127.0.0.1:${(server.address() as AddressInfo).port}`],
      { transport: 'http' });
    const watch = c.watch({ key: 'k' }, { fromRevision: 2 });
    const it = watch[Symbol.asyncIterator]();
    assert.deepEqual((await take(it, 2)).map((e) => e.kv.modRevision), [2, 7]);
    assert.deepEqual(asked.slice(0, 2), ['2', '6']);
  });
});
