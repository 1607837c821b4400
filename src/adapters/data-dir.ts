/**
 * A member's data directory on disk: created private to its user (0700; FileStorage creates
 * files 0600), refused when it is more open than that (unless the operator insists), and
 * opened as Storage directories: the root, which holds the member's identity file, `wal/`,
 * which holds the write-ahead log (segments, manifest), and `snap/`, its snapshot files.
 *
 * ```
 * DATA_DIR/          0700
 *   member.id        0600   identity: cluster id, member, format (src/server/member-identity.ts)
 *   wal/             0700   segments wal-*.log, wal-manifest
 *   snap/            0700   snapshot files (etcd's layout)
 * ```
 * Each folder is checked by `checkPrivate` and opened with `subdirectory`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CoordError } from '../errors.js';
import { FileStorage, StorageError } from './file-storage.js';

export const WAL_SUBDIRECTORY = 'wal';
export const SNAP_SUBDIRECTORY = 'snap';

export interface DataDirOptions {
  /** Accept a data dir that group or others may read or enter. Default: false. */
  readonly insecure: boolean;
}

/** The data dir, created if missing and checked private, with its root opened as Storage. */
export interface DataDir {
  readonly directory: string;
  /** The root: the identity file (plain files only; subfolders are not listed). */
  readonly root: FileStorage;
  /** Whether this call created the directory. */
  readonly created: boolean;
  /** A subfolder (created private if missing, checked) opened as Storage. */
  subdirectory(name: string): FileStorage;
}

/**
 * Creates `directory` (0700, durably) if missing, checks that it is a directory that only its
 * owner can reach, and opens it. Throws CoordError CONCLAVE_DATA_DIR_INSECURE naming the chmod
 * to run, or a StorageError (EACCES, ENOTDIR, ENOSPC, ...) naming the path.
 */
export function openDataDir(directory: string, options: DataDirOptions): DataDir {
  const resolved = path.resolve(directory);
  const created = !exists(resolved);
  const root = new FileStorage(resolved);
  try {
    checkPrivate(resolved, options);
  } catch (error) {
    root.close();
    throw error;
  }
  return {
    directory: resolved, root, created,
    subdirectory: (name) => {
      const sub = new FileStorage(path.join(resolved, name));
      try {
        checkPrivate(sub.directory, options);
      } catch (error) {
        sub.close();
        throw error;
      }
      return sub;
    },
  };
}

/**
 * Refuses a directory whose mode lets group or others in (any of the 077 bits), as etcd does,
 * unless `insecure`; the message says the chmod that fixes it.
 */
export function checkPrivate(directory: string, options: DataDirOptions): void {
  let stats: fs.Stats;
  try {
    stats = fs.statSync(directory);
  } catch (error) {
    throw StorageError.from('open', directory, error);
  }
  if (!stats.isDirectory()) {
    throw new StorageError('open', directory, 'ENOTDIR');
  }
  const mode = stats.mode & 0o777;
  if ((mode & 0o077) !== 0 && !options.insecure) {
    throw new CoordError('CONCLAVE_DATA_DIR_INSECURE', `data dir ${directory} has mode ` +
      `0${mode.toString(8)}: group or others may read it (it holds every value written); ` +
      `run \`chmod 700 ${directory}\`, or pass --insecure to accept it`);
  }
}

function exists(directory: string): boolean {
  try {
    fs.statSync(directory);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw StorageError.from('open', directory, error);
  }
}

/** Whether `directory` is missing or holds nothing (a restore seeds only such a dir). */
export function dataDirIsEmpty(directory: string): boolean {
  const resolved = path.resolve(directory);
  if (!exists(resolved)) return true;
  try {
    return fs.readdirSync(resolved).length === 0;
  } catch (error) {
    throw StorageError.from('open', resolved, error);
  }
}
