/**
 * Goal: the key-value store follows etcd v3's MVCC semantics (revisions, create/mod revision,
 * version), transactions, ranges at current and past revisions, bounded history, watches and
 * the idempotent receiver. Method: example-based unit tests through the public API, each
 * checking exact results and the store's revision bookkeeping afterwards.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  encodeKvCommand, KvStore, KV_INITIAL_REVISION,
} from '../../../src/core/kv/index.js';
import type {
  KvCommand, KvEvent, KvEventsResult, KvRangeResult,
} from '../../../src/core/kv/index.js';
import { logIndex, term } from '../../../src/core/ids.js';
import { cmp, Driver, expectError, expectKind, START_MS } from './harness.js';

function rangeOk(store: KvStore, request: Parameters<KvStore['range']>[0]): KvRangeResult {
  const result = store.range(request);
  assert.equal(result.kind, 'range', JSON.stringify(result));
  return result as KvRangeResult;
}

function eventsOk(store: KvStore, ...args: Parameters<KvStore['eventsSince']>): KvEventsResult {
  const result = store.eventsSince(...args);
  assert.equal(result.kind, 'events', JSON.stringify(result));
  return result as KvEventsResult;
}

const summary = (events: readonly KvEvent[]): string[] =>
  events.map((e) => `${e.kv.modRevision}:${e.type}:${e.kv.key}`);

describe('kv: revisions', () => {
  test('an empty store is at revision 1 with no keys', () => {
    const store = new KvStore();
    assert.equal(store.revision, KV_INITIAL_REVISION);
    assert.equal(KV_INITIAL_REVISION, 1);
    assert.deepEqual(rangeOk(store, { key: '', prefix: true }),
      { kind: 'range', kvs: [], more: false, count: 0, revision: 1 });
  });

  test('each put makes one revision; create revision stays, mod revision and version move', () => {
    const d = new Driver();
    assert.deepEqual(d.put('a', '1'), { kind: 'put', revision: 2 });
    assert.deepEqual(d.put('b', '1'), { kind: 'put', revision: 3 });
    assert.deepEqual(d.put('a', '2'), { kind: 'put', revision: 4 });
    assert.deepEqual(d.store.get('a'),
      { key: 'a', value: '2', createRevision: 2, modRevision: 4, version: 2 });
    assert.deepEqual(d.store.get('b'),
      { key: 'b', value: '1', createRevision: 3, modRevision: 3, version: 1 });
    assert.equal(d.store.revision, 4);
  });

  test('a put of the same value still makes a revision and a version (as etcd)', () => {
    const d = new Driver();
    d.put('a', 'x');
    assert.deepEqual(d.put('a', 'x'), { kind: 'put', revision: 3 });
    assert.equal(d.store.get('a')?.version, 2);
  });

  test('a deleted key comes back with a new create revision and version 1', () => {
    const d = new Driver();
    d.put('a', '1');
    d.put('a', '2');
    assert.deepEqual(d.del('a'), { kind: 'delete', deleted: 1, revision: 4 });
    assert.equal(d.store.get('a'), undefined);
    d.put('a', '3');
    assert.deepEqual(d.store.get('a'),
      { key: 'a', value: '3', createRevision: 5, modRevision: 5, version: 1 });
  });

  test('deleting an absent key changes nothing, not even the revision', () => {
    const d = new Driver();
    d.put('a', '1');
    assert.deepEqual(d.del('b'), { kind: 'delete', deleted: 0, revision: 2 });
    assert.equal(d.store.revision, 2);
    assert.equal(d.store.historyEventCount, 1);
  });

  test('a prefix delete removes every key under it at one revision, prevKvs in key order', () => {
    const d = new Driver();
    d.put('a/2', 'x');
    d.put('a/1', 'y');
    d.put('ab', 'z');
    const result = expectKind(d.run({ kind: 'delete', key: 'a/', prefix: true, prevKv: true }),
      'delete');
    assert.equal(result.revision, 5);
    assert.equal(result.deleted, 2);
    assert.deepEqual(result.prevKvs?.map((kv) => kv.key), ['a/1', 'a/2']);
    assert.deepEqual(rangeOk(d.store, { key: '', prefix: true }).kvs.map((kv) => kv.key), ['ab']);
  });

  test('a put returns the previous key-value only when asked and when there was one', () => {
    const d = new Driver();
    assert.deepEqual(d.run({ kind: 'put', key: 'a', value: '1', prevKv: true }),
      { kind: 'put', revision: 2 });
    assert.deepEqual(d.run({ kind: 'put', key: 'a', value: '2', prevKv: true }), {
      kind: 'put', revision: 3,
      prevKv: { key: 'a', value: '1', createRevision: 2, modRevision: 2, version: 1 },
    });
  });
});

describe('kv: txn', () => {
  // State for the compare table: k = { value 'm', createRevision 2, modRevision 3, version 2 }.
  const setup = (): Driver => {
    const d = new Driver();
    d.put('k', 'a');
    d.put('k', 'm');
    return d;
  };
  const cases: [string, ReturnType<typeof cmp>, boolean][] = [
    ['value equal', cmp('k', 'value', 'equal', 'm'), true],
    ['value not-equal', cmp('k', 'value', 'not-equal', 'm'), false],
    ['value greater', cmp('k', 'value', 'greater', 'l'), true],
    ['value less', cmp('k', 'value', 'less', 'l'), false],
    ['version equal', cmp('k', 'version', 'equal', 2), true],
    ['version greater', cmp('k', 'version', 'greater', 2), false],
    ['version less', cmp('k', 'version', 'less', 3), true],
    ['version not-equal', cmp('k', 'version', 'not-equal', 1), true],
    ['createRevision equal', cmp('k', 'createRevision', 'equal', 2), true],
    ['createRevision greater', cmp('k', 'createRevision', 'greater', 1), true],
    ['modRevision equal', cmp('k', 'modRevision', 'equal', 3), true],
    ['modRevision less', cmp('k', 'modRevision', 'less', 3), false],
    ['absent value equal to the empty string', cmp('x', 'value', 'equal', ''), false],
    ['absent value not-equal', cmp('x', 'value', 'not-equal', 'm'), false],
    ['absent version equal 0', cmp('x', 'version', 'equal', 0), true],
    ['absent createRevision equal 0', cmp('x', 'createRevision', 'equal', 0), true],
    ['absent modRevision greater 0', cmp('x', 'modRevision', 'greater', 0), false],
  ];
  for (const [name, compare, expected] of cases) {
    test(`a compare of ${name} ${expected ? 'holds' : 'fails'}`, () => {
      const d = setup();
      const result = expectKind(d.txn([compare], [{ kind: 'put', key: 'ok', value: '1' }]), 'txn');
      assert.equal(result.succeeded, expected);
      assert.equal(d.store.get('ok') !== undefined, expected);
    });
  }

  test('every compare must hold; otherwise the failure branch runs', () => {
    const d = setup();
    const result = expectKind(d.txn(
      [cmp('k', 'version', 'equal', 2), cmp('k', 'value', 'equal', 'nope')],
      [{ kind: 'put', key: 'yes', value: '1' }],
      [{ kind: 'put', key: 'no', value: '1' }],
    ), 'txn');
    assert.equal(result.succeeded, false);
    assert.equal(d.store.get('yes'), undefined);
    assert.equal(d.store.get('no')?.modRevision, 4);
  });

  test('all writes of a txn share one new revision and appear as events in op order', () => {
    const d = setup();
    d.put('old', 'x');
    const result = expectKind(d.txn([], [
      { kind: 'put', key: 'b', value: '1' },
      { kind: 'delete', key: 'old' },
      { kind: 'put', key: 'a', value: '2' },
    ]), 'txn');
    assert.equal(result.revision, 5);
    assert.deepEqual(result.responses, [
      { kind: 'put' }, { kind: 'delete', deleted: 1 }, { kind: 'put' },
    ]);
    assert.equal(d.store.get('a')?.modRevision, 5);
    assert.equal(d.store.get('b')?.modRevision, 5);
    assert.deepEqual(summary(eventsOk(d.store, 5, { key: '', prefix: true }).events),
      ['5:put:b', '5:delete:old', '5:put:a']);
  });

  test('a range inside a txn sees the earlier ops of the same txn', () => {
    const d = setup();
    const result = expectKind(d.txn([], [
      { kind: 'put', key: 'n/1', value: 'new' },
      { kind: 'range', key: 'n/', prefix: true },
    ]), 'txn');
    assert.deepEqual(result.responses[1], { kind: 'range', more: false, count: 1, kvs: [
      { key: 'n/1', value: 'new', createRevision: 4, modRevision: 4, version: 1 }] });
  });

  test('a txn that writes nothing keeps the revision', () => {
    const d = setup();
    const result = expectKind(d.txn([cmp('k', 'value', 'equal', 'm')],
      [{ kind: 'range', key: 'k', limit: 1 }]), 'txn');
    assert.equal(result.revision, 3);
    assert.equal(d.store.revision, 3);
  });

  test('compare-and-swap on mod revision: the first writer wins, the second sees it', () => {
    const d = setup();
    const swap = (value: string) => expectKind(d.txn([cmp('k', 'modRevision', 'equal', 3)],
      [{ kind: 'put', key: 'k', value }], [{ kind: 'range', key: 'k' }]), 'txn');
    assert.equal(swap('first').succeeded, true);
    const second = swap('second');
    assert.equal(second.succeeded, false);
    const read = second.responses[0];
    assert.equal(read?.kind === 'range' && read.kvs[0]?.value, 'first');
  });

  test('apply refuses a txn that writes one key twice (checked again at apply)', () => {
    const d = setup();
    const result = d.txn([], [{ kind: 'put', key: 'a', value: '1' },
      { kind: 'delete', key: 'a' }]);
    const error = expectError(result, 'invalid');
    assert.equal(error.code === 'invalid' && error.problems[0]?.field, 'success[1]');
    assert.equal(d.store.revision, 3);
  });
});

describe('kv: range', () => {
  const setup = (): Driver => {
    const d = new Driver();
    for (const key of ['b/2', 'a', 'b/1', 'b', 'b/3', 'c']) d.put(key, `v-${key}`);
    return d;
  };

  test('a prefix range returns the keys under it in key order', () => {
    const result = rangeOk(setup().store, { key: 'b/', prefix: true });
    assert.deepEqual(result.kvs.map((kv) => kv.key), ['b/1', 'b/2', 'b/3']);
    assert.equal(result.count, 3);
    assert.equal(result.more, false);
    assert.equal(result.revision, 7);
  });

  test('limit cuts the answer, sets more and keeps the full count', () => {
    const result = rangeOk(setup().store, { key: 'b', prefix: true, limit: 2 });
    assert.deepEqual(result.kvs.map((kv) => kv.key), ['b', 'b/1']);
    assert.equal(result.more, true);
    assert.equal(result.count, 4);
    assert.equal(rangeOk(setup().store, { key: 'b', prefix: true, limit: 4 }).more, false);
  });

  test('a single-key range ignores keys that merely start with it', () => {
    const result = rangeOk(setup().store, { key: 'b' });
    assert.deepEqual(result.kvs.map((kv) => kv.key), ['b']);
    assert.deepEqual(rangeOk(setup().store, { key: 'zz' }).kvs, []);
  });

  test('the empty prefix covers every key', () => {
    assert.equal(rangeOk(setup().store, { key: '', prefix: true }).count, 6);
  });

  test('a range at an older revision sees the values, deletes and absences of that time', () => {
    const d = new Driver();
    d.put('k/a', '1'); // 2
    d.put('k/b', '1'); // 3
    d.put('k/a', '2'); // 4
    d.del('k/b'); // 5
    d.put('k/c', '1'); // 6
    const at = (revision: number): string[] => rangeOk(d.store, { key: 'k/', prefix: true,
      revision }).kvs.map((kv) => `${kv.key}=${kv.value}@${kv.modRevision}v${kv.version}`);
    assert.deepEqual(at(1), []);
    assert.deepEqual(at(2), ['k/a=1@2v1']);
    assert.deepEqual(at(3), ['k/a=1@2v1', 'k/b=1@3v1']);
    assert.deepEqual(at(4), ['k/a=2@4v2', 'k/b=1@3v1']);
    assert.deepEqual(at(5), ['k/a=2@4v2']);
    assert.deepEqual(at(6), ['k/a=2@4v2', 'k/c=1@6v1']);
    assert.deepEqual(at(0), at(6));
    const limited = rangeOk(d.store, { key: 'k/', prefix: true, revision: 3, limit: 1 });
    assert.deepEqual([limited.kvs.length, limited.more, limited.count, limited.revision],
      [1, true, 2, 6]);
  });

  test('a revision beyond the store is future-revision', () => {
    const d = setup();
    assert.deepEqual(d.store.range({ key: 'a', revision: 8 }), { kind: 'error',
      error: { code: 'future-revision', revision: 8, currentRevision: 7 } });
  });

  test('an invalid request lists every problem', () => {
    const error = expectError(new KvStore().range({ key: '', limit: -1, revision: 1.5 }),
      'invalid');
    assert.deepEqual(error.code === 'invalid' && error.problems.map((p) => p.field),
      ['key', 'limit', 'revision']);
  });
});

describe('kv: history and compaction', () => {
  test('past historyEventsMax the oldest revisions are dropped whole', () => {
    const d = new Driver({ historyEventsMax: 3 });
    d.txn([], [{ kind: 'put', key: 'a', value: '1' }, { kind: 'put', key: 'b', value: '1' }]); // 2
    d.put('a', '2'); // 3
    assert.equal(d.store.historyEventCount, 3);
    assert.equal(d.store.compactRevision, 0);
    d.put('b', '2'); // 4: 4 events > 3, revision 2 (2 events) goes
    assert.equal(d.store.historyEventCount, 2);
    assert.equal(d.store.compactRevision, 2);
    expectError(d.store.range({ key: 'a', revision: 1 }), 'compacted');
    assert.equal(rangeOk(d.store, { key: 'a', revision: 2 }).kvs[0]?.value, '1');
    assert.deepEqual(d.store.eventsSince(2, { key: 'a' }),
      { kind: 'error', error: { code: 'compacted', compactRevision: 2 } });
    assert.deepEqual(summary(eventsOk(d.store, 3, { key: '', prefix: true }).events),
      ['3:put:a', '4:put:b']);
  });

  test('the newest revision is kept whole even when it alone exceeds the bound', () => {
    const d = new Driver({ historyEventsMax: 2 });
    d.put('x', '0');
    const ops = ['a', 'b', 'c'].map((key) => ({ kind: 'put' as const, key, value: '1' }));
    d.txn([], ops); // revision 3 with 3 events
    assert.equal(d.store.historyEventCount, 3);
    assert.equal(d.store.compactRevision, 2);
    assert.equal(eventsOk(d.store, 3, { key: '', prefix: true }).events.length, 3);
  });

  test('past historyBytesMax the oldest revisions are dropped', () => {
    const d = new Driver({ historyBytesMax: 1000 });
    d.put('a', 'x'.repeat(150)); // 2 × 151 + 100 = 402 bytes
    d.put('b', 'y'.repeat(150));
    assert.equal(d.store.compactRevision, 0);
    d.put('c', 'z'.repeat(150));
    assert.equal(d.store.compactRevision, 2);
    assert.ok(d.store.historySizeBytes <= 1000, `${d.store.historySizeBytes}`);
  });

  test('compact drops revisions up to its argument without a new revision', () => {
    const d = new Driver();
    for (let i = 0; i < 5; i++) d.put('k', `${i}`); // revisions 2..6
    assert.deepEqual(d.run({ kind: 'compact', revision: 4 }),
      { kind: 'compact', revision: 6, compactRevision: 4 });
    assert.equal(d.store.revision, 6);
    assert.equal(d.store.compactRevision, 4);
    assert.equal(rangeOk(d.store, { key: 'k', revision: 4 }).kvs[0]?.value, '2');
    expectError(d.store.range({ key: 'k', revision: 3 }), 'compacted');
    assert.deepEqual(summary(eventsOk(d.store, 5, { key: 'k' }).events), ['5:put:k', '6:put:k']);
  });

  test('compact at or below the compact revision, or beyond the store, is an error', () => {
    const d = new Driver();
    for (let i = 0; i < 3; i++) d.put('k', `${i}`); // revisions 2..4
    d.run({ kind: 'compact', revision: 3 });
    assert.deepEqual(d.run({ kind: 'compact', revision: 3 }),
      { kind: 'error', error: { code: 'compacted', compactRevision: 3 } });
    assert.deepEqual(d.run({ kind: 'compact', revision: 5 }),
      { kind: 'error', error: { code: 'future-revision', revision: 5, currentRevision: 4 } });
    assert.equal(d.store.compactRevision, 3);
  });
});

describe('kv: watch', () => {
  test('events come in revision order with the previous key-value', () => {
    const d = new Driver();
    d.put('w/a', '1');
    d.put('w/b', '1');
    d.put('w/a', '2');
    d.del('w/b');
    const { events, nextRevision, more, revision } =
      eventsOk(d.store, 1, { key: 'w/', prefix: true });
    assert.deepEqual(summary(events), ['2:put:w/a', '3:put:w/b', '4:put:w/a', '5:delete:w/b']);
    assert.deepEqual([nextRevision, more, revision], [6, false, 5]);
    assert.equal(events[0]?.prevKv, undefined);
    assert.deepEqual(events[2]?.prevKv,
      { key: 'w/a', value: '1', createRevision: 2, modRevision: 2, version: 1 });
    assert.deepEqual(events[3], {
      type: 'delete',
      kv: { key: 'w/b', value: '', createRevision: 0, modRevision: 5, version: 0 },
      prevKv: { key: 'w/b', value: '1', createRevision: 3, modRevision: 3, version: 1 },
    });
  });

  test('a key watch sees only that key; a prefix watch every key under it', () => {
    const d = new Driver();
    for (const key of ['a', 'ab', 'a/x', 'b']) d.put(key, '1');
    assert.deepEqual(summary(eventsOk(d.store, 1, { key: 'a' }).events), ['2:put:a']);
    assert.deepEqual(summary(eventsOk(d.store, 1, { key: 'a', prefix: true }).events),
      ['2:put:a', '3:put:ab', '4:put:a/x']);
  });

  test('limit never splits a revision; resuming at nextRevision skips and repeats nothing', () => {
    const d = new Driver();
    d.put('a', '1'); // 2
    d.txn([], [{ kind: 'put', key: 'b', value: '1' }, { kind: 'put', key: 'c', value: '1' }]); // 3
    d.put('a', '2'); // 4
    const first = eventsOk(d.store, 1, { key: '', prefix: true }, 2);
    assert.deepEqual(summary(first.events), ['2:put:a', '3:put:b', '3:put:c']);
    assert.deepEqual([first.more, first.nextRevision], [true, 4]);
    const second = eventsOk(d.store, first.nextRevision, { key: '', prefix: true }, 2);
    assert.deepEqual(summary(second.events), ['4:put:a']);
    assert.deepEqual([second.more, second.nextRevision], [false, 5]);
  });

  test('with nothing matching, nextRevision moves past the current revision', () => {
    const d = new Driver();
    d.put('a', '1');
    d.put('b', '1');
    const result = eventsOk(d.store, 1, { key: 'zzz' });
    assert.deepEqual([result.events.length, result.nextRevision], [0, 4]);
    d.put('zzz', '1');
    assert.deepEqual(summary(eventsOk(d.store, result.nextRevision, { key: 'zzz' }).events),
      ['4:put:zzz']);
  });

  test('a watcher behind the compact revision gets compacted, re-lists and resumes', () => {
    const d = new Driver();
    for (let i = 0; i < 4; i++) d.put('k', `${i}`); // 2..5
    d.run({ kind: 'compact', revision: 4 });
    assert.deepEqual(d.store.eventsSince(4, { key: 'k' }),
      { kind: 'error', error: { code: 'compacted', compactRevision: 4 } });
    const listed = rangeOk(d.store, { key: 'k' });
    d.put('k', 'after');
    const resumed = eventsOk(d.store, listed.revision + 1, { key: 'k' });
    assert.deepEqual(summary(resumed.events), ['6:put:k']);
  });

  test('a watch from revision 0 or with a bad limit is invalid', () => {
    expectError(new KvStore().eventsSince(0, { key: 'a' }), 'invalid');
    expectError(new KvStore().eventsSince(1, { key: 'a' }, -1), 'invalid');
  });
});

describe('kv: idempotent receiver', () => {
  test('a retried put is applied once and gets the saved result', () => {
    const d = new Driver();
    const command = d.stamp({ kind: 'put', key: 'a', value: '1' });
    const first = d.applyStamped(command);
    d.put('b', '1', 'other');
    const retry = d.applyStamped(command);
    assert.equal(retry, first);
    assert.equal(d.store.revision, 3);
    assert.equal(d.store.get('a')?.version, 1);
  });

  test('an older sequence is duplicate-stale and changes nothing', () => {
    const d = new Driver();
    const old = d.stamp({ kind: 'put', key: 'a', value: 'old' });
    d.applyStamped(old);
    d.put('a', 'new');
    assert.deepEqual(d.applyStamped(old), { kind: 'error', error: {
      code: 'duplicate-stale', clientId: 'c1', sequence: 1, sequenceApplied: 2 } });
    assert.equal(d.store.get('a')?.value, 'new');
    assert.equal(d.store.revision, 3);
  });

  test('sequences may skip numbers; clients are independent', () => {
    const d = new Driver();
    expectKind(d.applyStamped({ kind: 'put', clientId: 'c1', sequence: 5, nowMs: START_MS,
      key: 'a', value: '1' }), 'put');
    expectKind(d.applyStamped({ kind: 'put', clientId: 'c2', sequence: 1, nowMs: START_MS,
      key: 'a', value: '2' }), 'put');
    expectKind(d.applyStamped({ kind: 'put', clientId: 'c1', sequence: 9, nowMs: START_MS,
      key: 'a', value: '3' }), 'put');
    assert.equal(d.store.get('a')?.version, 3);
  });

  test('a rejected command uses up its sequence: the retry gets the same error', () => {
    const d = new Driver({ valueBytesMax: 4 });
    const command = d.stamp({ kind: 'put', key: 'a', value: 'too long' });
    const first = d.applyStamped(command);
    expectError(first, 'invalid');
    assert.equal(d.applyStamped(command), first);
    assert.equal(d.store.clientRecord('c1')?.sequence, 1);
  });

  test('a command without a usable stamp is refused and leaves no record', () => {
    const d = new Driver();
    const result = d.applyStamped({ kind: 'put', clientId: '', sequence: 0, nowMs: -1,
      key: 'a', value: '1' });
    const error = expectError(result, 'invalid');
    assert.deepEqual(error.code === 'invalid' && error.problems.map((p) => p.field),
      ['clientId', 'sequence', 'nowMs']);
    assert.equal(d.store.clientCount, 0);
    assert.equal(d.store.revision, 1);
  });

  test('past clientsMax the least recently applied client is forgotten', () => {
    const d = new Driver({ clientsMax: 2 });
    const c1 = d.stamp({ kind: 'put', key: 'k', value: 'c1' }, 'c1');
    d.applyStamped(c1);
    d.put('k', 'c2', 'c2');
    d.put('k', 'c1-again', 'c1'); // c1 is now the most recent; c2 the least
    d.put('k', 'c3', 'c3');
    assert.equal(d.store.clientCount, 2);
    assert.equal(d.store.clientRecord('c2'), undefined);
    assert.equal(d.store.clientRecord('c1')?.sequence, 2);
    assert.equal(d.store.clientRecord('c3')?.sequence, 1);
  });

  test('a client idle for more than clientIdleMsMax of log time is forgotten', () => {
    const d = new Driver({ clientIdleMsMax: 1000 });
    const retry = d.stamp({ kind: 'put', key: 'a', value: '1' }, 'idle');
    d.applyStamped(retry);
    d.nowMs += 1000;
    d.put('b', '1', 'busy');
    assert.notEqual(d.store.clientRecord('idle'), undefined, 'exactly the idle time: kept');
    d.nowMs += 1;
    d.put('b', '2', 'busy');
    assert.equal(d.store.clientRecord('idle'), undefined);
    assert.equal(d.store.clientCount, 1);
    // Documented limit: a retry after the record is gone is applied again.
    expectKind(d.applyStamped(retry), 'put');
    assert.equal(d.store.get('a')?.version, 2);
  });

  test('the same key with another command is idempotency-mismatch and changes nothing', () => {
    const d = new Driver();
    const first = d.stamp({ kind: 'put', key: 'a', value: '1' });
    d.applyStamped(first);
    const reused = { ...first, value: '2' } as KvCommand;
    assert.deepEqual(d.applyStamped(reused), { kind: 'error', error: {
      code: 'idempotency-mismatch', clientId: 'c1', sequence: 1 } });
    assert.deepEqual(d.applyStamped({ ...first, kind: 'delete', key: 'a' } as KvCommand),
      { kind: 'error', error: { code: 'idempotency-mismatch', clientId: 'c1', sequence: 1 } });
    assert.equal(d.store.get('a')?.value, '1');
    assert.equal(d.store.revision, 2);
    // The leader's time is not part of the command: a retry stamped later is a retry.
    expectKind(d.applyStamped({ ...first, nowMs: first.nowMs + 10 } as KvCommand), 'put');
    // Absent and default options are the same command.
    const t = d.stamp({ kind: 'put', key: 'b', value: '1' });
    d.applyStamped(t);
    expectKind(d.applyStamped({ ...t, prevKv: false } as KvCommand), 'put');
    assert.equal(d.store.revision, 3);
  });

  test('a command without clientId and sequence is applied each time, with no record', () => {
    const d = new Driver();
    const bare = { kind: 'put', nowMs: START_MS, key: 'a', value: '1' } as const;
    expectKind(d.applyStamped(bare), 'put');
    expectKind(d.applyStamped(bare), 'put');
    assert.equal(d.store.get('a')?.version, 2);
    assert.equal(d.store.clientCount, 0);
    const half = expectError(d.applyStamped({ ...bare, clientId: 'c1' }), 'invalid');
    assert.deepEqual(half.code === 'invalid' && half.problems.map((p) => p.field), ['sequence']);
  });

  test('a large answer is kept trimmed: a retry gets outcome and revision, no values', () => {
    const d = new Driver();
    const big = 'x'.repeat(10_000);
    d.put('a', big);
    const command = d.stamp({ kind: 'put', key: 'a', value: 'small', prevKv: true });
    const first = expectKind(d.applyStamped(command), 'put');
    assert.equal(first.prevKv?.value, big, 'the first answer is whole');
    assert.deepEqual(d.applyStamped(command), { kind: 'put', revision: 3, trimmed: true });
    const txn = d.stamp({ kind: 'txn', compare: [], success: [{ kind: 'range', key: 'a' },
      { kind: 'delete', key: 'a', prevKv: true }], failure: [] });
    d.put('a', big, 'other');
    d.applyStamped(txn);
    assert.deepEqual(d.applyStamped(txn), { kind: 'txn', revision: 5, succeeded: true,
      trimmed: true, responses: [{ kind: 'range', kvs: [], more: true, count: 1 },
        { kind: 'delete', deleted: 1 }] });
    // Small answers stay whole, so a recipe's retried transaction still sees its read.
    const small = d.stamp({ kind: 'txn', compare: [], success: [{ kind: 'put', key: 'l',
      value: 'me' }, { kind: 'range', key: 'l' }], failure: [] });
    const whole = d.applyStamped(small);
    assert.equal(d.applyStamped(small), whole);
  });

  test('past clientsBytesMax the least recently applied clients are forgotten', () => {
    const d = new Driver({ clientsBytesMax: 2000 });
    for (let i = 0; i < 20; i++) d.put(`k${i}`, 'v', `client-${i}`);
    assert.ok(d.store.clientsSizeBytes <= 2000, `${d.store.clientsSizeBytes}`);
    assert.ok(d.store.clientCount < 20 && d.store.clientCount > 1);
    assert.equal(d.store.clientRecord('client-0'), undefined);
    assert.notEqual(d.store.clientRecord('client-19'), undefined);
  });

  test('puts of 100 KiB with prevKv from new clients keep the table small', () => {
    const d = new Driver({ historyBytesMax: 4 * 1024 * 1024 });
    const value = 'v'.repeat(100 * 1024);
    for (let i = 0; i < 600; i++) {
      d.applyStamped({ kind: 'put', clientId: `p${i}`, sequence: 1, nowMs: START_MS,
        key: 'k', value: i % 2 === 0 ? value : `${value}.`, prevKv: true });
    }
    assert.equal(d.store.clientCount, 600);
    assert.ok(d.store.clientsSizeBytes < 200_000, `${d.store.clientsSizeBytes} bytes`);
  });

  test('keyspaceBytes counts the live keys and values, and deletes free it', () => {
    const d = new Driver();
    assert.equal(d.store.keyspaceBytes, 0);
    d.put('ab', 'xyz');
    assert.equal(d.store.keyspaceBytes, 5 + 64);
    d.put('ab', 'x');
    assert.equal(d.store.keyspaceBytes, 3 + 64);
    d.del('ab');
    assert.equal(d.store.keyspaceBytes, 0);
  });

  test('log time is the highest stamp seen: an older stamp does not move it back', () => {
    const d = new Driver();
    d.put('a', '1');
    d.nowMs -= 5000;
    d.put('a', '2');
    assert.equal(d.store.logTimeMs, START_MS);
  });
});

describe('kv: apply entries', () => {
  test('an undecodable entry is a bad-command result and changes only the applied index', () => {
    const store = new KvStore();
    const result = store.applyEntry({ index: logIndex(3), term: term(1), kind: 'normal',
      data: new Uint8Array([1, 123, 125]) });
    expectError(result, 'bad-command');
    assert.equal(store.appliedIndex, 3);
    assert.equal(store.revision, 1);
  });

  test('an encoded command applies like the command itself', () => {
    const store = new KvStore();
    const data = encodeKvCommand({ kind: 'put', clientId: 'c', sequence: 1, nowMs: 5,
      key: 'a', value: 'b' });
    assert.deepEqual(store.applyEntry({ index: logIndex(1), term: term(1), kind: 'normal', data }),
      { kind: 'put', revision: 2 });
    assert.equal(store.logTimeMs, 5);
  });

  test('applying an index that does not grow is a programmer error', () => {
    const d = new Driver();
    d.put('a', '1');
    assert.throws(() => d.store.apply(1, d.stamp({ kind: 'put', key: 'a', value: '2' })),
      /out of order/);
  });
});
