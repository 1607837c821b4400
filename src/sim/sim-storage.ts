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
  /**
   * Contents as of the last completed sync: the first `durableLength` bytes of `data`, unless a
   * truncate cut into them since, in which case `durableCopy` holds them (copied once, lazily:
   * copying on every sync made long simulations quadratic).
   */
  durableLength: number;
  durableCopy: Uint8Array | undefined;
  /** Syncs in flight: the length each will make durable, and a copy if a truncate cut into it. */
  inflightSyncs: { length: number; copy: Uint8Array | undefined }[];
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
      file = {
        id: this.fileIdNext++, data: new Uint8Array(64), length: 0,
        durableLength: 0, durableCopy: undefined, inflightSyncs: [],
      };
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
    // Bytes a completed or pending sync covers must outlive the cut, as on a real disk.
    if (file.durableCopy === undefined && sizeBytes < file.durableLength) {
      file.durableCopy = file.data.slice(0, file.durableLength);
    }
    for (const pending of file.inflightSyncs) {
      if (pending.copy === undefined && sizeBytes < pending.length) {
        pending.copy = file.data.slice(0, pending.length);
      }
    }
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
    const pending = { length: file?.length ?? 0, copy: undefined as Uint8Array | undefined };
    file?.inflightSyncs.push(pending);
    this.syncs++;
    this.scheduler.schedule(this.options.syncLatencyMs, () => {
      if (life !== this.life) return;
      if (file !== undefined) {
        file.inflightSyncs.splice(file.inflightSyncs.indexOf(pending), 1);
        file.durableLength = pending.length;
        file.durableCopy = pending.copy;
      }
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
      const durableLength = file.durableCopy?.length ?? file.durableLength;
      const survived = this.survivingBytes(file);
      if (survived.length !== durableLength) tornFiles++;
      file.data = survived.slice();
      file.length = survived.length;
      // Bytes that survived a process crash sit in the page cache, still not durable: a second
      // crash (power loss) before the next sync may lose them again.
      file.durableLength = Math.min(durableLength, survived.length);
      file.durableCopy = undefined;
      file.inflightSyncs = [];
      files.set(name, file);
    }
    // Files never covered by a syncDir vanish with the crash.
    this.files = files;
    this.filesById = new Map([...files.values()].map((f) => [f.id, f]));
    return { tornFiles };
  }

  private survivingBytes(file: SimFile): Uint8Array {
    const current = file.data.subarray(0, file.length);
    if (file.durableCopy !== undefined) return file.durableCopy;
    // No truncate cut into the durable bytes: they are a prefix of the current contents.
    const durableLength = file.durableLength;
    if (current.length <= durableLength || !randomChance(this.prng, this.options.unsyncedSurvivalRate)) {
      return current.subarray(0, Math.min(durableLength, current.length));
    }
    const extra = randomInt(this.prng, 1, current.length - durableLength + 1);
    return current.subarray(0, durableLength + extra);
  }
}
