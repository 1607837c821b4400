/**
 * storage compliance: FileStorage. Goal: the real adapter keeps the Storage contract.
 * Method: the shared suite, each test on a fresh directory under os.tmpdir(), removed after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStorage } from '../../src/adapters/file-storage.js';
import { runStorageCompliance } from './storage.suite.js';

const WAIT_MS_MAX = 10_000;

runStorageCompliance('FileStorage', () => {
  const directory = mkdtempSync(join(tmpdir(), 'conclave-storage-'));
  const storage = new FileStorage(join(directory, 'data'));
  return {
    storage,
    runUntil: async (done) => {
      const deadline = Date.now() + WAIT_MS_MAX;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`no callback within ${WAIT_MS_MAX} ms`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    dispose: () => {
      storage.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
});
