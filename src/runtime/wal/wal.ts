/**
 * The write-ahead log: RaftStorage over the Storage port, so the same code runs on files and in
 * the simulator. Writes are staged in memory and written at `sync` time, one append per batch,
 * covered by one storage sync (group commit). At most one batch is in flight; `sync` calls that
 * arrive meanwhile share the next batch.
 */
import { AssertionError, assert } from '../../core/assert.js';
import { formatConfigProblems } from '../../core/config.js';
import type { LogIndex } from '../../core/ids.js';
import type { Entry, HardState } from '../../core/raft/types.js';
import type { Storage } from '../../ports/storage.js';
import type { RaftStorage, RecoveredRaftState } from '../raft-storage.js';
import {
  WAL_DEFAULTS, entryDataBytesMax, validateWalConfig, type WalConfig,
} from './config.js';
import { checkAppend, checkHardState } from './log-rules.js';
import {
  ENTRIES_HEADER_BYTES, RECORD_HEADER_BYTES, encodeEntries, encodeHardState,
  encodeSegmentHeader, encodeTruncate, entryEncodedBytes,
} from './record.js';
import { recoverWal, type RecoveredWal, type WalRepair } from './recovery.js';
import { SEGMENT_SEQUENCE_MAX, segmentName } from './segment.js';
import type { WalError } from './wal-error.js';

export type SyncCallback = (error?: Error) => void;

export type OpenWalResult =
  | {
      readonly wal: Wal;
      /** What recovery cut or removed (a torn tail); log it. Empty after a clean shutdown. */
      readonly repairs: readonly WalRepair[];
    }
  | { readonly error: WalError };

/** Counters since open, for metrics and benchmarks. */
export interface WalStats {
  /** Group commits completed (the recovery sync at open included). */
  readonly batches: number;
  /** Storage syncs issued: one per batch, plus a directory sync per new segment. */
  readonly syncs: number;
  readonly recordsWritten: number;
  /** Unit: bytes. */
  readonly bytesWritten: number;
  readonly segmentsCreated: number;
}

/**
 * Recovers the log in `storage` and opens it for writing, or says why it cannot: a damaged log
 * is an `{ error }` value (print `error.message` and stop). Exceptions are left for the
 * storage's own I/O failures (a `StorageError` from FileStorage) and an invalid config (an
 * assertion: validate it first with `validateWalConfig`).
 *
 * The recovered state may include records that were written but never synced (they survived a
 * process kill in the page cache), so the WAL starts with a sync that makes it durable. Do not
 * act on `wal.recovered` (send a message, answer a client) before a first `wal.sync(done)` has
 * called back: it completes after that recovery sync.
 */
export function openWal(storage: Storage, config: WalConfig = WAL_DEFAULTS): OpenWalResult {
  const problems = validateWalConfig(config);
  assert(problems.length === 0,
    () => `openWal: invalid WalConfig:\n${formatConfigProblems(problems)}`);
  const recovered = recoverWal(storage, config);
  if ('code' in recovered) return { error: recovered };
  return { wal: new Wal(storage, config, recovered), repairs: recovered.repairs };
}

export class Wal implements RaftStorage {
  readonly recovered: RecoveredRaftState;
  private lastIndexStaged: number;
  private hardStateStaged: HardState;
  /** The log's last index and hard state as of the records handed to the storage. */
  private lastIndexWritten: number;
  private hardStateWritten: HardState;
  private staged: Uint8Array[] = [];
  private segment: { sequence: number; sizeBytes: number } | undefined;
  private inFlight = false;
  private inFlightWaiters: SyncCallback[] = [];
  private queuedWaiters: SyncCallback[] = [];
  /** Set by the first failed write or sync; every later sync reports it. */
  private failure: Error | undefined;
  private counters = {
    batches: 0, syncs: 0, recordsWritten: 0, bytesWritten: 0, segmentsCreated: 0,
  };

  /** Use `openWal`, which recovers first. */
  constructor(
    private readonly storage: Storage,
    private readonly config: WalConfig,
    recovered: RecoveredWal,
  ) {
    this.recovered = recovered.state;
    this.lastIndexStaged = this.lastIndexWritten = recovered.state.entries.length;
    this.hardStateStaged = this.hardStateWritten = recovered.state.hardState;
    this.segment = recovered.lastSegment;
    // Make what recovery read (and cut) durable before anyone relies on it.
    this.startBatch([], true);
  }

  lastIndex(): LogIndex {
    return this.lastIndexStaged as LogIndex;
  }

  stats(): WalStats {
    return { ...this.counters };
  }

  /** Stages `entries`; entries from an index already stored replace the suffix (Raft §5.3). */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const lastKept = checkAppend(entries, this.lastIndexStaged, this.hardStateStaged.commitIndex);
    const chunks = this.chunk(entries);
    if (lastKept !== undefined) this.stage(encodeTruncate(lastKept));
    for (const chunk of chunks) this.stage(encodeEntries(chunk));
    this.lastIndexStaged = entries[entries.length - 1]!.index;
  }

  /** Splits `entries` into runs that each fit one record, checking each entry fits at all. */
  private chunk(entries: readonly Entry[]): (readonly Entry[])[] {
    const overheadBytes = RECORD_HEADER_BYTES + ENTRIES_HEADER_BYTES;
    const chunks: (readonly Entry[])[] = [];
    let start = 0;
    let recordBytes = overheadBytes;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      const size = entryEncodedBytes(entry);
      assert(overheadBytes + size <= this.config.recordBytesMax, () => `append: entry ` +
        `${entry.index} holds ${entry.data.length} bytes; entryDataBytesMax is ` +
        `${entryDataBytesMax(this.config)} (from recordBytesMax)`);
      if (recordBytes + size > this.config.recordBytesMax) {
        chunks.push(entries.slice(start, i));
        start = i;
        recordBytes = overheadBytes;
      }
      recordBytes += size;
    }
    chunks.push(start === 0 ? entries : entries.slice(start));
    return chunks;
  }

  /** Stages the hard state. Stage the entries a commit index covers before it. */
  saveHardState(hardState: HardState): void {
    checkHardState(this.hardStateStaged, hardState, this.lastIndexStaged);
    this.stage(encodeHardState(hardState));
    this.hardStateStaged = hardState;
  }

  /** Queues one record for the next batch; recovery would refuse a longer one. */
  private stage(record: Uint8Array): void {
    assert(record.length <= this.config.recordBytesMax,
      () => `WAL record of ${record.length} bytes exceeds recordBytesMax`);
    this.staged.push(record);
  }

  /**
   * Writes everything staged and makes it durable, then calls `done` (always later, from a
   * storage callback). While a batch is in flight, calls share the next one. After a failure,
   * every call reports the error: stop the node.
   */
  sync(done: SyncCallback): void {
    if (!this.inFlight) {
      this.startBatch([done], false);
    } else if (this.staged.length === 0) {
      // Nothing new: the batch in flight already covers everything staged before this call.
      this.inFlightWaiters.push(done);
    } else {
      this.queuedWaiters.push(done);
    }
  }

  private startBatch(waiters: SyncCallback[], syncDirectory: boolean): void {
    assert(!this.inFlight, 'startBatch: a batch is already in flight');
    this.inFlight = true;
    this.inFlightWaiters = waiters;
    const written = this.failure === undefined ? this.writeStaged() : { created: false };
    const name = this.segment === undefined ? undefined : segmentName(this.segment.sequence);
    const operations: ((finish: SyncCallback) => void)[] = [];
    if (name !== undefined) operations.push((finish) => this.storage.sync(name, finish));
    // A new segment's name survives a crash only after a directory sync (the Storage contract).
    if (syncDirectory || written.created || name === undefined) {
      operations.push((finish) => this.storage.syncDir(finish));
    }
    let pending = operations.length;
    let batchError: Error | undefined;
    const finish: SyncCallback = (error) => {
      batchError ??= error;
      pending--;
      if (pending === 0) this.completeBatch(batchError);
    };
    this.counters.syncs += operations.length;
    for (const operation of operations) operation(finish);
  }

  /** Appends the staged records to the current segment, opening a new one when it is full. */
  private writeStaged(): { created: boolean } {
    if (this.staged.length === 0) return { created: false };
    let created = false;
    if (this.segment === undefined || this.segment.sizeBytes >= this.config.segmentBytesMax) {
      const sequence = (this.segment?.sequence ?? 0) + 1;
      assert(sequence <= SEGMENT_SEQUENCE_MAX, () => `WAL segment sequence ${sequence} overflows`);
      this.segment = { sequence, sizeBytes: 0 };
      // Each segment repeats the hard state, so it never lives only in an older segment.
      this.staged.unshift(
        encodeSegmentHeader(sequence, (this.lastIndexWritten + 1) as LogIndex),
        encodeHardState(this.hardStateWritten),
      );
      created = true;
      this.counters.segmentsCreated++;
    }
    const bytes = concatenate(this.staged);
    this.counters.recordsWritten += this.staged.length;
    this.staged = [];
    try {
      this.storage.append(segmentName(this.segment.sequence), bytes);
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      this.failure = error instanceof Error ? error : new Error(String(error));
    }
    this.segment.sizeBytes += bytes.length;
    this.counters.bytesWritten += bytes.length;
    this.lastIndexWritten = this.lastIndexStaged;
    this.hardStateWritten = this.hardStateStaged;
    return { created };
  }

  private completeBatch(error: Error | undefined): void {
    this.failure ??= error;
    const result = this.failure;
    const waiters = this.inFlightWaiters;
    this.inFlightWaiters = [];
    this.inFlight = false;
    this.counters.batches++;
    if (this.queuedWaiters.length > 0) {
      const queued = this.queuedWaiters;
      this.queuedWaiters = [];
      this.startBatch(queued, false);
    }
    for (const waiter of waiters) waiter(result);
  }
}

function concatenate(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
