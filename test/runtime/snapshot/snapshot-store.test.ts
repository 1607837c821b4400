/**
 * snapshot: store — a start reads snapshot files newest first and stops at the first valid
 * one (an older file, kept as a fallback, is not read); a damaged newer one is reported and
 * passed over.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { Storage } from '../../../src/ports/storage.js';
import {
  encodeSnapshot, scanSnapshots, snapshotFileName,
} from '../../../src/runtime/snapshot/index.js';

function storageOf(files: Map<string, Uint8Array>, reads: string[]): Storage {
  const unused = (): never => {
    throw new Error('not used by a scan');
  };
  return { list: () => [...files.keys()], read: (name) => {
    reads.push(name);
    return files.get(name);
  }, append: unused, truncate: unused, remove: unused, rename: unused, sync: unused,
  syncDir: unused };
}

const membership = { voters: [nodeId('n1')], learners: [] };
const file = (index: number): [string, Uint8Array] => [snapshotFileName(logIndex(index),
  term(1)), encodeSnapshot({ meta: { index: logIndex(index), term: term(1), membership },
  data: new Uint8Array([index]) })];

describe('snapshot: store', () => {
  test('the newest valid file is read, older ones are not', () => {
    const reads: string[] = [];
    const files = new Map([file(10), file(20)]);
    const scan = scanSnapshots(storageOf(files, reads));
    assert.deepEqual(scan.valid.map((v) => v.snapshot.meta.index), [20]);
    assert.deepEqual(reads, [snapshotFileName(logIndex(20), term(1))]);
  });

  test('a damaged newest file is reported, and the one before it used', () => {
    const reads: string[] = [];
    const [name, bytes] = file(30);
    const damaged = bytes.slice();
    damaged[damaged.length - 1]! ^= 1;
    const files = new Map([file(10), file(20), [name, damaged] as [string, Uint8Array]]);
    const scan = scanSnapshots(storageOf(files, reads));
    assert.deepEqual(scan.damaged.map((d) => d.file), [name]);
    assert.deepEqual(scan.valid.map((v) => v.snapshot.meta.index), [20]);
    assert.equal(reads.length, 2);
  });
});
