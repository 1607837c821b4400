/**
 * Goal: snapshot bytes restore the exact state, and damaged snapshot bytes are refused with a
 * reason, never with an exception. Method: a round trip of a store with keys, history and
 * client records; hand-made violations of each invariant; fast-check over random and mutated
 * bytes. (That a restored store behaves identically is a property in kv-store.property.)
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  checkKvSnapshot, decodeKvSnapshot, encodeKvSnapshot, KV_SNAPSHOT_FORMAT_SECTIONS_V2,
  KvSnapshotEncoder, KvStore,
} from '../../../src/core/kv/index.js';
import type { KvSnapshot } from '../../../src/core/kv/index.js';
import { Driver } from './harness.js';

function sample(): KvSnapshot {
  const d = new Driver();
  d.put('a', '1');
  d.put('b', 'é😀', 'c2');
  d.put('a', '2');
  d.del('b');
  d.run({ kind: 'compact', revision: 2 });
  return d.store.toSnapshot();
}

const reencode = (snapshot: unknown): Uint8Array =>
  new Uint8Array([1, ...new TextEncoder().encode(JSON.stringify(snapshot))]);

describe('kv: snapshot', () => {
  test('bytes round-trip to an equal snapshot and an equal store', () => {
    const snapshot = sample();
    const decoded = decodeKvSnapshot(encodeKvSnapshot(snapshot));
    assert.deepEqual(decoded, snapshot);
    assert.deepEqual(KvStore.fromSnapshot(decoded as KvSnapshot).toSnapshot(), snapshot);
    assert.deepEqual([snapshot.revision, snapshot.compactRevision, snapshot.appliedIndex,
      snapshot.kvs.length, snapshot.events.length, snapshot.clients.length], [5, 2, 5, 1, 3, 2]);
  });

  test('each broken invariant is refused with a reason', () => {
    const base = sample();
    const [kv] = base.kvs;
    assert.ok(kv !== undefined);
    const broken: [string, unknown, RegExp][] = [
      ['format', { ...base, format: 3 }, /unknown format/],
      ['a malformed digest', { ...base, clients: [{ ...base.clients[0], digest: 7 }] },
        /clients\[0\]/],
      ['compact above revision', { ...base, compactRevision: 9 }, /compactRevision/],
      ['unsorted keys', { ...base, kvs: [kv, kv] }, /keys unsorted/],
      ['a key from the future', { ...base, kvs: [{ ...kv, modRevision: 9 }] }, /revisions/],
      ['events out of order', { ...base, events: [...base.events].reverse() }, /unordered/],
      ['an event at the compact revision', { ...base, compactRevision: 4 }, /outside/],
      ['a duplicate client', { ...base, clients: [base.clients[0], base.clients[0]] },
        /duplicate client/],
      ['a missing field', { ...base, kvs: undefined }, /kvs must be an array/],
      ['a malformed event', { ...base, events: [{ type: 'expire', kv }] }, /events\[0\]/],
      ['a malformed result', { ...base, clients: [{ ...base.clients[0], result: {} }] },
        /clients\[0\]/],
    ];
    for (const [name, snapshot, reason] of broken) {
      const decoded = decodeKvSnapshot(reencode(snapshot));
      assert.equal((decoded as { kind?: string }).kind, 'decode-error', name);
      assert.match((decoded as { reason: string }).reason, reason, name);
    }
  });

  test('a format-1 snapshot decodes; its whole answers are trimmed as the store loads them', () => {
    const base = sample();
    assert.equal(base.format, 2);
    assert.ok(base.clients.every((c) => typeof c.digest === 'string' && c.digest.length === 16));
    const big = 'v'.repeat(10_000);
    const old = { ...base, format: 1, clients: base.clients.map((c, i) => ({
      clientId: c.clientId, sequence: c.sequence, appliedAtMs: c.appliedAtMs,
      result: i === 0 ? { kind: 'put', revision: 2, prevKv: { key: 'a', value: big,
        createRevision: 2, modRevision: 2, version: 1 } } : c.result })) };
    const decoded = decodeKvSnapshot(reencode(old));
    assert.equal((decoded as KvSnapshot).format, 1);
    const store = KvStore.fromSnapshot(decoded as KvSnapshot);
    const first = store.clientRecord(base.clients[0]?.clientId ?? '');
    assert.deepEqual(first?.result, { kind: 'put', revision: 2, trimmed: true });
    assert.equal(first?.digest, undefined);
    assert.equal(store.toSnapshot().format, 2);
  });

  test('the idempotency table (digests, trimmed answers, its bytes) survives a stepped snapshot',
    () => {
      // Bounded in bytes so that some clients were evicted: the restored table is the same set.
      const d = new Driver({ clientsBytesMax: 8 * 1024, clientResultBytesMax: 1024 });
      const big = 'v'.repeat(3000);
      for (let i = 0; i < 40; i++) d.put(`k${i % 4}`, `${big}${i}`, `c${i}`);
      d.run({ kind: 'put', key: 'k0', value: 'x', prevKv: true }, 'last');
      const record = d.store.clientRecord('last');
      assert.deepEqual(record?.result, { kind: 'put', revision: d.store.revision,
        trimmed: true });
      assert.ok(d.store.clientCount < 41 && d.store.clientsSizeBytes <= 8 * 1024);
      // The server's path: a copy-on-write capture encoded in tiny sections, then restored.
      const capture = d.store.captureSnapshot();
      const bytes = new KvSnapshotEncoder(capture, 256).finish();
      capture.release();
      const decoded = decodeKvSnapshot(bytes);
      assert.ok(!('kind' in decoded), JSON.stringify(decoded));
      assert.equal(decoded.format, 2);
      assert.deepEqual(decoded, d.store.toSnapshot());
      const restored = new KvStore(d.store.config);
      restored.restore(decoded);
      assert.deepEqual(restored.toSnapshot(), d.store.toSnapshot());
      assert.equal(restored.clientsSizeBytes, d.store.clientsSizeBytes);
      assert.equal(restored.clientRecord('last')?.digest, record?.digest);
      // A retry after the restore gets the saved (trimmed) answer; a reused key is refused.
      const retry = { kind: 'put', key: 'k0', value: 'x', prevKv: true, clientId: 'last',
        sequence: 1, nowMs: d.nowMs } as const;
      assert.deepEqual(restored.apply(d.index + 1, retry), record?.result);
      const reused = restored.apply(d.index + 2, { ...retry, value: 'y' });
      assert.equal(reused.kind === 'error' && reused.error.code, 'idempotency-mismatch');
    });

  test('fromSnapshot refuses an inconsistent snapshot as a programmer error', () => {
    const base = sample();
    assert.deepEqual(checkKvSnapshot(base), []);
    assert.throws(() => KvStore.fromSnapshot({ ...base, revision: 0 }), /unusable kv snapshot/);
  });

  test('format 1 (one JSON document), which older versions wrote, still decodes', () => {
    const snapshot = sample();
    assert.deepEqual(decodeKvSnapshot(reencode(snapshot)), snapshot);
    assert.equal(encodeKvSnapshot(snapshot)[0], KV_SNAPSHOT_FORMAT_SECTIONS_V2);
  });

  test('format 2: sections in order, counts that match, lengths within the bytes', () => {
    const snapshot = sample();
    const utf8 = (text: string): number[] => [...new TextEncoder().encode(text)];
    const varint = (n: number): number[] => {
      const out: number[] = [];
      for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
      return [...out, n];
    };
    const section = (kind: number, body: number[]): number[] => {
      const length = new Uint8Array(4);
      new DataView(length.buffer).setUint32(0, body.length + 1, true);
      return [...length, kind, ...body];
    };
    const header = (counts: Record<string, number>): number[] => section(0, utf8(JSON.stringify({
      format: snapshot.format, appliedIndex: snapshot.appliedIndex, revision: snapshot.revision,
      compactRevision: snapshot.compactRevision, logTimeMs: snapshot.logTimeMs, counts })));
    const kvsBody = (items: [string, string, number, number, number, number][]): number[] =>
      [...varint(items.length), ...items.flatMap(([k, v, ...numbers]) => [
        ...varint(utf8(k).length), ...utf8(k), ...varint(utf8(v).length), ...utf8(v),
        ...numbers.flatMap(varint)])];
    const kvs = (items: [string, string, number, number, number, number][]): number[] =>
      section(1, kvsBody(items));
    const bytes = (...parts: number[][]): Uint8Array => new Uint8Array([2, ...parts.flat()]);
    const none = { kvs: 0, events: 0, clients: 0, leases: 0 };
    const kv: [string, string, number, number, number, number] = ['a', 'é', 3, 4, 2, 0];
    assert.deepEqual(decodeKvSnapshot(bytes(header({ ...none, kvs: 1 }), kvs([kv]))),
      { ...snapshot, kvs: [{ key: 'a', value: 'é', createRevision: 3, modRevision: 4,
        version: 2 }], events: [], clients: [], leases: [] });
    const cases: [string, Uint8Array, RegExp][] = [
      ['a count that does not match', bytes(header({ ...none, kvs: 2 }), kvs([kv])),
        /kvs: 1 items, the header says 2/],
      ['lists out of order', bytes(header({ ...none, kvs: 1 }), section(2, utf8('[]')),
        kvs([kv])), /out of order/],
      ['a second header', bytes(header(none), header(none)), /out of order/],
      ['a string past its section', bytes(header({ ...none, kvs: 1 }),
        section(1, [1, 100, ...utf8('ab')])), /claims 100 bytes/],
      ['bytes after the last item', bytes(header({ ...none, kvs: 1 }),
        section(1, [...kvsBody([kv]), 7])), /bytes left after 1 items/],
      ['an unknown section kind', bytes(header(none), section(9, [])), /unknown section kind 9/],
      ['a section past the end', bytes(header(none)).slice(0, 10), /claims/],
      ['a header without counts', bytes(section(0, utf8('{"format":1}'))), /appliedIndex/],
      ['a malformed event', bytes(header({ ...none, events: 1 }), section(2, utf8('[{}]'))),
        /events\[0\] is malformed/],
      ['no header at all', new Uint8Array([2]), /no header/],
    ];
    for (const [name, input, reason] of cases) {
      const decoded = decodeKvSnapshot(input);
      assert.equal((decoded as { kind?: string }).kind, 'decode-error', name);
      assert.match((decoded as { reason: string }).reason, reason, name);
    }
  });

  test('a store restored from a snapshot keeps accepting keys in order', () => {
    const d = new Driver();
    for (let i = 0; i < 2000; i++) d.put(`k${String(i).padStart(5, '0')}`, String(i));
    const restored = KvStore.fromSnapshot(d.store.toSnapshot());
    restored.apply(d.index + 1, d.stamp({ kind: 'put', key: 'k00000x', value: 'new' }));
    const keys = restored.range({ key: 'k', prefix: true });
    assert.ok(keys.kind === 'range');
    assert.deepEqual(keys.kvs.slice(0, 2).map((kv) => kv.key), ['k00000', 'k00000x']);
    assert.equal(keys.count, 2001);
  });

  test('decoding random or mutated bytes never throws', () => {
    const valid = encodeKvSnapshot(sample());
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(), fc.nat({ max: 255 }),
      (random, at, byte) => {
        assert.ok(typeof decodeKvSnapshot(random) === 'object');
        const mutated = valid.slice();
        mutated[at % mutated.length] = byte;
        assert.ok(typeof decodeKvSnapshot(mutated) === 'object');
        assert.ok(typeof decodeKvSnapshot(valid.subarray(0, at % valid.length)) === 'object');
      }), { numRuns: 5_000 });
  });
});
