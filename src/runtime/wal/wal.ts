/**
 * The write-ahead log: RaftStorage over the Storage port, so the same code runs on files and in
 * the simulator. Writes are staged in memory and written at `sync` time, one append per batch,
 * covered by one storage sync (group commit). At most one batch is in flight; `sync` calls that
 * arrive meanwhile share the next batch.
 */
import { AssertionError, assert } from '../../core/assert.js';
import { formatConfigProblems } from '../../core/config.js';
import type { LogIndex } from '../../core/ids.js';
import type { Entry, HardState, Snapshot } from '../../core/raft/types.js';
import type { Storage } from '../../ports/storage.js';
import type { SnapshotRaftStorage } from '../snapshot/snapshot-raft-storage.js';
import { parseSnapshotFileName } from '../snapshot/snapshot-file.js';
import {
  pruneSnapshots, writeSnapshotFile, type YieldTurn,
} from '../snapshot/snapshot-store.js';
import {
  WAL_DEFAULTS, entryDataBytesMax, validateWalConfig, type WalConfig,
} from './config.js';
import { checkAppend, checkHardState } from './log-rules.js';
import {
  ENTRIES_HEADER_BYTES, RECORD_HEADER_BYTES, encodeEntries, encodeHardState,
  encodeSegmentHeader, encodeSnapshotRecord, encodeTruncate, entryEncodedBytes,
} from './record.js';
import {
  MANIFEST_CLAIM_BYTES, MANIFEST_FILE, MANIFEST_TEMP_FILE, NO_CLAIM,
  claimExceeds, encodeClaim, encodeFloor, type CompactionFloor, type SyncClaim,
} from './manifest.js';
import {
  recoverWal, type RecoverOptions, type RecoveredWal, type RecoveredWalState, type SegmentInfo,
  type WalRepair,
} from './recovery.js';
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

/** Where snapshot files live and how their writes share the event loop. */
export interface WalSnapshotOptions {
  /**
   * The directory of snapshot files. Default: the log's own directory. The server gives each
   * member `<data-dir>/snap` beside `<data-dir>/wal` (etcd's layout).
   */
  readonly snapshotStorage?: Storage;
  /**
   * Given: a snapshot file is written a piece per event-loop turn (see `writeSnapshotFile`).
   * Default: all at once.
   */
  readonly yieldTurn?: YieldTurn;
}

/** How `openWal` recovers the log and where its snapshots go. */
export type WalOpenOptions = RecoverOptions & WalSnapshotOptions;

/**
 * Snapshot files kept: the newest, and the one before it (recovery falls back to it if the
 * newest is damaged, so the log is compacted only up to it).
 */
export const SNAPSHOTS_KEPT = 2;

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
  /** Segments removed by compaction. */
  readonly segmentsRemoved: number;
  /** Snapshot files written (local and installed). */
  readonly snapshotsWritten: number;
  /** Claims appended to the manifest (about one per batch; no sync of their own). */
  readonly manifestClaims: number;
  /** Times the manifest was rewritten to one claim (each: two syncs, off the write path). */
  readonly manifestRewrites: number;
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
 *
 * The WAL writes to `storage` from its sync callbacks (the manifest claim of each completed
 * batch): close the storage only after a last `wal.sync(done)` has called back.
 */
export function openWal(storage: Storage, config: WalConfig = WAL_DEFAULTS,
  options: WalOpenOptions = {}): OpenWalResult {
  const problems = validateWalConfig(config);
  assert(problems.length === 0,
    () => `openWal: invalid WalConfig:\n${formatConfigProblems(problems)}`);
  const recovered = recoverWal(storage, config, options);
  if ('code' in recovered) return { error: recovered };
  return { wal: new Wal(storage, config, recovered, options), repairs: recovered.repairs };
}

export class Wal implements SnapshotRaftStorage {
  readonly recovered: RecoveredWalState;
  private lastIndexStaged: number;
  private hardStateStaged: HardState;
  /** The log's last index and hard state as of the records handed to the storage. */
  private lastIndexWritten: number;
  private hardStateWritten: HardState;
  private staged: Uint8Array[] = [];
  private segment: { sequence: number; sizeBytes: number } | undefined;
  /** Every segment on disk, oldest first, with the index its header says it starts at. */
  private readonly segments: SegmentInfo[];
  private compacting = false;
  private inFlight = false;
  private inFlightWaiters: SyncCallback[] = [];
  private queuedWaiters: SyncCallback[] = [];
  /** Set by the first failed write or sync; every later sync reports it. */
  private failure: Error | undefined;
  /** The segment and size the batch in flight makes durable: its claim once it completes. */
  private inFlightClaim: SyncClaim | undefined;
  /** The newest claim in the manifest (appended; durable or not). */
  private claimed: SyncClaim;
  /** The segment and size the last completed batch made durable. */
  private lastDurable: SyncClaim | undefined;
  /** The newest compaction floor in the manifest (durable once `compacting` is past its sync). */
  private floor: CompactionFloor;
  private manifestBytes: number;
  private manifestRewriting = false;
  /** A compaction asked for while the manifest was busy (the snapshot index it may drop to). */
  private compactionDeferred: number | undefined;
  private counters = {
    batches: 0, syncs: 0, recordsWritten: 0, bytesWritten: 0, segmentsCreated: 0,
    segmentsRemoved: 0, snapshotsWritten: 0, manifestClaims: 0, manifestRewrites: 0,
  };

  private readonly snapshotStorage: Storage;
  private yieldTurn: YieldTurn | undefined;

  /** Use `openWal`, which recovers first. */
  constructor(
    private readonly storage: Storage,
    private readonly config: WalConfig,
    recovered: RecoveredWal,
    snapshotOptions: WalSnapshotOptions = {},
  ) {
    this.snapshotStorage = snapshotOptions.snapshotStorage ?? storage;
    this.yieldTurn = snapshotOptions.yieldTurn;
    this.recovered = recovered.state;
    const { entries, snapshot } = recovered.state;
    this.lastIndexStaged = this.lastIndexWritten =
      entries[entries.length - 1]?.index ?? snapshot?.meta.index ?? 0;
    this.hardStateStaged = this.hardStateWritten = recovered.state.hardState;
    this.segment = recovered.lastSegment;
    this.segments = [...recovered.segments];
    this.claimed = recovered.claim;
    this.floor = recovered.floor;
    this.manifestBytes = recovered.manifestBytes;
    if (!recovered.manifestPresent) this.createManifest(recovered.segments[0]?.sequence ?? 1);
    // Make what recovery read (and cut) durable before anyone relies on it; the manifest too.
    this.startBatch([], true);
  }

  /**
   * A log without a manifest (new, or written before manifests): one that claims nothing, with
   * its first segment as the floor (whatever came before it, if anything, was compacted).
   */
  private createManifest(firstSequence: number): void {
    this.claimed = NO_CLAIM;
    this.floor = { firstSequence, snapshotIndex: this.recovered.snapshot?.meta.index ?? 0 };
    try {
      this.storage.remove(MANIFEST_FILE);
      this.storage.append(MANIFEST_FILE, concatenate([encodeClaim(NO_CLAIM),
        encodeFloor(this.floor)]));
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      this.failure = error instanceof Error ? error : new Error(String(error));
    }
    this.manifestBytes = 2 * MANIFEST_CLAIM_BYTES;
  }

  /**
   * How later snapshot files share the event loop (`WalSnapshotOptions.yieldTurn`): for an owner
   * that gets the WAL already opened (the server opens it before its listeners).
   */
  setYieldTurn(yieldTurn: YieldTurn | undefined): void {
    this.yieldTurn = yieldTurn;
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

  /**
   * InstallSnapshot (Raft §7): writes the snapshot's file atomically and durably, then stages a
   * record saying that the log is now that snapshot and nothing after it. `done` is called once
   * the file is durable (the record becomes durable with the next `sync`); stage the entries and
   * hard state that follow the snapshot after `done`.
   */
  installSnapshot(snapshot: Snapshot, done: SyncCallback): void {
    this.writeSnapshot(snapshot, (error) => {
      if (error === undefined) {
        this.stage(encodeSnapshotRecord(snapshot.meta.index, snapshot.meta.term));
        this.lastIndexStaged = snapshot.meta.index;
      }
      done(error);
    });
  }

  /**
   * A snapshot the state machine took (log compaction, Raft §7): writes its file atomically and
   * durably, then calls `done`; then drops what it makes unnecessary (see `compact`).
   */
  saveSnapshot(snapshot: Snapshot, done: SyncCallback): void {
    this.writeSnapshot(snapshot, done);
  }

  private writeSnapshot(snapshot: Snapshot, done: SyncCallback): void {
    if (this.failure !== undefined) return done(this.failure);
    writeSnapshotFile(this.snapshotStorage, snapshot, (error) => {
      this.failure ??= error;
      if (error !== undefined) return done(error);
      this.counters.snapshotsWritten++;
      this.compact();
      done();
    }, this.yieldTurn);
  }

  /**
   * Keeps the newest SNAPSHOTS_KEPT snapshot files and removes the segments whose entries all
   * precede the oldest kept one: a crash then recovers from the newest valid snapshot plus the
   * log after it (or from the older snapshot, if the newest is damaged).
   */
  private compact(): void {
    pruneSnapshots(this.snapshotStorage, SNAPSHOTS_KEPT);
    // By name: the files were just written or checked at open (reading them again costs).
    const kept = this.snapshotStorage.list().map(parseSnapshotFileName)
      .filter((parsed) => parsed !== undefined).map((parsed) => parsed.index);
    if (kept.length > 0) this.removeSegmentsBefore(Math.min(...kept));
  }

  /**
   * Removes the segments that hold only entries up to `index` (a durable snapshot covers them),
   * in two steps, so that no crash can make a removal look like lost records or hide one:
   * 1. the manifest gets a floor naming the first segment kept, and is synced;
   * 2. only then are the segments below it unlinked (and the directory synced).
   * A crash before 1 completes leaves every segment in place; after it, recovery removes what
   * is left below the floor (manifest.ts). The floor only names a segment whose creation is
   * durable (the last completed batch reached it), so a power loss cannot take it away. A
   * manifest rewrite and a compaction never overlap: the one asked for second waits.
   */
  private removeSegmentsBefore(index: number): void {
    if (this.failure !== undefined) return;
    if (this.compacting || this.manifestRewriting) {
      this.compactionDeferred = Math.max(this.compactionDeferred ?? 0, index);
      return;
    }
    const durableSequence = this.lastDurable?.sequence ?? 0;
    let count = 0;
    // Segment i holds only entries below segment i+1's first index; the last one stays.
    for (let next = this.segments[1]; next !== undefined && next.firstIndex <= index + 1 &&
      next.sequence <= durableSequence; next = this.segments[count + 1]) count++;
    if (count === 0) return;
    const floor = { firstSequence: this.segments[count]!.sequence, snapshotIndex: index };
    this.compacting = true;
    if (!this.attempt(() => this.storage.append(MANIFEST_FILE, encodeFloor(floor)))) return;
    this.floor = floor;
    this.manifestBytes += MANIFEST_CLAIM_BYTES;
    this.storage.sync(MANIFEST_FILE, (error) => {
      this.failure ??= error;
      if (this.failure !== undefined) return;
      // The floor is durable: the segments below it can go, in any order.
      const removed = this.segments.splice(0, count);
      for (const { sequence } of removed) {
        if (!this.attempt(() => this.storage.remove(segmentName(sequence)))) return;
        this.counters.segmentsRemoved++;
      }
      this.storage.syncDir((dirError) => {
        this.failure ??= dirError;
        this.compacting = false;
        this.manifestIdle();
      });
    });
  }

  /** Runs `step`; a storage failure stops the log (returns false), an assertion propagates. */
  private attempt(step: () => void): boolean {
    try {
      step();
      return true;
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      this.failure ??= error instanceof Error ? error : new Error(String(error));
      return false;
    }
  }

  /** The manifest is free again: run what waited for it (a compaction, then a rewrite). */
  private manifestIdle(): void {
    if (this.failure !== undefined) return;
    const deferred = this.compactionDeferred;
    this.compactionDeferred = undefined;
    if (deferred !== undefined) this.removeSegmentsBefore(deferred);
    if (!this.compacting && this.manifestBytes >= this.config.manifestBytesMax) {
      this.rewriteManifest();
    }
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
    this.inFlightClaim = this.segment === undefined ? undefined
      : { sequence: this.segment.sequence, syncedBytes: this.segment.sizeBytes };
    const operations: ((finish: SyncCallback) => void)[] = [];
    if (name !== undefined) operations.push((finish) => this.storage.sync(name, finish));
    // A new segment's name survives a crash only after a directory sync (the Storage contract).
    if (syncDirectory || written.created || name === undefined) {
      operations.push((finish) => this.storage.syncDir(finish));
    }
    // At open only: the manifest as created or repaired by recovery.
    if (syncDirectory) operations.push((finish) => this.storage.sync(MANIFEST_FILE, finish));
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
      this.segments.push({ sequence, firstIndex: (this.lastIndexWritten + 1) as LogIndex });
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

  /**
   * Appends `claim` to the manifest (no sync: see manifest.ts) when it says more than the last
   * one; rewrites the manifest once it is full. A failure stops the log like any other.
   */
  private claim(claim: SyncClaim): void {
    if (!claimExceeds(claim, this.claimed)) return;
    if (this.manifestRewriting) return; // The rewrite appends the newest claim when it is done.
    try {
      this.storage.append(MANIFEST_FILE, encodeClaim(claim));
    } catch (error) {
      if (error instanceof AssertionError) throw error;
      this.failure ??= error instanceof Error ? error : new Error(String(error));
      return;
    }
    this.claimed = claim;
    this.manifestBytes += MANIFEST_CLAIM_BYTES;
    this.counters.manifestClaims++;
    // Not while a compaction's floor is being synced or acted on: see removeSegmentsBefore.
    if (this.manifestBytes >= this.config.manifestBytesMax && !this.compacting) {
      this.rewriteManifest();
    }
  }

  /**
   * Replaces the manifest by one holding only the newest claim and floor: atomically and
   * durably. Never while a compaction runs (its floor could be appended to the file being
   * replaced), and a compaction asked for meanwhile waits for it.
   */
  private rewriteManifest(): void {
    this.manifestRewriting = true;
    const records = concatenate([encodeClaim(this.claimed), encodeFloor(this.floor)]);
    const failed = (error: unknown): void => {
      if (error instanceof AssertionError) throw error;
      this.failure ??= error instanceof Error ? error : new Error(String(error));
    };
    try {
      this.storage.remove(MANIFEST_TEMP_FILE);
      this.storage.append(MANIFEST_TEMP_FILE, records);
    } catch (error) {
      return failed(error);
    }
    this.storage.sync(MANIFEST_TEMP_FILE, (syncError) => {
      if (syncError !== undefined) return failed(syncError);
      try {
        this.storage.rename(MANIFEST_TEMP_FILE, MANIFEST_FILE);
      } catch (error) {
        return failed(error);
      }
      this.storage.syncDir((dirError) => {
        if (dirError !== undefined) return failed(dirError);
        this.manifestRewriting = false;
        this.manifestBytes = records.length;
        this.counters.manifestRewrites++;
        // Claims skipped while rewriting: the newest batch's; then a compaction that waited.
        if (this.lastDurable !== undefined) this.claim(this.lastDurable);
        if (!this.manifestRewriting) this.manifestIdle();
      });
    });
  }

  private completeBatch(error: Error | undefined): void {
    this.failure ??= error;
    // Before the next batch starts (it grows the segment): claim what this one made durable.
    if (this.failure === undefined && this.inFlightClaim !== undefined) {
      this.lastDurable = this.inFlightClaim;
      this.claim(this.inFlightClaim);
    }
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
