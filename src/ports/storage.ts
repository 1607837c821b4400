/**
 * Durable bytes: a flat directory of append-only files, as a write-ahead log needs them.
 *
 * What survives a crash (process kill or power loss), which every implementation and the
 * compliance suite hold to:
 * - Bytes appended to a file and covered by a completed `sync` of that file survive.
 * - Bytes appended after the last completed `sync` may be lost entirely, or only a prefix of
 *   them may survive (a torn write); the surviving prefix may end in the middle of a record.
 *   Nothing survives out of order: a later byte never survives when an earlier one is lost.
 * - `create`, `remove` and `rename` survive only after a completed `syncDir`.
 * - `truncate` survives after a completed `sync` of that file.
 * Readers never see a torn state while the process lives: `read` returns everything appended.
 *
 * Failures of the device are reported as `Error`s to the `sync` callback; the caller must stop
 * using the storage (a WAL cannot know what reached the disk after a failed sync).
 */
export interface Storage {
  /** Names of the files present, sorted. */
  list(): readonly string[];
  /** The file's contents, or undefined when it does not exist. */
  read(name: string): Uint8Array | undefined;
  /** Appends bytes to the file, creating it when missing. Not durable until `sync`. */
  append(name: string, bytes: Uint8Array): void;
  /** Cuts the file to `sizeBytes` (which must not exceed its size). Durable after `sync`. */
  truncate(name: string, sizeBytes: number): void;
  /** Deletes the file if present. Durable after `syncDir`. */
  remove(name: string): void;
  /** Atomically replaces `to` with `from`. Durable after `syncDir`. */
  rename(from: string, to: string): void;
  /** Makes the file's appended bytes durable, then calls `done` (with an error on failure). */
  sync(name: string, done: (error?: Error) => void): void;
  /** Makes creates, removes and renames durable, then calls `done`. */
  syncDir(done: (error?: Error) => void): void;
}
