/**
 * client: runOnce against a stub store, for the orderings a real cluster gives only now and
 * then: the leadership's loss noticed (its signal aborted) while a read of runOnce is in
 * flight. Whatever the order, a lost leadership rejects with CONCLAVE_LEASE_EXPIRED and an
 * outcome, never with the AbortError of an internal read (seen once in the etcd compliance
 * suite under two CPU burners: the watch on the leader's key beat the read back after the
 * refused completion).
 * Method: a stub KvClient whose calls are scripted; no clock, no network.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runOnce } from '../../src/client/run-once.js';
import type { KvClient } from '../../src/client/kv.js';
import type { Holding } from '../../src/client/recipe-driver.js';
import { CoordError } from '../../src/errors.js';

type Stub = Pick<KvClient, 'get' | 'txn'>;

/** A holding as runOnce reads it: key, fencing token, signal. */
function holdingWith(controller: AbortController): Holding {
  return { key: 'conclave/election/e/candidates/c1', fencingToken: 7,
    signal: controller.signal } as unknown as Holding;
}

function abortError(): Error {
  return Object.assign(new Error('aborted'), { name: 'AbortError' });
}

function isLeaseExpired(error: unknown): boolean {
  return error instanceof CoordError && error.code === 'CONCLAVE_LEASE_EXPIRED'
    && error.outcome === 'failed';
}

describe('client: runOnce, a loss noticed during a read', () => {
  test('during the read back after a refused completion: CONCLAVE_LEASE_EXPIRED', async () => {
    const controller = new AbortController();
    let reads = 0;
    let writes = 0;
    const kv = {
      get: async () => {
        reads++;
        if (reads === 1) return { kv: undefined, revision: 5 };
        controller.abort(new Error('candidate key deleted'));
        throw abortError();
      },
      txn: async () => {
        writes++;
        return writes === 1 ? { succeeded: true, revision: 6, responses: [] }
          : { succeeded: false, revision: 8, responses: [] };
      },
    } as unknown as Stub;
    await assert.rejects(runOnce(kv, holdingWith(controller), 'charge', () => ({})),
      isLeaseExpired);
    assert.equal(writes, 2, 'started and the refused done');
  });

  test('during the first read: CONCLAVE_LEASE_EXPIRED, and nothing written', async () => {
    const controller = new AbortController();
    let writes = 0;
    const kv = {
      get: async () => {
        controller.abort(new Error('lease expired'));
        throw abortError();
      },
      txn: async () => {
        writes++;
        return { succeeded: true, revision: 6, responses: [] };
      },
    } as unknown as Stub;
    await assert.rejects(runOnce(kv, holdingWith(controller), 'charge', () => ({})),
      isLeaseExpired);
    assert.equal(writes, 0);
  });

  test('a read that fails while the leadership holds keeps its own error', async () => {
    const controller = new AbortController();
    const failure = new CoordError('CONCLAVE_UNAVAILABLE', 'no member answered',
      { outcome: 'failed' });
    const kv = {
      get: async () => { throw failure; },
      txn: async () => ({ succeeded: true, revision: 6, responses: [] }),
    } as unknown as Stub;
    await assert.rejects(runOnce(kv, holdingWith(controller), 'charge', () => ({})),
      (error: unknown) => error === failure);
  });
});
