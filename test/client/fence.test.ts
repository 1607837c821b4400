/**
 * Goal: the client-side Fence refuses stale tokens with CONCLAVE_FENCING_TOKEN_STALE, persists a
 * new highest before accepting, accepts nothing when persisting fails, and keeps the stored
 * highest growing under concurrent accepts; an announced token refuses the older holder's late
 * write before the new holder wrote anything. Method: in-memory persist callbacks with
 * controllable promises.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Fence, parseFencingToken } from '../../src/client/fence.js';

describe('client: fence', () => {
  test('a lower token is refused with CONCLAVE_FENCING_TOKEN_STALE naming both tokens', async () => {
    const fence = new Fence();
    await fence.accept(10);
    await fence.accept(10);
    await assert.rejects(fence.accept(9), (error: { code?: string; message?: string }) =>
      error.code === 'CONCLAVE_FENCING_TOKEN_STALE' && /9 is stale: token 10/.test(error.message ?? ''));
  });

  test('announce: once a new holder announced, the old holder\'s late write is refused', async () => {
    const stored: number[] = [];
    const fence = new Fence({ persist: (token) => { stored.push(token); } });
    const writes: string[] = [];
    await fence.guard(4, () => writes.push('old'));
    await fence.announce(7);                    // the new holder, before its first write
    assert.equal(fence.highest, 7);
    assert.deepEqual(stored, [4, 7], 'the announced token is persisted like an accepted one');
    await assert.rejects(fence.guard(4, () => writes.push('old, late')),
      (error: { code?: string }) => error.code === 'CONCLAVE_FENCING_TOKEN_STALE');
    await fence.announce(7);                    // a retried announce
    await fence.guard(7, () => writes.push('new'));
    await assert.rejects(fence.announce(5), (error: { code?: string }) =>
      error.code === 'CONCLAVE_FENCING_TOKEN_STALE');
    assert.deepEqual(writes, ['old', 'new']);
  });

  test('a guarded write runs only under an accepted token', async () => {
    const fence = new Fence({ highest: 5 });
    const writes: number[] = [];
    await fence.guard(6, () => writes.push(6));
    await assert.rejects(fence.guard(4, () => writes.push(4)));
    assert.deepEqual(writes, [6]);
  });

  test('a new highest is persisted before it is accepted; a failed persist accepts nothing', async () => {
    const stored: number[] = [];
    let fail = false;
    const fence = new Fence({ persist: (token) => {
      if (fail) throw new Error('disk full');
      stored.push(token);
    } });
    await fence.accept(3);
    await fence.accept(3);
    fail = true;
    await assert.rejects(fence.accept(8), /disk full/);
    assert.equal(fence.highest, 3);
    assert.deepEqual(stored, [3]);
  });

  test('concurrent accepts persist in order, so the stored highest only grows', async () => {
    const stored: number[] = [];
    const fence = new Fence({ persist: async (token) => {
      await new Promise((resolve) => setImmediate(resolve));
      stored.push(token);
    } });
    const results = await Promise.allSettled([fence.accept(5), fence.accept(9), fence.accept(7)]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected']);
    assert.deepEqual(stored, [5, 9]);
  });

  test('parseFencingToken reads digits and refuses anything else', () => {
    assert.equal(parseFencingToken(' 42 '), 42);
    assert.throws(() => parseFencingToken('4x'), { code: 'CONCLAVE_REQUEST_INVALID' });
    assert.throws(() => parseFencingToken(undefined), { code: 'CONCLAVE_REQUEST_INVALID' });
  });
});
