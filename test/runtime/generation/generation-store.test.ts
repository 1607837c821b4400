/**
 * Goal: a generation saved through GenerationStore survives any crash once its save completed,
 * a save cut by a crash loses nothing older, and loading reports corruption by file name.
 * Method: the store over SimStorage (virtual time from a Scheduler, torn writes from a seeded
 * Prng), crashing at chosen points; then a fast-check property over random sequences of saves,
 * partial runs of the event queue and crashes, checking the loaded generation against the last
 * completed save and the highest requested one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { encodeGenerationRecord } from '../../../src/core/generation/index.js';
import type { Storage } from '../../../src/ports/storage.js';
import {
  GENERATION_FILE_NAME,
  GenerationStore,
  generationTmpFileName,
  loadGeneration,
} from '../../../src/runtime/generation/index.js';
import { Prng } from '../../../src/sim/prng.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SIM_STORAGE_DEFAULTS, SimStorage } from '../../../src/sim/sim-storage.js';

const TMP = generationTmpFileName(GENERATION_FILE_NAME);

function setup(seed = 1, unsyncedSurvivalRate = SIM_STORAGE_DEFAULTS.unsyncedSurvivalRate): {
  scheduler: Scheduler;
  storage: SimStorage;
} {
  const scheduler = new Scheduler();
  const storage = new SimStorage(scheduler, new Prng(seed), {
    ...SIM_STORAGE_DEFAULTS,
    unsyncedSurvivalRate,
  });
  return { scheduler, storage };
}

function loaded(storage: Storage): number {
  const result = loadGeneration(storage);
  assert.equal(result.kind, 'loaded', JSON.stringify(result));
  return result.kind === 'loaded' ? result.generation : -1;
}

/** Saves `generation` and runs the event queue until the save completes. */
function saveCompletely(scheduler: Scheduler, store: GenerationStore, generation: number): void {
  let done = false;
  store.save(generation, (error) => {
    assert.equal(error, undefined);
    done = true;
  });
  while (!done && scheduler.step());
  assert.ok(done, `save of ${generation} did not complete`);
}

describe('generation: store', () => {
  test('a fresh storage loads generation 0 from no file', () => {
    const { storage } = setup();
    assert.deepEqual(loadGeneration(storage), {
      kind: 'loaded', generation: 0, fileName: undefined, ignoredTmpReason: undefined,
    });
  });

  test('a completed save is loaded back from the main file, with no temporary file left', () => {
    const { scheduler, storage } = setup();
    const store = new GenerationStore(storage, 0);
    saveCompletely(scheduler, store, 5);
    assert.equal(store.durable, 5);
    assert.deepEqual(storage.list(), [GENERATION_FILE_NAME]);
    assert.deepEqual(loadGeneration(storage), {
      kind: 'loaded', generation: 5, fileName: GENERATION_FILE_NAME, ignoredTmpReason: undefined,
    });
  });

  test('a crash before the temporary file is synced keeps the old generation', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { scheduler, storage } = setup(seed, 1);
      const store = new GenerationStore(storage, 0);
      saveCompletely(scheduler, store, 5);
      let called = false;
      store.save(6, () => { called = true; });
      storage.crash();
      scheduler.runUntil(scheduler.nowMs + 10);
      assert.equal(called, false);
      assert.equal(loaded(storage), 5, `seed ${seed}`);
    }
  });

  test('a crash after the sync but before the rename is durable keeps the old generation', () => {
    const { scheduler, storage } = setup();
    const store = new GenerationStore(storage, 0);
    saveCompletely(scheduler, store, 5);
    store.save(6, () => assert.fail('a crashed save must not complete'));
    assert.ok(scheduler.step()); // tmp synced; rename done in memory; syncDir in flight
    assert.equal(loaded(storage), 6); // the live process sees the rename
    storage.crash();
    assert.equal(loaded(storage), 5);
  });

  test('once the save has completed, the new generation survives a crash', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { scheduler, storage } = setup(seed, 1);
      const store = new GenerationStore(storage, 0);
      saveCompletely(scheduler, store, 5);
      saveCompletely(scheduler, store, 6);
      storage.crash();
      assert.equal(loaded(storage), 6, `seed ${seed}`);
    }
  });

  test('a synced temporary file whose rename was lost wins when it is higher', () => {
    const { scheduler, storage } = setup();
    const store = new GenerationStore(storage, 0);
    saveCompletely(scheduler, store, 5);
    store.save(7, () => assert.fail('a crashed save must not complete'));
    storage.syncDir(() => {}); // another component's directory sync captures the tmp file
    assert.ok(scheduler.step()); // our tmp sync completes, rename not yet durable
    assert.ok(scheduler.step()); // the other directory sync completes
    storage.crash();
    assert.deepEqual(loadGeneration(storage), {
      kind: 'loaded', generation: 7, fileName: TMP, ignoredTmpReason: undefined,
    });
  });

  test('a torn temporary file is ignored (with the reason), and the next save replaces it', () => {
    const { scheduler, storage } = setup();
    const store = new GenerationStore(storage, 0);
    saveCompletely(scheduler, store, 5);
    storage.append(TMP, encodeGenerationRecord(9).subarray(0, 11));
    const result = loadGeneration(storage);
    assert.equal(result.kind, 'loaded');
    assert.equal(result.kind === 'loaded' && result.generation, 5);
    assert.match(result.kind === 'loaded' ? result.ignoredTmpReason ?? '' : '', /found 11/);
    saveCompletely(scheduler, new GenerationStore(storage, 5), 6);
    assert.equal(loaded(storage), 6);
  });

  test('a corrupt main file is reported by name and stops loading', () => {
    const { storage } = setup();
    const bytes = encodeGenerationRecord(12);
    bytes[9] = (bytes[9] as number) ^ 0x40;
    storage.append(GENERATION_FILE_NAME, bytes);
    storage.append(TMP, encodeGenerationRecord(3));
    const result = loadGeneration(storage);
    assert.equal(result.kind, 'corrupt');
    if (result.kind !== 'corrupt') return;
    assert.equal(result.fileName, GENERATION_FILE_NAME);
    assert.match(result.reason, /checksum mismatch/);
    assert.match(result.message, /generation file 'generation' is corrupt/);
  });

  test('saves requested during a write are coalesced into one more write', () => {
    const { scheduler, storage } = setup();
    const store = new GenerationStore(storage, 0);
    const completed: number[] = [];
    for (const g of [1, 2, 3, 3]) {
      store.save(g, (e) => {
        assert.equal(e, undefined);
        completed.push(g);
      });
    }
    assert.equal(store.saving, true);
    assert.equal(store.requested, 3);
    while (scheduler.step());
    assert.deepEqual(completed, [1, 2, 3, 3]);
    assert.equal(storage.syncs, 2); // one tmp sync for 1, one for 3
    assert.equal(store.durable, 3);
    assert.equal(store.saving, false);
  });

  test('a callback that saves again is served by a following write', () => {
    const { scheduler, storage } = setup();
    const store = new GenerationStore(storage, 0);
    const completed: number[] = [];
    store.save(1, () => {
      completed.push(1);
      store.save(2, () => completed.push(2));
    });
    while (scheduler.step());
    assert.deepEqual(completed, [1, 2]);
    assert.equal(loaded(storage), 2);
  });

  test('a failed sync fails the waiting saves and every later one', () => {
    const { scheduler, storage } = setup();
    const failing: Storage = Object.assign(Object.create(storage) as SimStorage, {
      sync: (_name: string, done: (error?: Error) => void) => {
        scheduler.schedule(1, () => done(new Error('EIO')));
      },
    });
    const store = new GenerationStore(failing, 0);
    const errors: (Error | undefined)[] = [];
    store.save(1, (e) => errors.push(e));
    store.save(2, (e) => errors.push(e));
    while (scheduler.step());
    store.save(3, (e) => errors.push(e));
    assert.deepEqual(errors.map((e) => e?.message), ['EIO', 'EIO', 'EIO']);
    assert.equal(store.durable, 0);
  });

  test('saving a lower generation than already requested is a programmer error', () => {
    const { storage } = setup();
    const store = new GenerationStore(storage, 4);
    assert.throws(() => store.save(3, () => {}), /must not decrease: 3 < 4/);
  });

  test('random saves and crashes never regress below the last completed save', () => {
    type Op =
      | { readonly op: 'save'; readonly step: number }
      | { readonly op: 'run'; readonly events: number }
      | { readonly op: 'crash' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('save' as const), step: fc.nat({ max: 3 }) }),
      fc.record({ op: fc.constant('run' as const), events: fc.nat({ max: 4 }) }),
      fc.record({ op: fc.constant('crash' as const) }),
    );
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 0xffff_ffff }),
      fc.constantFrom(0, 0.5, 1),
      fc.array(op, { maxLength: 40 }),
      (seed, unsyncedSurvivalRate, ops) => {
        const { scheduler, storage } = setup(seed, unsyncedSurvivalRate);
        let store = new GenerationStore(storage, 0);
        let lastCompleted = 0;
        let highestRequested = 0;
        for (const o of ops) {
          if (o.op === 'save') {
            const g = store.requested + o.step;
            highestRequested = Math.max(highestRequested, g);
            store.save(g, (error) => {
              assert.equal(error, undefined);
              lastCompleted = Math.max(lastCompleted, g);
            });
          } else if (o.op === 'run') {
            for (let i = 0; i < o.events && scheduler.step(); i++);
          } else {
            storage.crash();
            const g = loaded(storage);
            assert.ok(g >= lastCompleted, `loaded ${g} < last completed ${lastCompleted}`);
            assert.ok(g <= highestRequested, `loaded ${g} > highest requested ${highestRequested}`);
            store = new GenerationStore(storage, g);
          }
        }
        while (scheduler.step());
        assert.equal(loaded(storage), store.requested);
      },
    ), { numRuns: 300 });
  });
});
