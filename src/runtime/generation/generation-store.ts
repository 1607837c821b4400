/**
 * Persists a generation clock through the Storage port, crash-safely: the new value is written
 * to a temporary file, synced, renamed over the real one, and the directory is synced; only then
 * is the caller told the generation is durable (and may be used).
 */
import { assert } from '../../core/assert.js';
import { isValidGeneration } from '../../core/generation/generation-clock.js';
import {
  decodeGenerationRecord,
  encodeGenerationRecord,
} from '../../core/generation/generation-record.js';
import type { Storage } from '../../ports/storage.js';

/** Default name of the file holding the generation. */
export const GENERATION_FILE_NAME = 'generation';

/** The temporary file a save writes before renaming it over `fileName`. */
export function generationTmpFileName(fileName: string): string {
  return `${fileName}.tmp`;
}

/** What `loadGeneration` found. */
export type GenerationLoadResult =
  | {
    readonly kind: 'loaded';
    /** The highest durable generation; 0 on a fresh node. */
    readonly generation: number;
    /** The file it came from; undefined when there was none (a fresh node). */
    readonly fileName: string | undefined;
    /** Why a leftover temporary file was ignored (a torn write cut by a crash), if it was. */
    readonly ignoredTmpReason: string | undefined;
  }
  | {
    readonly kind: 'corrupt';
    /** The file that cannot be read. */
    readonly fileName: string;
    readonly reason: string;
    /** One line for an operator: what is wrong and what to do. */
    readonly message: string;
  };

/**
 * Reads the highest durable generation from `storage`.
 *
 * A crash can leave the state of any step of a save on disk, so both files are read and the
 * larger valid value wins: the temporary file may hold a newer, fully synced generation whose
 * rename was lost, or a torn or empty write (ignored: a save that never completed promised
 * nothing). The main file is only ever replaced by a synced temporary file, so if it does not
 * decode, that is real corruption and the result is `corrupt`: the node must not start, since
 * it might reuse a generation it already used.
 */
export function loadGeneration(
  storage: Storage,
  fileName: string = GENERATION_FILE_NAME,
): GenerationLoadResult {
  let generation = 0;
  let source: string | undefined;
  const main = storage.read(fileName);
  if (main !== undefined) {
    const decoded = decodeGenerationRecord(main);
    if (decoded.kind === 'corrupt') {
      return {
        kind: 'corrupt',
        fileName,
        reason: decoded.reason,
        message: `generation file '${fileName}' is corrupt (${decoded.reason}); refusing to `
          + 'start, since this node could reuse a generation it already used. Restore the file '
          + 'or replace this member with a fresh one.',
      };
    }
    generation = decoded.generation;
    source = fileName;
  }
  const tmpName = generationTmpFileName(fileName);
  const tmp = storage.read(tmpName);
  let ignoredTmpReason: string | undefined;
  if (tmp !== undefined) {
    const decoded = decodeGenerationRecord(tmp);
    if (decoded.kind === 'corrupt') {
      ignoredTmpReason = decoded.reason;
    } else if (decoded.generation > generation) {
      generation = decoded.generation;
      source = tmpName;
    }
  }
  return { kind: 'loaded', generation, fileName: source, ignoredTmpReason };
}

interface SaveWaiter {
  readonly generation: number;
  readonly done: (error?: Error) => void;
}

/**
 * Saves generations one write at a time. Saves requested while a write is in flight are
 * coalesced: the next write carries the highest generation asked for, and completes every save
 * at or below it (group commit). `done` is called once the generation is durable, with an
 * error if the storage failed; after a failure every save fails with that error, at once
 * (the Storage port's rule: stop using a storage whose sync failed).
 *
 * Only one store may write a given file at a time; its initial `durableGeneration` is the value
 * `loadGeneration` returned.
 */
export class GenerationStore {
  private durableValue: number;
  private requestedValue: number;
  private writing: number | undefined;
  private waiters: SaveWaiter[] = [];
  private failure: Error | undefined;

  constructor(
    private readonly storage: Storage,
    durableGeneration: number,
    readonly fileName: string = GENERATION_FILE_NAME,
  ) {
    assert(isValidGeneration(durableGeneration),
      () => `durable generation must be a safe integer >= 0: ${String(durableGeneration)}`);
    this.durableValue = durableGeneration;
    this.requestedValue = durableGeneration;
  }

  /** The highest generation known to be durable. */
  get durable(): number {
    return this.durableValue;
  }

  /** The highest generation a save was requested for. */
  get requested(): number {
    return this.requestedValue;
  }

  /** True while a write is in flight. */
  get saving(): boolean {
    return this.writing !== undefined;
  }

  /** Makes `generation` durable, then calls `done`. Generations saved must not decrease. */
  save(generation: number, done: (error?: Error) => void): void {
    assert(isValidGeneration(generation),
      () => `generation must be a safe integer >= 0: ${String(generation)}`);
    assert(generation >= this.requestedValue,
      () => `generation saves must not decrease: ${generation} < ${this.requestedValue}`);
    if (this.failure !== undefined) {
      done(this.failure);
      return;
    }
    this.requestedValue = generation;
    this.waiters.push({ generation, done });
    if (this.writing === undefined) this.write(generation);
  }

  private write(generation: number): void {
    const tmpName = generationTmpFileName(this.fileName);
    this.writing = generation;
    // A leftover from a crashed save would be appended to otherwise.
    this.storage.remove(tmpName);
    this.storage.append(tmpName, encodeGenerationRecord(generation));
    this.storage.sync(tmpName, (syncError) => {
      if (syncError !== undefined) {
        this.fail(syncError);
        return;
      }
      this.storage.rename(tmpName, this.fileName);
      this.storage.syncDir((dirError) => {
        if (dirError !== undefined) this.fail(dirError);
        else this.written(generation);
      });
    });
  }

  private written(generation: number): void {
    assert(generation >= this.durableValue,
      () => `durable generation went backwards: ${this.durableValue} -> ${generation}`);
    this.durableValue = generation;
    this.writing = undefined;
    const satisfied = this.waiters.filter((w) => w.generation <= generation);
    this.waiters = this.waiters.filter((w) => w.generation > generation);
    // Start the next write before the callbacks, so a callback that saves again joins it.
    if (this.requestedValue > generation) this.write(this.requestedValue);
    for (const waiter of satisfied) waiter.done();
  }

  private fail(error: Error): void {
    this.failure = error;
    this.writing = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.done(error);
  }
}
