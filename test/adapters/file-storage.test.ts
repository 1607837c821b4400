/**
 * adapters: FileStorage, beyond the shared compliance suite. Goal: the directory is created when
 * missing, failures surface as StorageErrors carrying the operation, path and errno, misuse is an
 * assertion, data written by an earlier instance (an earlier process) is read and synced, and
 * close() releases the file descriptors. Method: real temporary directories.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FileStorage, StorageError } from '../../src/adapters/file-storage.js';
import { AssertionError } from '../../src/core/assert.js';

const scratch = mkdtempSync(join(tmpdir(), 'conclave-file-storage-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const freshPath = (): string => join(scratch, `d${++dirs}`);

const syncOf = (storage: FileStorage, name: string): Promise<Error | undefined> =>
  new Promise((resolve) => storage.sync(name, resolve));

const openDescriptors = (): number => readdirSync('/proc/self/fd').length;
/** Counting descriptors needs Linux's /proc. */
const NO_PROC = { skip: !existsSync('/proc/self/fd') };

describe('adapters: FileStorage', () => {
  test('creates the directory and its parents when missing', () => {
    const directory = join(freshPath(), 'a', 'b');
    const storage = new FileStorage(directory);
    assert.ok(existsSync(directory));
    assert.deepEqual(storage.list(), []);
    storage.close();
  });

  test('lists files only, not subdirectories', () => {
    const directory = freshPath();
    const storage = new FileStorage(directory);
    mkdirSync(join(directory, 'sub'));
    storage.append('f', Uint8Array.of(1));
    assert.deepEqual(storage.list(), ['f']);
    storage.close();
  });

  test('a failure is a StorageError with the operation, the path and the errno', () => {
    const directory = freshPath();
    const storage = new FileStorage(directory);
    mkdirSync(join(directory, 'dir'));
    const error = (() => {
      try {
        storage.read('dir');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    assert.ok(error instanceof StorageError);
    assert.equal(error.code, 'CONCLAVE_STORAGE_IO');
    assert.equal(error.operation, 'read');
    assert.equal(error.errno, 'EISDIR');
    assert.equal(error.path, join(directory, 'dir'));
    assert.match(error.message, /storage read failed on .*dir: EISDIR/);
    assert.throws(() => storage.append('dir', Uint8Array.of(1)),
      (e: unknown) => e instanceof StorageError && e.operation === 'open' && e.errno === 'EISDIR');
    rmSync(directory, { recursive: true });
    assert.throws(() => storage.list(),
      (e: unknown) => e instanceof StorageError && e.errno === 'ENOENT');
    storage.close();
  });

  test('a failed directory sync reaches the callback as a StorageError', async () => {
    const directory = freshPath();
    const storage = new FileStorage(directory);
    rmSync(directory, { recursive: true });
    const error = await new Promise<Error | undefined>((resolve) => storage.syncDir(resolve));
    assert.ok(error instanceof StorageError && error.errno === 'ENOENT');
    storage.close();
  });

  test('names that are not plain file names, and use after close, are assertions', () => {
    const storage = new FileStorage(freshPath());
    for (const name of ['', '.', '..', 'a/b', '../escape', 'nul\0']) {
      assert.throws(() => storage.append(name, Uint8Array.of(1)), AssertionError, name);
    }
    storage.append('t', Uint8Array.of(1, 2));
    assert.throws(() => storage.truncate('t', 3), AssertionError);
    storage.close();
    assert.throws(() => storage.read('t'), AssertionError);
  });

  test('a file written before (by another instance) is read, synced and appended to', async () => {
    const directory = freshPath();
    mkdirSync(directory);
    writeFileSync(join(directory, 'old'), Uint8Array.of(1, 2));
    const storage = new FileStorage(directory);
    assert.equal(await syncOf(storage, 'old'), undefined);
    storage.append('old', Uint8Array.of(3));
    assert.deepEqual(storage.read('old'), Uint8Array.of(1, 2, 3));
    storage.close();
  });

  test('close releases every descriptor, waiting for syncs in flight', NO_PROC, async () => {
    const storage = new FileStorage(freshPath());
    const before = openDescriptors();
    for (const name of ['a', 'b', 'c']) storage.append(name, Uint8Array.of(1));
    assert.equal(openDescriptors(), before + 3);
    const pending = syncOf(storage, 'a');
    storage.close();
    assert.equal(await pending, undefined);
    assert.equal(openDescriptors(), before);
  });

  test('rename and remove release the descriptors of the files they touch', NO_PROC, () => {
    const storage = new FileStorage(freshPath());
    const before = openDescriptors();
    storage.append('a', Uint8Array.of(1));
    storage.append('b', Uint8Array.of(2));
    storage.rename('a', 'b');
    assert.equal(openDescriptors(), before);
    storage.append('b', Uint8Array.of(3));
    storage.remove('b');
    assert.equal(openDescriptors(), before);
    storage.close();
  });
});
