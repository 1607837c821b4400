/**
 * RaftStorage that also keeps snapshots (Raft §7): what the runtime needs to compact the log and
 * to install a snapshot received from the leader. The write-ahead log (`Wal`) and
 * `MemoryRaftStorage` implement it.
 */
import type { Snapshot } from '../../core/raft/types.js';
import type { RaftStorage, RecoveredRaftState } from '../raft-storage.js';

export interface SnapshotRaftStorage extends RaftStorage {
  /** The recovered state; with `snapshot` when the log starts after it. */
  readonly recovered: RecoveredRaftState & { readonly snapshot?: Snapshot };
  /**
   * Makes `snapshot` durable (atomically), then makes the stored log that snapshot and nothing
   * after it: `done` is called once the snapshot is durable; what is staged next follows it.
   */
  installSnapshot(snapshot: Snapshot, done: (error?: Error) => void): void;
  /**
   * Makes a snapshot of the applied state durable (atomically), then drops stored log that
   * snapshots make unnecessary. The stored log is otherwise unchanged.
   */
  saveSnapshot(snapshot: Snapshot, done: (error?: Error) => void): void;
}

/** Whether `storage` keeps snapshots (the runtime snapshots and compacts only then). */
export function canStoreSnapshots(storage: RaftStorage): storage is SnapshotRaftStorage {
  const candidate = storage as Partial<SnapshotRaftStorage>;
  return typeof candidate.installSnapshot === 'function' &&
    typeof candidate.saveSnapshot === 'function';
}
