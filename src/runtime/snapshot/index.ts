/**
 * @packageDocumentation
 * Snapshot files (Raft §7): the state machine's state at some log index, stored beside the
 * write-ahead log's segments so that the log before it can be dropped.
 *
 * Invariants:
 * - Atomic: a snapshot is written as `<name>.tmp`, synced, renamed to `<name>`, and the
 *   directory synced before anyone relies on it; a crash leaves the whole file or none (a
 *   leftover `.tmp` is never read, and recovery removes it).
 * - Checked: every file carries a CRC-32C of its contents and its (index, term) in its name;
 *   a damaged file is reported and passed over, never trusted.
 * - `SnapshotRaftStorage` is what the runtime needs of a storage to compact and install; the
 *   `Wal` and `MemoryRaftStorage` implement it.
 *
 * Example (what the runtime does every `snapshotEntries` applied entries):
 * ```ts
 * const snapshot = node.createSnapshot(appliedIndex, stateMachine.snapshot());
 * wal.saveSnapshot(snapshot, (error) => {
 *   if (error !== undefined) return stop(error);
 *   node.compact(snapshot.meta.index - catchUpEntries); // the WAL dropped its old segments
 * });
 * ```
 */
export {
  SNAPSHOT_FORMAT_VERSION, decodeSnapshot, encodeSnapshot, parseSnapshotFileName,
  snapshotFileName,
} from './snapshot-file.js';
export { scanSnapshots, writeSnapshotFile } from './snapshot-store.js';
export type { SnapshotScan, StoredSnapshot } from './snapshot-store.js';
export { canStoreSnapshots } from './snapshot-raft-storage.js';
export type { SnapshotRaftStorage } from './snapshot-raft-storage.js';
