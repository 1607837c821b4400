/**
 * snapshot: the file format and names. Goal: a snapshot survives encode/decode unchanged, any
 * flipped byte is caught, decoding is total (never throws, whatever the bytes), names sort by
 * index. Method: examples and fast-check over snapshots, byte flips and arbitrary bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { Snapshot } from '../../../src/core/raft/types.js';
import {
  decodeSnapshot, encodeSnapshot, isSnapshotTempName, parseSnapshotFileName, snapshotFileName,
  snapshotTempName,
} from '../../../src/runtime/snapshot/snapshot-file.js';

const snapshotArb = fc.record({
  index: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  term: fc.integer({ min: 1, max: 2 ** 40 }),
  voters: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 5 }),
  data: fc.uint8Array({ maxLength: 300 }),
}).map(({ index, term: t, voters, data }): Snapshot => ({
  meta: { index: logIndex(index), term: term(t),
    // All ids but the last vote; the last one learns (when there are two or more).
    membership: { voters: voters.slice(0, Math.max(1, voters.length - 1)).map(nodeId),
      learners: voters.length > 1 ? [nodeId(voters[voters.length - 1]!)] : [] } },
  data,
}));

describe('snapshot: file format', () => {
  test('encode then decode gives the same snapshot', () => {
    fc.assert(fc.property(snapshotArb, (snapshot) => {
      const back = decodeSnapshot(encodeSnapshot(snapshot));
      assert.ok(typeof back !== 'string', back as string);
      assert.deepEqual({ ...back, data: [...back.data] }, { ...snapshot, data: [...snapshot.data] });
    }), { numRuns: 300 });
  });

  test('recorded peer addresses: version 2 when there are some, version 1 (as before) when none',
    () => {
    const base = fc.sample(snapshotArb, { numRuns: 1, seed: 7 })[0]!;
    const members = [...base.meta.membership.voters, ...base.meta.membership.learners];
    const withAddrs: Snapshot = { ...base, meta: { ...base.meta, membership: {
      ...base.meta.membership, peerAddrs: [{ id: members[0]!, addr: '[::1]:7000' }] } } };
    const version = (bytes: Uint8Array): number => new DataView(bytes.buffer).getUint16(4, true);
    assert.equal(version(encodeSnapshot(base)), 1);
    const bytes = encodeSnapshot(withAddrs);
    assert.equal(version(bytes), 2);
    const back = decodeSnapshot(bytes);
    assert.ok(typeof back !== 'string', back as string);
    assert.deepEqual(back.meta, withAddrs.meta);
  });

  test('published client URLs: version 3, with or without peer addresses', () => {
    const base = fc.sample(snapshotArb, { numRuns: 1, seed: 7 })[0]!;
    const members = [...base.meta.membership.voters, ...base.meta.membership.learners];
    const version = (bytes: Uint8Array): number => new DataView(bytes.buffer).getUint16(4, true);
    for (const peerAddrs of [[], [{ id: members[0]!, addr: 'h:1' }]]) {
      const snapshot: Snapshot = { ...base, meta: { ...base.meta, membership: {
        ...base.meta.membership, ...(peerAddrs.length === 0 ? {} : { peerAddrs }),
        clientUrls: [{ id: members[0]!, url: 'https://[::1]:7001' }] } } };
      const bytes = encodeSnapshot(snapshot);
      assert.equal(version(bytes), 3);
      const back = decodeSnapshot(bytes);
      assert.ok(typeof back !== 'string', back as string);
      assert.deepEqual(back.meta, snapshot.meta);
    }
    const bad: Snapshot = { ...base, meta: { ...base.meta, membership: {
      ...base.meta.membership, clientUrls: [{ id: members[0]!, url: 'http://h:1/x' }] } } };
    assert.match(String(decodeSnapshot(encodeSnapshot(bad))), /clientUrls/);
  });

  test('a recorded peer address that is not host:port, or names no member, is refused', () => {
    const membership = { voters: [nodeId('n1')], learners: [nodeId('n4')] };
    for (const [id, addr] of [['n4', 'no-port'], ['n9', 'h:1'], ['n4', 'h:99999']] as const) {
      const snapshot: Snapshot = { meta: { index: logIndex(5), term: term(2),
        membership: { ...membership, peerAddrs: [{ id: nodeId(id), addr }] } },
      data: new Uint8Array([1, 2, 3]) };
      const decoded = decodeSnapshot(encodeSnapshot(snapshot));
      assert.equal(typeof decoded, 'string', `${id} ${addr}`);
      assert.match(String(decoded), /peer address|not a member/);
    }
  });

  test('any flipped byte is caught', () => {
    fc.assert(fc.property(snapshotArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (s, at, mask) => {
      const bytes = encodeSnapshot(s);
      const i = at % bytes.length;
      bytes[i] = bytes[i]! ^ mask;
      assert.equal(typeof decodeSnapshot(bytes), 'string');
    }), { numRuns: 500 });
  });

  test('decoding arbitrary or cut bytes never throws', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
      assert.equal(typeof decodeSnapshot(bytes), 'string');
    }), { numRuns: 500 });
    fc.assert(fc.property(snapshotArb, fc.nat(), (s, cut) => {
      const bytes = encodeSnapshot(s);
      assert.equal(typeof decodeSnapshot(bytes.subarray(0, cut % bytes.length)), 'string');
    }), { numRuns: 300 });
  });

  test('names carry index and term, sort by index, and temporary names are recognized', () => {
    const name = snapshotFileName(logIndex(42), term(7));
    assert.equal(name, 'snap-0000000000000042-0000000000000007.snap');
    assert.deepEqual(parseSnapshotFileName(name), { index: 42, term: 7 });
    assert.equal(parseSnapshotFileName('wal-0000000001.log'), undefined);
    assert.ok(snapshotFileName(logIndex(9), term(9)) < snapshotFileName(logIndex(10), term(1)));
    assert.ok(isSnapshotTempName(snapshotTempName(logIndex(42), term(7))));
    assert.ok(!isSnapshotTempName(name));
  });
});
