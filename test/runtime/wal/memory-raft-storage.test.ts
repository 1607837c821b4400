/**
 * wal: MemoryRaftStorage. Goal: the in-memory stand-in keeps the WAL's rules (suffix
 * replacement, no committed entry replaced) and remembers what the last completed sync covered.
 * Method: direct calls, with a deferral queue standing in for a slow disk.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemoryRaftStorage } from '../../../src/runtime/wal/memory-raft-storage.js';
import { describeLog, entries, hardState } from './wal-harness.js';

describe('wal: MemoryRaftStorage', () => {
  test('starts empty, or from the recovered state it is given', () => {
    assert.equal(new MemoryRaftStorage().lastIndex(), 0);
    const recovered = { hardState: hardState(3, 'n2', 2), entries: entries(1, 2, 3) };
    const storage = new MemoryRaftStorage({ recovered });
    assert.equal(storage.lastIndex(), 2);
    assert.deepEqual(storage.hardState(), hardState(3, 'n2', 2));
    assert.equal(storage.recovered, recovered);
  });

  test('appends, replaces a suffix, and refuses to replace a committed entry', () => {
    const storage = new MemoryRaftStorage();
    storage.append(entries(1, 4, 1));
    storage.saveHardState(hardState(1, undefined, 1));
    storage.append(entries(3, 3, 2));
    assert.deepEqual(describeLog(storage.entries()),
      describeLog([...entries(1, 2, 1), ...entries(3, 3, 2)]));
    assert.throws(() => storage.append(entries(1, 1, 2)), /committed/);
    assert.throws(() => storage.append(entries(5, 5, 2)), /no gaps/);
  });

  test('the durable state is what the last completed sync covered', () => {
    const pending: (() => void)[] = [];
    const storage = new MemoryRaftStorage({ defer: (run) => pending.push(run) });
    storage.append(entries(1, 2, 1));
    let synced = 0;
    storage.sync(() => synced++);
    storage.append(entries(3, 3, 1));
    storage.saveHardState(hardState(1, 'n1', 3));
    assert.equal(storage.durableState().entries.length, 0);
    pending.shift()?.();
    assert.equal(synced, 1);
    assert.equal(storage.durableState().entries.length, 2);
    assert.deepEqual(storage.durableState().hardState, hardState(0, undefined, 0));
    storage.sync(() => synced++);
    pending.shift()?.();
    assert.equal(storage.durableState().entries.length, 3);
    assert.deepEqual(storage.durableState().hardState, hardState(1, 'n1', 3));
  });

  test('completions that arrive out of order never bring back an older state', () => {
    const pending: (() => void)[] = [];
    const storage = new MemoryRaftStorage({ defer: (run) => pending.push(run) });
    storage.append(entries(1, 1, 1));
    storage.sync(() => undefined);
    storage.append(entries(2, 2, 1));
    storage.sync(() => undefined);
    pending[1]?.();
    pending[0]?.();
    assert.equal(storage.durableState().entries.length, 2);
  });

  test('without a deferral, sync calls back at once', () => {
    const storage = new MemoryRaftStorage();
    let called = false;
    storage.sync(() => (called = true));
    assert.ok(called);
  });
});
