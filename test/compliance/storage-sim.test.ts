/**
 * storage compliance: SimStorage. Goal: the simulator's disk keeps the Storage contract while the
 * process lives (the shared suite), and after `crash()` keeps exactly what the contract promises
 * and no more: synced bytes survive, unsynced ones are lost or survive as a prefix, and creates,
 * removes, renames and truncates not covered by the right sync are undone.
 * Method: the shared suite with the scheduler stepped until callbacks fire; crash scenarios over
 * many seeds so that each possible outcome (lost, torn, kept) is seen.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Prng } from '../../src/sim/prng.js';
import { Scheduler } from '../../src/sim/scheduler.js';
import { SimStorage } from '../../src/sim/sim-storage.js';
import { runStorageCompliance } from './storage.suite.js';

const STEPS_MAX = 100_000;

function simWorld(seed: number): { scheduler: Scheduler; storage: SimStorage } {
  const scheduler = new Scheduler();
  return { scheduler, storage: new SimStorage(scheduler, new Prng(seed)) };
}

/** Steps the scheduler until `done()` holds; fails if events run out first. */
function runUntil(scheduler: Scheduler, done: () => boolean): void {
  for (let steps = 0; !done(); steps++) {
    assert.ok(steps < STEPS_MAX && scheduler.step(), 'scheduler ran out of events before done');
  }
}

function synced(scheduler: Scheduler, start: (done: () => void) => void): void {
  let fired = false;
  start(() => (fired = true));
  runUntil(scheduler, () => fired);
}

const bytes = (...values: number[]): Uint8Array => Uint8Array.from(values);
const SEEDS = Array.from({ length: 64 }, (_, i) => i + 1);

runStorageCompliance('SimStorage', () => {
  const { scheduler, storage } = simWorld(7);
  return {
    storage,
    runUntil: async (done) => runUntil(scheduler, done),
    dispose: () => undefined,
  };
});

describe('storage: sim: crash', () => {
  test('bytes covered by a completed sync survive a crash', () => {
    for (const seed of SEEDS) {
      const { scheduler, storage } = simWorld(seed);
      storage.append('f', bytes(1, 2, 3));
      synced(scheduler, (done) => storage.sync('f', done));
      synced(scheduler, (done) => storage.syncDir(done));
      storage.crash();
      assert.deepEqual(storage.read('f'), bytes(1, 2, 3), `seed ${seed}`);
    }
  });

  test('unsynced bytes are lost or survive as a prefix, and both happen', () => {
    const outcomes = new Set<string>();
    for (const seed of SEEDS) {
      const { scheduler, storage } = simWorld(seed);
      storage.append('f', bytes(1, 2));
      synced(scheduler, (done) => storage.sync('f', done));
      synced(scheduler, (done) => storage.syncDir(done));
      storage.append('f', bytes(3, 4, 5, 6));
      storage.crash();
      const after = [...(storage.read('f') ?? [])];
      const full = [1, 2, 3, 4, 5, 6];
      assert.ok(after.length >= 2, `seed ${seed}: synced bytes lost: ${after}`);
      assert.deepEqual(after, full.slice(0, after.length), `seed ${seed}: not a prefix`);
      outcomes.add(after.length === 2 ? 'lost' : after.length === 6 ? 'kept' : 'torn');
    }
    assert.ok(outcomes.has('lost') && outcomes.has('torn'), [...outcomes].join());
  });

  test('a sync in flight at the crash never calls back, and covers nothing', () => {
    for (const seed of SEEDS) {
      const { scheduler, storage } = simWorld(seed);
      storage.append('f', bytes(9));
      synced(scheduler, (done) => storage.syncDir(done));
      let called = false;
      storage.sync('f', () => (called = true));
      storage.crash();
      while (scheduler.step()) { /* drain */ }
      assert.equal(called, false);
      assert.ok((storage.read('f')?.length ?? 0) <= 1);
    }
  });

  test('a file created without a directory sync vanishes in a crash, even if synced', () => {
    const { scheduler, storage } = simWorld(3);
    storage.append('new', bytes(1));
    synced(scheduler, (done) => storage.sync('new', done));
    storage.crash();
    assert.deepEqual(storage.list(), []);
  });

  test('remove and rename are undone by a crash before syncDir, kept after it', () => {
    const { scheduler, storage } = simWorld(4);
    storage.append('a', bytes(1));
    storage.append('b', bytes(2));
    synced(scheduler, (done) => storage.sync('a', done));
    synced(scheduler, (done) => storage.sync('b', done));
    synced(scheduler, (done) => storage.syncDir(done));
    storage.remove('a');
    storage.rename('b', 'c');
    storage.crash();
    assert.deepEqual(storage.list(), ['a', 'b']);
    storage.remove('a');
    storage.rename('b', 'c');
    synced(scheduler, (done) => storage.syncDir(done));
    storage.crash();
    assert.deepEqual(storage.list(), ['c']);
    assert.deepEqual(storage.read('c'), bytes(2));
  });

  test('a truncate survives a crash only after a sync of the file', () => {
    const { scheduler, storage } = simWorld(5);
    storage.append('t', bytes(1, 2, 3, 4));
    synced(scheduler, (done) => storage.sync('t', done));
    synced(scheduler, (done) => storage.syncDir(done));
    storage.truncate('t', 1);
    storage.crash();
    assert.deepEqual(storage.read('t'), bytes(1, 2, 3, 4));
    storage.truncate('t', 1);
    synced(scheduler, (done) => storage.sync('t', done));
    storage.crash();
    assert.deepEqual(storage.read('t'), bytes(1));
  });
});
