/**
 * adapters: data dir. Goal: a new data dir (and its parents) is created 0700 and files 0600;
 * a dir group or others can enter is refused naming the chmod, unless insecure; a path that is
 * a file is refused. Method: real directories under the OS temp dir.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openDataDir } from '../../src/adapters/data-dir.js';
import { CoordError } from '../../src/errors.js';

const scratch = mkdtempSync(join(tmpdir(), 'conclave-data-dir-unit-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('adapters: data dir', () => {
  test('created private with its parents; files 0600; subfolders too', async () => {
    const directory = join(scratch, 'a', 'b', 'n1');
    const dir = openDataDir(directory, { insecure: false });
    assert.equal(dir.created, true);
    for (const path of [join(scratch, 'a'), join(scratch, 'a', 'b'), directory]) {
      assert.equal(mode(path), 0o700, path);
    }
    dir.root.append('f', new Uint8Array([1]));
    await new Promise<void>((resolve, reject) =>
      dir.root.sync('f', (e) => (e === undefined ? resolve() : reject(e))));
    assert.equal(mode(join(directory, 'f')), 0o600);
    const wal = dir.subdirectory('wal');
    assert.equal(mode(join(directory, 'wal')), 0o700);
    wal.close();
    dir.root.close();
    const again = openDataDir(directory, { insecure: false });
    assert.equal(again.created, false);
    again.root.close();
  });

  test('a dir group or others can enter is refused with the chmod; insecure accepts it', () => {
    const directory = join(scratch, 'open');
    mkdirSync(directory, { mode: 0o755 });
    chmodSync(directory, 0o750);
    assert.throws(() => openDataDir(directory, { insecure: false }), (error: unknown) => {
      assert.ok(error instanceof CoordError);
      assert.equal(error.code, 'CONCLAVE_DATA_DIR_INSECURE');
      assert.match(error.message, new RegExp(`mode 0750: .*run \`chmod 700 ${directory}\``));
      return true;
    });
    openDataDir(directory, { insecure: true }).root.close();
    chmodSync(directory, 0o700);
    mkdirSync(join(directory, 'wal'), { mode: 0o700 });
    chmodSync(join(directory, 'wal'), 0o701);
    const dir = openDataDir(directory, { insecure: false });
    assert.throws(() => dir.subdirectory('wal'), /wal has mode 0701/);
    dir.root.close();
  });

  test('a path that is a file is refused', () => {
    const file = join(scratch, 'file');
    writeFileSync(file, 'x');
    assert.throws(() => openDataDir(file, { insecure: false }), /ENOTDIR/);
  });
});
