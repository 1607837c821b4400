/**
 * @packageDocumentation
 * The write-ahead log: Raft's durable state (entries, hard state, snapshots) in segment files
 * and snapshot files over the Storage port, so the same code runs on real files
 * (`FileStorage`) and in the simulator (`SimStorage`). `MemoryRaftStorage` is its in-memory
 * stand-in for tests.
 *
 * Format: segments `wal-0000000001.log`, `wal-0000000002.log`, ...; each a sequence of records
 * `length:u32 crc32c:u32 type:u8 payload` (see record.ts), opening with a segment header and the
 * hard state as of that point.
 *
 * Invariants:
 * - Durability: when `sync(done)` calls `done()` without an error, everything staged before the
 *   call survives any crash. One storage sync covers a whole batch (group commit); at most one
 *   batch is in flight, and calls arriving meanwhile share the next one.
 * - Recovery returns the state of some completed sync or later, never less: a torn record at the
 *   end of the last segment is cut off; anything else that is damaged (a bad record followed by
 *   intact data, a bad record in an older segment, a missing segment) refuses to open with a
 *   `WalError` naming the file and byte offset.
 * - The recovered log is a Raft log: consecutive indexes from 1, or from just after the newest
 *   valid snapshot (`recovered.snapshot`), suffix replacements applied (truncate records), an
 *   installed snapshot replacing the log (snapshot records), commit index not past the last.
 * - Snapshots (src/runtime/snapshot): `saveSnapshot` (log compaction) and `installSnapshot`
 *   (from the leader) write the snapshot file atomically first; the newest two are kept, and
 *   whole segments before the older of them are removed, oldest first, each removal synced, so
 *   recovery can fall back to the older snapshot when the newest is damaged.
 * - Lost synced records are refused, not dropped: after each batch the manifest
 *   (`wal-manifest`, manifest.ts) gets a claim of how far the last segment was synced, with no
 *   sync of its own; recovery refuses with CONCLAVE_WAL_RECORDS_LOST when a claimed segment is
 *   missing or holds fewer intact bytes than claimed (deleted, emptied, zeroed or cut short).
 * - No length read from disk is trusted: each is bounded by `recordBytesMax` and by the bytes
 *   present before anything is allocated.
 *
 * Example (the runtime's persist step; `storage` is a FileStorage or a SimStorage):
 * ```ts
 * const opened = openWal(storage, WAL_DEFAULTS);
 * if ('error' in opened) return fail(opened.error.message);  // names file and byte offset
 * const { wal } = opened;
 * wal.sync(() => startRaft(wal.recovered));  // recovery made durable: now act on it
 * // For each Ready: entries first, then the hard state that may commit them, then one sync.
 * wal.append(ready.entries);
 * wal.saveHardState(ready.hardState);
 * wal.sync((error) => (error === undefined ? sendMessages(ready) : stopNode(error)));
 * ```
 */
export { WAL_DEFAULTS, entryDataBytesMax, validateWalConfig } from './config.js';
export type { WalConfig } from './config.js';
export { SNAPSHOTS_KEPT, Wal, openWal } from './wal.js';
export type {
  OpenWalResult, SyncCallback, WalOpenOptions, WalSnapshotOptions, WalStats,
} from './wal.js';
export type { WalError, WalErrorKind } from './wal-error.js';
export { INITIAL_HARD_STATE, walHoldsRecords } from './recovery.js';
export type { RecoverOptions, RecoveredWalState, WalRepair } from './recovery.js';
export { MANIFEST_FILE } from './manifest.js';
export { MemoryRaftStorage } from './memory-raft-storage.js';
export type { MemoryRaftStorageOptions, MemoryRecoveredState } from './memory-raft-storage.js';
export { segmentName, segmentSequence } from './segment.js';
