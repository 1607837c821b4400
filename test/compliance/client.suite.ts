/**
 * The client's compliance suite: what `Client` (src/client) must do whatever backend carries
 * it, run against a real Conclave cluster (client-conclave.test.ts) and a real etcd cluster
 * (client-etcd.test.ts), both of 3 members as real processes. Same assertions on both; where
 * etcd's semantics differ, the test's name says so (`backend` tells which runs).
 * Method: every wait is a condition with a deadline (test/support/deadlines.ts); time in the
 * lease tests is read from the client's own monotonic clock, never slept on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Fence, runOnce, type Client, type Lease } from '../../src/client/index.js';
import { recipeKeys } from '../../src/core/election/index.js';
import { CoordError } from '../../src/errors.js';
import { deadlineMs } from '../support/deadlines.js';
import { waitFor } from '../support/real-cluster.js';

export interface ClientBackend {
  readonly name: 'conclave' | 'etcd';
  /** A new client of the cluster (each its own connections and client id). */
  client(): Client;
  /** The lease TTL the recipe tests use (above both backends' minimum). Unit: ms. */
  readonly ttlMs: number;
  /** The lease margin the clients use. Unit: ms. */
  readonly leaseMarginMs: number;
  stop(): Promise<void>;
}

/** How long a wait on the cluster (a write, an election after a release) may take. */
const WAIT_MS = deadlineMs(1_500);

export function runClientCompliance(label: string, start: () => Promise<ClientBackend>): void {
  describe(`client compliance: ${label}`, () => {
    let backend: ClientBackend;
    const clients: Client[] = [];
    const client = (): Client => {
      const made = backend.client();
      clients.push(made);
      return made;
    };
    let prefix = 0;
    const fresh = (): string => `t${process.pid}-${++prefix}/`;
    before(async () => {
      backend = await start();
    });
    after(async () => {
      for (const c of clients) c.close();
      await backend?.stop();
    });

    kvTests(client, fresh);
    watchTests(client, fresh);
    leaseTests(() => backend, client, fresh);
    recipeTests(() => backend, client, fresh);
    runOnceTests(() => backend, client, fresh);
  });
}

function kvTests(client: () => Client, fresh: () => string): void {
  test('kv: put, get, range by prefix, delete and txn, with growing revisions', async () => {
    const c = client();
    const p = fresh();
    const first = await c.kv.put(`${p}a`, '1');
    const second = await c.kv.put(`${p}b`, '2', { prevKv: true });
    assert.ok(second.revision > first.revision);
    assert.equal(second.prevKv, undefined, 'a created key has no previous state');
    const again = await c.kv.put(`${p}a`, '3', { prevKv: true });
    assert.equal(again.prevKv?.value, '1');
    const got = await c.kv.get(`${p}a`);
    assert.equal(got.kv?.value, '3');
    assert.equal(got.kv?.version, 2);
    assert.equal(got.kv?.createRevision, first.revision);
    assert.equal(got.kv?.modRevision, again.revision);
    const range = await c.kv.range(p);
    assert.deepEqual(range.kvs.map((kv) => kv.key), [`${p}a`, `${p}b`]);
    assert.equal(range.count, 2);
    const limited = await c.kv.range(p, { limit: 1 });
    assert.equal(limited.kvs.length, 1);
    assert.equal(limited.more, true);
    const old = await c.kv.get(`${p}a`, { revision: first.revision });
    assert.equal(old.kv?.value, '1', 'a read at an old revision sees the old value');
    const serializable = await c.kv.get(`${p}a`, { consistency: 'serializable' });
    assert.ok(serializable.kv === undefined || serializable.kv.value !== '');
    const cas = await c.kv.cas(`${p}a`, '3', '4');
    assert.equal(cas.succeeded, true);
    const lost = await c.kv.cas(`${p}a`, '3', '5');
    assert.equal(lost.succeeded, false);
    assert.equal(lost.current?.value, '4');
    const txn = await c.kv.txn({
      compare: [{ key: `${p}b`, target: 'version', result: 'greater', version: 0 }],
      success: [{ kind: 'delete', key: `${p}b`, prevKv: true }, { kind: 'range', key: p,
        prefix: true }],
    });
    assert.equal(txn.succeeded, true);
    const [deleted, listed] = txn.responses;
    assert.equal(deleted?.kind === 'delete' && deleted.deleted, 1);
    assert.deepEqual(listed?.kind === 'range' && listed.kvs.map((kv) => kv.key), [`${p}a`]);
    const wiped = await c.kv.delete(p, { prefix: true });
    assert.equal(wiped.deleted, 1);
    assert.equal((await c.kv.range(p)).count, 0);
  });

  test('kv: a put attached to a lease that does not exist fails with CONCLAVE_LEASE_EXPIRED',
    async () => {
      const c = client();
      await assert.rejects(c.kv.put(`${fresh()}x`, 'v', { lease: 123_456_789 }),
        (error: unknown) => error instanceof CoordError
          && error.code === 'CONCLAVE_LEASE_EXPIRED' && error.outcome === 'failed');
    });
}

function watchTests(client: () => Client, fresh: () => string): void {
  test('watch: events in order from a revision, and a new watch resumes from nextRevision '
    + 'with nothing skipped or repeated', async () => {
    const c = client();
    const p = fresh();
    const start = await c.kv.put(`${p}0`, 'v0');
    for (let i = 1; i < 6; i++) await c.kv.put(`${p}${i}`, `v${i}`);
    const seen: string[] = [];
    const first = c.watch({ prefix: p }, { fromRevision: start.revision });
    let resumeAt = 0;
    for await (const event of first) {
      seen.push(event.kv.key);
      if (seen.length === 3) {
        resumeAt = first.nextRevision!;
        break;
      }
    }
    await c.kv.delete(`${p}0`);
    const second = c.watch({ prefix: p }, { fromRevision: resumeAt });
    const types: string[] = [];
    for await (const event of second) {
      seen.push(event.kv.key);
      types.push(event.type);
      if (seen.length === 7) break;
    }
    assert.deepEqual(seen, [0, 1, 2, 3, 4, 5, 0].map((i) => `${p}${i}`));
    assert.deepEqual(types, ['put', 'put', 'put', 'delete']);
  });
}

function leaseTests(backend: () => ClientBackend, client: () => Client,
  fresh: () => string): void {
  test('lease: without keep-alives the local deadline passes while the key still exists, '
    + 'then the servers end the lease and its key', async () => {
    const c = client();
    const key = `${fresh()}leased`;
    const lease = await c.grantLease({ ttlMs: backend().ttlMs, autoKeepAlive: false });
    await c.kv.put(key, 'v', { lease: lease.id });
    await aborted(lease, WAIT_MS);
    // The local deadline comes before any server can end the lease: the key is still there.
    assert.equal((await c.kv.get(key)).kv?.value, 'v', 'the key outlived the local deadline');
    await waitFor(async () => (await c.kv.get(key)).kv === undefined ? true : undefined,
      WAIT_MS, 'the lease\'s key deleted by the servers');
    await assert.rejects(c.leases.timeToLive(lease.id), (error: unknown) =>
      error instanceof CoordError && error.code === 'CONCLAVE_LEASE_EXPIRED');
  });

  test('lease: background keep-alives carry the lease (and its key) past several TTLs',
    async () => {
      const c = client();
      const key = `${fresh()}kept`;
      const { ttlMs } = backend();
      const lease = await c.grantLease({ ttlMs });
      await c.kv.put(key, 'v', { lease: lease.id });
      const firstDeadlineMs = lease.expiresAtMs;
      // Two TTLs of acknowledged keep-alives: the deadline moved on by at least that much.
      await waitFor(async () => lease.expiresAtMs > firstDeadlineMs + 2 * ttlMs ? true
        : lease.signal.aborted ? false : undefined, deadlineMs(3 * ttlMs), 'keep-alives');
      assert.equal(lease.signal.aborted, false, String(lease.signal.reason));
      assert.equal((await c.kv.get(key)).kv?.value, 'v');
      const ttl = await lease.timeToLive({ keys: true });
      assert.deepEqual(ttl.keys, [key]);
      assert.ok(ttl.ttlMs >= ttlMs, `granted ${ttl.ttlMs} ms for ${ttlMs} asked`);
      const once = await c.leases.keepAliveOnce(lease.id);
      assert.equal(once.leaseId, lease.id);
      const revoked = await lease.revoke();
      assert.equal(revoked.deleted, 1);
      assert.equal((await c.kv.get(key)).kv, undefined);
      await assert.rejects(c.leases.keepAliveOnce(lease.id), (error: unknown) =>
        error instanceof CoordError && error.code === 'CONCLAVE_LEASE_EXPIRED');
    });
}

function recipeTests(backend: () => ClientBackend, client: () => Client,
  fresh: () => string): void {
  test('election: a resign hands leadership to the next candidate, with a larger token and '
    + 'term', async () => {
    const name = `e${fresh().replace(/\W/g, '')}`;
    const [a, b] = [client(), client()];
    const { ttlMs } = backend();
    const first = await a.election(name).campaign('a', { ttlMs, value: 'va' });
    const next = b.election(name).campaign('b', { ttlMs, value: 'vb' });
    const candidates = recipeKeys('election', name).candidatePrefix;
    await waitFor(async () => (await a.kv.range(candidates)).count >= 2 || undefined,
      WAIT_MS, 'b\'s candidate key');
    assert.equal((await b.election(name).leader())?.id, 'a');
    await first.resign();
    assert.equal(first.signal.aborted, true, 'resigning aborts the signal first');
    const second = await next;
    assert.ok(second.fencingToken > first.fencingToken);
    assert.ok(second.term > first.term);
    assert.equal((await a.election(name).leader())?.id, 'b');
    await second.resign();
  });

  test('lock: holders exclude each other and their fencing tokens strictly grow', async () => {
    const name = `l${fresh().replace(/\W/g, '')}`;
    const holders = [client(), client(), client()];
    const { ttlMs } = backend();
    let inside = 0;
    const tokens: number[] = [];
    await Promise.all(holders.flatMap((c) => [1, 2].map(() => c.withLock(name, async (lock) => {
      inside += 1;
      assert.equal(inside, 1, 'two holders inside the lock at once');
      tokens.push(lock.fencingToken);
      await c.kv.put(`${name}/last`, String(lock.fencingToken), { signal: lock.signal });
      inside -= 1;
    }, { ttlMs }))));
    assert.equal(tokens.length, 6);
    for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i]! > tokens[i - 1]!, `${tokens}`);
  });

  test('fence: after a new holder\'s token, the old holder\'s write is refused', async () => {
    const name = `f${fresh().replace(/\W/g, '')}`;
    const c = client();
    const { ttlMs } = backend();
    const fence = new Fence();
    const old = await c.lock(name, { ttlMs });
    await fence.accept(old.fencingToken);
    await old.unlock();
    const newer = await client().lock(name, { ttlMs });
    await fence.guard(newer.fencingToken, () => 'written');
    await assert.rejects(fence.guard(old.fencingToken, () => 'stale write'),
      (error: unknown) => error instanceof CoordError
        && error.code === 'CONCLAVE_FENCING_TOKEN_STALE');
    await newer.unlock();
  });
}

function runOnceTests(backend: () => ClientBackend, client: () => Client,
  fresh: () => string): void {
  const electionName = (): string => `r${fresh().replace(/\W/g, '')}`;

  test('runOnce: a finished task is never run again by the next leader; its result and its '
    + 'ops were committed with it', async () => {
    const name = electionName();
    const { ttlMs } = backend();
    const [a, b] = [client(), client()];
    const first = await a.election(name).campaign('a', { ttlMs });
    let runs = 0;
    const effect = `${name}/effect`;
    const ran = await runOnce(a.kv, first, 'restart-db', () => {
      runs += 1;
      return { result: { restarted: 'db' }, ops: [{ kind: 'put', key: effect, value: 'done' }] };
    });
    assert.equal(ran.ran, true);
    assert.equal((await a.kv.get(effect)).kv?.value, 'done');
    await first.resign();
    const second = await b.election(name).campaign('b', { ttlMs });
    const again = await runOnce(b.kv, second, 'restart-db', () => {
      runs += 1;
    });
    assert.equal(runs, 1, 'the new leader did not repeat the finished task');
    assert.equal(again.ran, false);
    assert.deepEqual(again.result, { restarted: 'db' });
    assert.equal(again.record.fencingToken, first.fencingToken);
    await second.resign();
  });

  test('runOnce: an unfinished task (its leader failed mid-way) is retried by the next leader, '
    + 'told the previous attempt', async () => {
    const name = electionName();
    const { ttlMs } = backend();
    const [a, b] = [client(), client()];
    const first = await a.election(name).campaign('a', { ttlMs });
    await assert.rejects(runOnce(a.kv, first, 'restart-cache', () => {
      throw new Error('crashed mid-way');
    }), /crashed mid-way/);
    await first.resign();
    const second = await b.election(name).campaign('b', { ttlMs });
    const retried = await runOnce(b.kv, second, 'restart-cache', (task) => {
      assert.equal(task.attempt, 2);
      assert.equal(task.previous?.state, 'started');
      assert.equal(task.previous?.fencingToken, first.fencingToken);
      return { result: task.attempt };
    });
    assert.equal(retried.ran, true);
    assert.equal(retried.record.fencingToken, second.fencingToken);
    await second.resign();
  });

  test('runOnce: a deposed leader\'s completion is refused by the store, and the task stays '
    + 'for the next leader', async () => {
    const name = electionName();
    const { ttlMs } = backend();
    const [a, b] = [client(), client()];
    const first = await a.election(name).campaign('a', { ttlMs });
    const effect = `${name}/effect`;
    // The leader's key vanishes while the action runs (as when its lease expired in a pause).
    await assert.rejects(runOnce(a.kv, first, 'charge', async () => {
      await b.kv.delete(first.key);
      return { ops: [{ kind: 'put', key: effect, value: 'stale' }] };
    }), (error: unknown) => error instanceof CoordError
      && error.code === 'CONCLAVE_LEASE_EXPIRED');
    assert.equal((await b.kv.get(effect)).kv, undefined, 'the stale completion wrote nothing');
    await waitFor(async () => first.signal.aborted || undefined, WAIT_MS, 'a\'s loss noticed');
    const second = await b.election(name).campaign('b', { ttlMs });
    const done = await runOnce(b.kv, second, 'charge', () =>
      ({ ops: [{ kind: 'put', key: effect, value: 'fresh' }] }));
    assert.equal(done.ran, true);
    assert.equal((await b.kv.get(effect)).kv?.value, 'fresh');
    await second.resign();
  });
}

/** Waits for the lease's signal, on a deadline. */
function aborted(lease: Lease, withinMs: number): Promise<void> {
  return waitFor(async () => lease.signal.aborted || undefined, withinMs,
    `lease ${lease.id}'s signal`).then(() => undefined);
}
