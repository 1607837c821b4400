/**
 * The Storage port's compliance suite: what every implementation (FileStorage on a real
 * directory, SimStorage in the simulator) must do while the process lives. Crash behaviour is
 * tested where it can be observed (storage-sim.test.ts, and the kill -9 test for real files).
 * Method: the same scenarios run against a fresh storage made by the caller's factory; callbacks
 * are awaited through the caller's `runUntil`, which turns the simulator's scheduler or waits
 * for the real event loop.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { Storage } from '../../src/ports/storage.js';

export interface StorageUnderTest {
  readonly storage: Storage;
  /** Lets time pass (sim: scheduler steps; real: event-loop turns) until `done()` holds. */
  readonly runUntil: (done: () => boolean) => Promise<void>;
  readonly dispose: () => void;
}

const bytesOf = (text: string): Uint8Array => new TextEncoder().encode(text);
const textOf = (bytes: Uint8Array | undefined): string | undefined =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);

export function runStorageCompliance(name: string, make: () => StorageUnderTest): void {
  describe(`storage compliance: ${name}`, () => {
    let subject: StorageUnderTest | undefined;
    const fresh = (): StorageUnderTest => (subject = make());
    afterEach(() => {
      subject?.dispose();
      subject = undefined;
    });

    /** Calls `start` with a callback and waits for it; checks it never runs synchronously. */
    const completion = async (
      s: StorageUnderTest,
      start: (done: (error?: Error) => void) => void,
    ): Promise<Error | undefined> => {
      let calls = 0;
      let result: Error | undefined;
      let returned = false;
      start((error) => {
        assert.ok(returned, 'the callback ran before the call returned');
        calls++;
        result = error;
      });
      returned = true;
      await s.runUntil(() => calls > 0);
      assert.equal(calls, 1);
      return result;
    };

    test('a new storage lists no files and reads undefined', () => {
      const { storage } = fresh();
      assert.deepEqual(storage.list(), []);
      assert.equal(storage.read('missing'), undefined);
    });

    test('append creates the file and later appends add to its end', () => {
      const { storage } = fresh();
      storage.append('a.log', bytesOf('hello '));
      storage.append('a.log', bytesOf('world'));
      assert.equal(textOf(storage.read('a.log')), 'hello world');
      assert.deepEqual(storage.list(), ['a.log']);
    });

    test('an empty append creates an empty file', () => {
      const { storage } = fresh();
      storage.append('empty', new Uint8Array(0));
      assert.deepEqual(storage.list(), ['empty']);
      assert.equal(storage.read('empty')?.length, 0);
    });

    test('every byte value and a large append read back exactly', () => {
      const { storage } = fresh();
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      const large = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 31) & 0xff);
      storage.append('bin', all);
      storage.append('bin', large);
      const read = storage.read('bin');
      assert.ok(read !== undefined);
      assert.equal(read.length, 256 + (1 << 20));
      assert.deepEqual(read.subarray(0, 256), all);
      assert.deepEqual(read.subarray(256), large);
    });

    test('read returns a copy: changing it leaves the file alone', () => {
      const { storage } = fresh();
      storage.append('f', bytesOf('abc'));
      const first = storage.read('f');
      assert.ok(first !== undefined);
      first[0] = 0x7a;
      assert.equal(textOf(storage.read('f')), 'abc');
    });

    test('append copies: changing the caller\'s array later leaves the file alone', () => {
      const { storage } = fresh();
      const bytes = bytesOf('abc');
      storage.append('f', bytes);
      bytes[0] = 0x7a;
      assert.equal(textOf(storage.read('f')), 'abc');
    });

    test('list returns every file, sorted', () => {
      const { storage } = fresh();
      for (const n of ['wal-0000000010.log', 'b', 'wal-0000000002.log', 'a', 'Z']) {
        storage.append(n, bytesOf(n));
      }
      assert.deepEqual(storage.list(),
        ['Z', 'a', 'b', 'wal-0000000002.log', 'wal-0000000010.log']);
    });

    test('truncate cuts the file, and appends continue at the new end', () => {
      const { storage } = fresh();
      storage.append('t', bytesOf('0123456789'));
      storage.truncate('t', 4);
      assert.equal(textOf(storage.read('t')), '0123');
      storage.append('t', bytesOf('xy'));
      assert.equal(textOf(storage.read('t')), '0123xy');
      storage.truncate('t', 0);
      assert.equal(storage.read('t')?.length, 0);
      assert.deepEqual(storage.list(), ['t']);
    });

    test('remove deletes the file; removing a missing file does nothing', () => {
      const { storage } = fresh();
      storage.append('r', bytesOf('x'));
      storage.append('keep', bytesOf('y'));
      storage.remove('r');
      storage.remove('never-existed');
      assert.deepEqual(storage.list(), ['keep']);
      assert.equal(storage.read('r'), undefined);
      storage.append('r', bytesOf('new'));
      assert.equal(textOf(storage.read('r')), 'new');
    });

    test('rename moves the contents and replaces the target', () => {
      const { storage } = fresh();
      storage.append('tmp', bytesOf('fresh'));
      storage.append('current', bytesOf('stale'));
      storage.rename('tmp', 'current');
      assert.deepEqual(storage.list(), ['current']);
      assert.equal(textOf(storage.read('current')), 'fresh');
      storage.append('current', bytesOf('+'));
      assert.equal(textOf(storage.read('current')), 'fresh+');
      storage.append('tmp', bytesOf('again'));
      assert.equal(textOf(storage.read('tmp')), 'again');
    });

    test('sync calls back once, later, without an error', async () => {
      const s = fresh();
      s.storage.append('s', bytesOf('data'));
      assert.equal(await completion(s, (done) => s.storage.sync('s', done)), undefined);
      assert.equal(textOf(s.storage.read('s')), 'data');
    });

    test('sync of a file that does not exist calls back without an error', async () => {
      const s = fresh();
      assert.equal(await completion(s, (done) => s.storage.sync('nothing', done)), undefined);
      assert.deepEqual(s.storage.list(), []);
    });

    test('syncs of several files in flight at once all call back', async () => {
      const s = fresh();
      let calls = 0;
      for (const n of ['x', 'y', 'z']) {
        s.storage.append(n, bytesOf(n));
        s.storage.sync(n, (error) => {
          assert.equal(error, undefined);
          calls++;
        });
      }
      s.storage.syncDir((error) => {
        assert.equal(error, undefined);
        calls++;
      });
      await s.runUntil(() => calls === 4);
    });

    test('syncDir calls back once, later, without an error', async () => {
      const s = fresh();
      s.storage.append('d', bytesOf('x'));
      s.storage.rename('d', 'e');
      assert.equal(await completion(s, (done) => s.storage.syncDir(done)), undefined);
      assert.deepEqual(s.storage.list(), ['e']);
    });

    test('a file removed while its sync is in flight: the sync still calls back', async () => {
      const s = fresh();
      s.storage.append('gone', bytesOf('x'));
      let calls = 0;
      s.storage.sync('gone', () => calls++);
      s.storage.remove('gone');
      await s.runUntil(() => calls === 1);
      assert.equal(s.storage.read('gone'), undefined);
    });
  });
}
