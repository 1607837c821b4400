/**
 * Goal: the store's guarantees hold for any command sequence: MVCC bookkeeping and history
 * reads match a naive model, retried commands apply at most once, a snapshot restores a store
 * that behaves identically, a snapshot encoded in steps while commands keep applying holds the
 * state as of its capture, and replicas applying the same entries agree byte for byte.
 * Method: fast-check generates stamped command sequences over a small, colliding key space
 * (put, prefix delete, txn with compares and ranges, compact); each property compares the
 * store against the model, against a second store, or against its own restored copy.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  decodeKvSnapshot, encodeKvCommand, encodeKvSnapshot, KvSnapshotEncoder, KvStore,
  KV_STORE_DEFAULTS,
} from '../../../src/core/kv/index.js';
import type {
  KvApplyResult, KvClientCommand, KvSnapshot, KvStoreConfig,
} from '../../../src/core/kv/index.js';
import { logIndex, term } from '../../../src/core/ids.js';
import { stampSteps, step } from './arbitraries.js';
import { START_MS } from './harness.js';
import { KvModel, sortedKvs } from './model.js';

const RUNS = 150;

function applyAll(store: KvStore, commands: readonly KvClientCommand[]): KvApplyResult[] {
  return commands.map((command) => store.apply(store.appliedIndex + 1, command));
}

/** What must match between stores that saw the same commands (the log index may differ). */
function stateOf(store: KvStore): Omit<KvSnapshot, 'appliedIndex'> {
  const { appliedIndex: _ignored, ...rest } = store.toSnapshot();
  return rest;
}

/** Every read the store offers, over every selector the generators use and all revisions. */
function reads(store: KvStore): unknown[] {
  const out: unknown[] = [];
  for (let revision = 0; revision <= store.revision; revision++) {
    out.push(store.range({ key: '', prefix: true, revision }));
    out.push(store.range({ key: 'a/', prefix: true, revision, limit: 1 }));
  }
  for (let from = 1; from <= store.revision + 1; from++) {
    out.push(store.eventsSince(from, { key: '', prefix: true }, 2));
    out.push(store.eventsSince(from, { key: 'b', prefix: true }));
  }
  return out;
}

describe('kv: properties', () => {
  test('states and events at every retained revision match the naive model', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
      const store = new KvStore();
      const model = new KvModel(KV_STORE_DEFAULTS);
      for (const command of stampSteps(steps, START_MS)) {
        const result = store.apply(store.appliedIndex + 1, command);
        const expected = model.apply(command);
        assert.equal(result.kind, expected.kind);
        if (result.kind === 'error') assert.equal(result.error.code, expected.code);
        else assert.equal(result.revision, expected.revision);
        if (result.kind === 'txn') assert.equal(result.succeeded, expected.succeeded);
      }
      assert.equal(store.revision, model.revision);
      assert.equal(store.compactRevision, model.compactRevision);
      for (let r = Math.max(1, model.compactRevision); r <= model.revision; r++) {
        const got = store.range({ key: '', prefix: true, revision: r });
        assert.deepEqual(got.kind === 'range' && got.kvs,
          sortedKvs(model.states[r] as Map<string, never>), `revision ${r}`);
      }
      const events = store.eventsSince(model.compactRevision + 1, { key: '', prefix: true });
      assert.deepEqual(events.kind === 'events' && events.events,
        model.events.filter((e) => e.kv.modRevision > model.compactRevision));
    }), { numRuns: RUNS });
  });

  test('random duplicates of earlier commands change neither results nor state', () => {
    const duplicate = fc.record({ at: fc.nat(), of: fc.nat() });
    fc.assert(fc.property(fc.array(step, { maxLength: 30 }),
      fc.array(duplicate, { maxLength: 15 }), (steps, duplicates) => {
        const commands = stampSteps(steps, START_MS);
        // Insert copies of earlier commands at random later positions.
        const withDuplicates: { command: KvClientCommand; original: boolean }[] =
          commands.map((command) => ({ command, original: true }));
        for (const { at, of } of duplicates) {
          if (commands.length === 0) break;
          const command = commands[of % commands.length] as KvClientCommand;
          const sourceAt = withDuplicates.findIndex((c) => c.original && c.command === command);
          const position = sourceAt + 1 + (at % (withDuplicates.length - sourceAt));
          withDuplicates.splice(position, 0, { command, original: false });
        }
        const clean = new KvStore();
        const cleanResults = applyAll(clean, commands);
        const noisy = new KvStore();
        const noisyResults: KvApplyResult[] = [];
        for (const { command, original } of withDuplicates) {
          const clientId = command.clientId as string;
          const sequence = command.sequence as number;
          const seenBefore = noisy.clientRecord(clientId)?.sequence ?? 0;
          const result = noisy.apply(noisy.appliedIndex + 1, command);
          if (original && sequence > seenBefore) noisyResults.push(result);
          else if (sequence === seenBefore) {
            assert.deepEqual(result, noisy.clientRecord(clientId)?.result);
          } else assert.equal(result.kind === 'error' && result.error.code, 'duplicate-stale');
        }
        assert.deepEqual(noisyResults, cleanResults);
        assert.deepEqual(stateOf(noisy), stateOf(clean));
      }), { numRuns: RUNS });
  });

  test('a restored snapshot equals the store and behaves identically afterwards', () => {
    const config: KvStoreConfig = { ...KV_STORE_DEFAULTS, historyEventsMax: 8, clientsMax: 2,
      clientIdleMsMax: 3000 };
    fc.assert(fc.property(fc.array(step, { maxLength: 30 }), fc.array(step, { maxLength: 15 }),
      fc.array(fc.nat(), { maxLength: 5 }), (before, after, retries) => {
        const commands = stampSteps([...before, ...after], START_MS);
        const head = commands.slice(0, before.length);
        const tail = commands.slice(before.length);
        // Retries of earlier commands, so restored client records are exercised too.
        for (const r of retries) if (head.length > 0) tail.push(head[r % head.length] as KvClientCommand);
        const original = new KvStore(config);
        applyAll(original, head);
        const snapshot = original.toSnapshot();
        const decoded = decodeKvSnapshot(encodeKvSnapshot(snapshot));
        assert.ok(!('kind' in decoded), JSON.stringify(decoded));
        const restored = KvStore.fromSnapshot(decoded, config);
        assert.deepEqual(restored.toSnapshot(), snapshot);
        assert.deepEqual(reads(restored), reads(original));
        assert.deepEqual(applyAll(restored, tail), applyAll(original, tail));
        assert.deepEqual(restored.toSnapshot(), original.toSnapshot());
        assert.deepEqual(reads(restored), reads(original));
      }), { numRuns: RUNS });
  });

  test('a capture encoded in steps while commands apply holds the state as of the capture', () => {
    const config: KvStoreConfig = { ...KV_STORE_DEFAULTS, historyEventsMax: 8 };
    fc.assert(fc.property(fc.array(step, { maxLength: 30 }), fc.array(step, { maxLength: 30 }),
      fc.integer({ min: 1, max: 64 }), fc.nat({ max: 3 }), (before, after, sectionBytes, per) => {
        const commands = stampSteps([...before, ...after], START_MS);
        const store = new KvStore(config);
        applyAll(store, commands.slice(0, before.length));
        const expected = store.toSnapshot();
        const capture = store.captureSnapshot();
        const encoder = new KvSnapshotEncoder(capture, sectionBytes);
        const tail = commands.slice(before.length);
        let bytes: Uint8Array | undefined;
        // Between steps, `per` commands apply (copy-on-write must keep the capture's view).
        while (bytes === undefined) {
          bytes = encoder.step();
          applyAll(store, tail.splice(0, per));
        }
        capture.release();
        applyAll(store, tail);
        assert.deepEqual(decodeKvSnapshot(bytes), expected);
      }), { numRuns: RUNS });
  });

  test('replicas applying the same entries agree byte for byte', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
      const entries = stampSteps(steps, START_MS).map((command, i) => ({
        index: logIndex(i + 1), term: term(1), kind: 'normal' as const,
        data: encodeKvCommand(command),
      }));
      const replicas = [new KvStore(), new KvStore()];
      const results = replicas.map((store) => entries.map((e) => store.applyEntry(e)));
      assert.deepEqual(results[0], results[1]);
      const [a, b] = replicas.map((store) => encodeKvSnapshot(store.toSnapshot()));
      assert.deepEqual(a, b);
    }), { numRuns: RUNS });
  });
});
