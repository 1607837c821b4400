/**
 * The Storage port over a real directory (node:fs). Appends go through cached file descriptors
 * into the page cache (`writeSync`); `sync` is `fdatasync` on the file, `syncDir` is `fsync` on
 * the directory, both asynchronous so the event loop keeps running while the disk works.
 *
 * The directory is created if missing (with its parents), private to this user (mode 0700, as
 * etcd does), and the creation is made durable by syncing its parent directory. Files are
 * created 0600: a log holds every value written, so nobody else may read it. Names are plain
 * file names inside it (no `/`, not `.` or `..`).
 * Failures are thrown (or passed to the sync callback) as `StorageError`s carrying the operation,
 * the path and the system error code (`ENOSPC`, `EIO`, ...).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assert } from '../core/assert.js';
import type { Storage } from '../ports/storage.js';

/** Mode of the directories this creates: owner only. */
export const DIRECTORY_MODE = 0o700;
/** Mode of the files this creates: owner read and write only. */
export const FILE_MODE = 0o600;

export type StorageOperation =
  | 'open' | 'list' | 'read' | 'append' | 'truncate' | 'remove' | 'rename' | 'sync' | 'syncDir'
  | 'mkdir' | 'close';

/** An I/O failure of the storage directory: which operation, on which path, and why. */
export class StorageError extends Error {
  override readonly name = 'StorageError';
  readonly code = 'CONCLAVE_STORAGE_IO';
  constructor(
    readonly operation: StorageOperation,
    readonly path: string,
    /** The system error code, for example `ENOSPC`, or `UNKNOWN`. */
    readonly errno: string,
    options?: { cause?: unknown },
  ) {
    super(`storage ${operation} failed on ${path}: ${errno}`, options);
  }

  static from(operation: StorageOperation, filePath: string, cause: unknown): StorageError {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code ?? 'UNKNOWN';
    const message = cause instanceof Error ? cause.message : String(cause);
    const error = new StorageError(operation, filePath, errno, { cause });
    error.message = `${error.message} (${message})`;
    return error;
  }
}

interface OpenFile {
  readonly fd: number;
  /** Syncs running on this descriptor; it is closed only when none is left. */
  syncsInFlight: number;
  closeWhenIdle: boolean;
}

export class FileStorage implements Storage {
  readonly directory: string;
  private readonly files = new Map<string, OpenFile>();
  private closed = false;

  /** Opens (creating if missing) the storage directory `directory`. */
  constructor(directory: string) {
    this.directory = path.resolve(directory);
    if (!fs.existsSync(this.directory)) createDurably(this.directory);
  }

  list(): readonly string[] {
    this.checkOpen();
    try {
      return fs.readdirSync(this.directory, { withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name)
        .sort();
    } catch (error) {
      throw StorageError.from('list', this.directory, error);
    }
  }

  read(name: string): Uint8Array | undefined {
    const filePath = this.pathOf(name);
    try {
      const buffer = fs.readFileSync(filePath);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw StorageError.from('read', filePath, error);
    }
  }

  append(name: string, bytes: Uint8Array): void {
    const file = this.openForAppend(name);
    try {
      let written = 0;
      while (written < bytes.length) {
        written += fs.writeSync(file.fd, bytes, written, bytes.length - written);
      }
    } catch (error) {
      throw StorageError.from('append', this.pathOf(name), error);
    }
  }

  truncate(name: string, sizeBytes: number): void {
    const filePath = this.pathOf(name);
    const file = this.openForAppend(name);
    let sizeBefore: number;
    try {
      sizeBefore = fs.fstatSync(file.fd).size;
    } catch (error) {
      throw StorageError.from('truncate', filePath, error);
    }
    // As the port says: truncate cuts; it never grows a file (that would invent bytes).
    assert(Number.isSafeInteger(sizeBytes) && sizeBytes >= 0 && sizeBytes <= sizeBefore,
      () => `truncate ${name} to ${sizeBytes}: size is ${sizeBefore}`);
    try {
      fs.ftruncateSync(file.fd, sizeBytes);
    } catch (error) {
      throw StorageError.from('truncate', filePath, error);
    }
  }

  remove(name: string): void {
    const filePath = this.pathOf(name);
    this.release(name);
    try {
      fs.rmSync(filePath, { force: true });
    } catch (error) {
      throw StorageError.from('remove', filePath, error);
    }
  }

  rename(from: string, to: string): void {
    const fromPath = this.pathOf(from);
    const toPath = this.pathOf(to);
    this.release(from);
    this.release(to);
    try {
      fs.renameSync(fromPath, toPath);
    } catch (error) {
      throw StorageError.from('rename', fromPath, error);
    }
  }

  sync(name: string, done: (error?: Error) => void): void {
    this.checkOpen();
    let file = this.files.get(name);
    if (file === undefined) {
      // Not written through us since open: sync it anyway, so data from before a crash counts.
      if (!fs.existsSync(this.pathOf(name))) {
        process.nextTick(done);
        return;
      }
      file = this.openForAppend(name);
    }
    const syncing = file;
    syncing.syncsInFlight++;
    fs.fdatasync(syncing.fd, (error) => {
      syncing.syncsInFlight--;
      if (syncing.closeWhenIdle && syncing.syncsInFlight === 0) closeQuietly(syncing.fd);
      // The path is built only for an error: a sync runs for every batch the log writes.
      done(error === null ? undefined
        : StorageError.from('sync', path.join(this.directory, name), error));
    });
  }

  syncDir(done: (error?: Error) => void): void {
    this.checkOpen();
    syncDirectory(this.directory, done);
  }

  /** Releases every file descriptor (after the syncs in flight). The storage is unusable after. */
  close(): void {
    for (const name of [...this.files.keys()]) this.release(name);
    this.closed = true;
  }

  private openForAppend(name: string): OpenFile {
    const existing = this.files.get(name);
    if (existing !== undefined) return existing;
    const filePath = this.pathOf(name);
    try {
      const fd = fs.openSync(filePath, 'a', FILE_MODE);
      const file: OpenFile = { fd, syncsInFlight: 0, closeWhenIdle: false };
      this.files.set(name, file);
      return file;
    } catch (error) {
      throw StorageError.from('open', filePath, error);
    }
  }

  /** Forgets `name`'s descriptor, closing it once no sync uses it. */
  private release(name: string): void {
    const file = this.files.get(name);
    if (file === undefined) return;
    this.files.delete(name);
    if (file.syncsInFlight === 0) closeQuietly(file.fd);
    else file.closeWhenIdle = true;
  }

  private pathOf(name: string): string {
    this.checkOpen();
    assert(name.length > 0 && name !== '.' && name !== '..' && !/[/\\\0]/.test(name),
      () => `storage file name must be a plain name: ${JSON.stringify(name)}`);
    return path.join(this.directory, name);
  }

  private checkOpen(): void {
    assert(!this.closed, () => `FileStorage ${this.directory} used after close()`);
  }
}

function createDurably(directory: string): void {
  let first: string | undefined;
  try {
    first = fs.mkdirSync(directory, { recursive: true, mode: DIRECTORY_MODE });
  } catch (error) {
    throw StorageError.from('mkdir', directory, error);
  }
  // Each directory created survives a crash once its parent is synced: from the first one down.
  for (let created = directory; first !== undefined; created = path.dirname(created)) {
    syncDirectorySync(path.dirname(created));
    if (created === first) break;
  }
}

function syncDirectorySync(directory: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(directory, 'r');
    fs.fsyncSync(fd);
  } catch (error) {
    throw StorageError.from('syncDir', directory, error);
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
}

function syncDirectory(directory: string, done: (error?: Error) => void): void {
  fs.open(directory, 'r', (openError, fd) => {
    if (openError !== null) {
      done(StorageError.from('syncDir', directory, openError));
      return;
    }
    fs.fsync(fd, (syncError) => {
      closeQuietly(fd);
      done(syncError === null ? undefined : StorageError.from('syncDir', directory, syncError));
    });
  });
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Closing can only fail for a bad descriptor; the data's fate was decided by the last sync.
  }
}
