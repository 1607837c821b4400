/**
 * A node's disk in memory, with crash semantics (the Storage port's contract, and no more):
 * on `crash()`, each file keeps what its last completed sync covered, plus a random prefix of
 * the bytes appended after it (possibly none, possibly cutting a record: a torn write);
 * creates, removes and renames not covered by a completed `syncDir` are undone.
 */
import { assert } from '../core/assert.js';
import { randomChance, randomInt } from '../core/random.js';
import type { Storage } from '../ports/storage.js';
import type { Prng } from './prng.js';
import type { Scheduler } from './scheduler.js';

interface SimFile {
  readonly id: number;
  data: Uint8Array;
  length: number;
  /** Contents as of the last completed sync. */
  durable: Uint8Array;
}

export interface SimStorageOptions {
  /** Time an fsync takes. Unit: ms. */
  readonly syncLatencyMs: number;
  /** On a crash, probability that unsynced appended bytes survive at all (as a prefix). */
  readonly unsyncedSurvivalRate: number;
}

export const SIM_STORAGE_DEFAULTS: SimStorageOptions = Object.freeze({
  syncLatencyMs: 0.15,
  unsyncedSurvivalRate: 0.5,
});

export class SimStorage implements Storage {
  private files = new Map<string, SimFile>();
  /** The directory as of the last completed syncDir: name → file id. */
  private durableDirectory = new Map<string, number>();
  private filesById = new Map<number, SimFile>();
  private fileIdNext = 1;
  /** Bumped on crash so that syncs in flight complete as no-ops. */
  private life = 0;
  syncs = 0;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly prng: Prng,
    private readonly options: SimStorageOptions = SIM_STORAGE_DEFAULTS,
  ) {}

  list(): readonly string[] {
    return [...this.files.keys()].sort();
  }

  read(name: string): Uint8Array | undefined {
    const file = this.files.get(name);
    return file === undefined ? undefined : file.data.slice(0, file.length);
  }

  append(name: string, bytes: Uint8Array): void {
    let file = this.files.get(name);
    if (file === undefined) {
      file = { id: this.fileIdNext++, data: new Uint8Array(64), length: 0, durable: new Uint8Array(0) };
      this.files.set(name, file);
      this.filesById.set(file.id, file);
    }
    if (file.length + bytes.length > file.data.length) {
      const grown = new Uint8Array(Math.max(file.data.length * 2, file.length + bytes.length));
      grown.set(file.data.subarray(0, file.length));
      file.data = grown;
    }
    file.data.set(bytes, file.length);
    file.length += bytes.length;
  }

  truncate(name: string, sizeBytes: number): void {
    const file = this.files.get(name);
    assert(file !== undefined, () => `truncate: no file ${name}`);
    assert(sizeBytes >= 0 && sizeBytes <= file.length,
      () => `truncate ${name} to ${sizeBytes}: size is ${file.length}`);
    file.length = sizeBytes;
  }

  remove(name: string): void {
    this.files.delete(name);
  }

  rename(from: string, to: string): void {
    const file = this.files.get(from);
    assert(file !== undefined, () => `rename: no file ${from}`);
    this.files.delete(from);
    this.files.set(to, file);
  }

  sync(name: string, done: (error?: Error) => void): void {
    const file = this.files.get(name);
    const life = this.life;
    const snapshot = file === undefined ? undefined : file.data.slice(0, file.length);
    this.syncs++;
    this.scheduler.schedule(this.options.syncLatencyMs, () => {
      if (life !== this.life) return;
      if (file !== undefined && snapshot !== undefined) file.durable = snapshot;
      done();
    });
  }

  syncDir(done: (error?: Error) => void): void {
    const life = this.life;
    const snapshot = new Map([...this.files].map(([name, file]) => [name, file.id]));
    this.scheduler.schedule(this.options.syncLatencyMs, () => {
      if (life !== this.life) return;
      this.durableDirectory = snapshot;
      done();
    });
  }

  /**
   * The process (or machine) died: unsynced data is lost or torn, and syncs in flight never
   * complete. The storage is usable again at once, as after a restart.
   */
  crash(): { tornFiles: number } {
    this.life++;
    let tornFiles = 0;
    const files = new Map<string, SimFile>();
    for (const [name, id] of this.durableDirectory) {
      const file = this.filesById.get(id);
      if (file === undefined) continue;
      const survived = this.survivingBytes(file);
      if (survived.length !== file.durable.length) tornFiles++;
      file.data = survived.slice();
      file.length = survived.length;
      files.set(name, file);
    }
    // Files never covered by a syncDir vanish with the crash.
    this.files = files;
    this.filesById = new Map([...files.values()].map((f) => [f.id, f]));
    return { tornFiles };
  }

  private survivingBytes(file: SimFile): Uint8Array {
    const current = file.data.subarray(0, file.length);
    const durable = file.durable;
    const extendsDurable = current.length > durable.length && startsWith(current, durable);
    if (!extendsDurable || !randomChance(this.prng, this.options.unsyncedSurvivalRate)) {
      return durable;
    }
    const extra = randomInt(this.prng, 1, current.length - durable.length + 1);
    return current.subarray(0, durable.length + extra);
  }
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length > data.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}
