/**
 * Recovery: loads the newest valid snapshot, reads every segment in order, checks each record,
 * replays them into the log and the last hard state, keeps the log after the snapshot, and cuts
 * a torn tail off the last segment. Refuses (returns a WalError) on anything a crash cannot
 * explain.
 */
import { assertNever } from '../../core/assert.js';
import type { LogIndex, Term } from '../../core/ids.js';
import type { Entry, HardState, Snapshot } from '../../core/raft/types.js';
import type { Storage } from '../../ports/storage.js';
import type { RecoveredRaftState } from '../raft-storage.js';
import { scanSnapshots, snapshotTempFiles, type SnapshotScan } from '../snapshot/snapshot-store.js';
import type { WalConfig } from './config.js';
import {
  MANIFEST_CLAIM_BYTES, MANIFEST_FILE, MANIFEST_TEMP_FILE, NO_CLAIM, claimExceeds,
  readManifest, type CompactionFloor, type SyncClaim,
} from './manifest.js';
import {
  SEGMENT_MAGIC, WAL_FORMAT_VERSION, hex, recordTypeName, type WalRecord,
} from './record.js';
import { scanSegment, segmentName, segmentSequence } from './segment.js';
import { walError, type WalError } from './wal-error.js';

export const INITIAL_HARD_STATE: HardState = Object.freeze({
  term: 0 as Term,
  vote: undefined,
  commitIndex: 0 as LogIndex,
});

/** What recovery changed on disk, for the log line a server prints at start. */
export interface WalRepair {
  readonly file: string;
  /**
   * `truncated`/`removed`: a torn tail cut. `skipped`: a damaged snapshot file passed over for
   * an older valid one (left in place for inspection).
   */
  readonly action: 'truncated' | 'removed' | 'skipped';
  /** Where the torn record started (the new size when truncated). Unit: bytes. */
  readonly offsetBytes: number;
  readonly reason: string;
}

/** The recovered state; `snapshot` is present when the log starts after it. */
export interface RecoveredWalState extends RecoveredRaftState {
  readonly snapshot?: Snapshot;
}

/** A segment that survived recovery: its sequence and the index its header says it starts at. */
export interface SegmentInfo {
  readonly sequence: number;
  readonly firstIndex: LogIndex;
}

export interface RecoveredWal {
  readonly state: RecoveredWalState;
  /** The segment new records go to, if one survived recovery. */
  readonly lastSegment: { readonly sequence: number; readonly sizeBytes: number } | undefined;
  /** Every surviving segment, oldest first (compaction removes from the front). */
  readonly segments: readonly SegmentInfo[];
  readonly repairs: readonly WalRepair[];
  /** The manifest's newest claim (NO_CLAIM when there was none). */
  readonly claim: SyncClaim;
  /** The manifest's newest compaction floor (NO_FLOOR when there was none). */
  readonly floor: CompactionFloor;
  /** Whether the manifest file exists with an intact claim; the WAL creates it if not. */
  readonly manifestPresent: boolean;
  /** The manifest's size after repair. Unit: bytes. */
  readonly manifestBytes: number;
}

export interface RecoverOptions {
  /**
   * Refuse to open when the manifest is missing. Set it when the log is known to have had one
   * from its start (the server's data dir, created with `initializeWal`); leave it unset to
   * adopt a log written without one (a manifest is created and kept from then on).
   * Default: false.
   */
  readonly requireManifest?: boolean;
  /** The directory of snapshot files. Default: `storage` itself. */
  readonly snapshotStorage?: Storage;
}

/**
 * Reads the log in `storage` (and its snapshots in `snapshotStorage`, by default the same
 * directory) and repairs a torn tail (truncate or remove, not yet synced: the caller syncs
 * before anyone acts on the result). Other files in the directory are ignored.
 * Refusing (a WalError) changes nothing on disk.
 */
export function recoverWal(storage: Storage, config: WalConfig,
  options: RecoverOptions = {}): RecoveredWal | WalError {
  const snapshotStorage = options.snapshotStorage ?? storage;
  const manifest = readManifestFile(storage, options.requireManifest === true);
  if ('code' in manifest) return manifest;
  const listed = listSegments(storage, manifest.floor);
  if ('code' in listed) return listed;
  const { sequences } = listed;
  const replay = new Replay();
  const repairs: WalRepair[] = [...manifest.repairs, ...listed.compacted];
  const segments: SegmentInfo[] = [];
  let lastSegment: RecoveredWal['lastSegment'];
  const scanned = new Map<number, SegmentProgress>();
  for (const [i, sequence] of sequences.entries()) {
    const name = segmentName(sequence);
    const isLast = i === sequences.length - 1;
    const bytes = storage.read(name) ?? new Uint8Array(0);
    const scan = scanSegment(name, bytes, isLast, config.recordBytesMax);
    if ('code' in scan) return scan;
    scanned.set(sequence, { validBytes: scan.validBytes, sizeBytes: bytes.length });
    const first = scan.records[0];
    if (first === undefined) {
      // Only the last segment may hold nothing intact: it was being created when the node died.
      if (!isLast) return walError('corrupt-record', name, 0, 'segment holds no intact record');
      repairs.push({ file: name, action: 'removed', offsetBytes: 0,
        reason: scan.torn?.reason ?? 'empty segment' });
      break;
    }
    for (const { record, offsetBytes } of scan.records) {
      const problem = replay.apply(name, offsetBytes, record, sequence, record === first.record);
      if (problem !== undefined) return problem;
    }
    if (first.record.type === 'segment-header') {
      segments.push({ sequence, firstIndex: first.record.firstIndex });
    }
    if (scan.torn !== undefined) repairs.push({ file: name, action: 'truncated', ...scan.torn });
    lastSegment = { sequence, sizeBytes: scan.validBytes };
  }
  const lost = lostRecords(manifest, scanned, sequences[sequences.length - 1]);
  if (lost !== undefined) return lost;
  const lastName = lastSegment === undefined ? '' : segmentName(lastSegment.sequence);
  const snapshots = scanSnapshots(snapshotStorage);
  const state = replay.finish(lastName, snapshots);
  if ('code' in state) return state;
  for (const { file, reason } of snapshots.damaged) {
    repairs.push({ file, action: 'skipped', offsetBytes: 0, reason });
  }
  // Repair only once the whole log checked out: a refusal leaves the files as they were.
  for (const repair of repairs) {
    if (repair.action === 'removed') storage.remove(repair.file);
    else if (repair.action === 'truncated') storage.truncate(repair.file, repair.offsetBytes);
  }
  // Snapshot writes a crash interrupted were never renamed, so never used: drop them.
  for (const temp of snapshotTempFiles(snapshotStorage)) snapshotStorage.remove(temp);
  storage.remove(MANIFEST_TEMP_FILE);
  return { state, lastSegment, segments, repairs, claim: manifest.claim ?? NO_CLAIM,
    floor: manifest.floor, manifestPresent: manifest.claim !== undefined,
    manifestBytes: manifest.sizeBytes };
}

/** How much of a segment file recovery found intact. */
interface SegmentProgress {
  /** Unit: bytes. */
  readonly validBytes: number;
  /** Unit: bytes. */
  readonly sizeBytes: number;
}

interface ManifestState {
  readonly claim: SyncClaim | undefined;
  readonly floor: CompactionFloor;
  readonly sizeBytes: number;
  readonly repairs: readonly WalRepair[];
}

/** The manifest's newest claim, with a torn last claim to cut (claims have a fixed size). */
function readManifestFile(storage: Storage, required: boolean): ManifestState | WalError {
  const bytes = storage.read(MANIFEST_FILE);
  const { claim, floor, damagedClaims } = readManifest(bytes);
  if (claim === undefined) {
    if (!required) return { claim: undefined, floor, sizeBytes: 0, repairs: [] };
    return walError('missing-manifest', MANIFEST_FILE, 0, bytes === undefined
      ? 'the file is missing, so nothing tells whether synced records were lost'
      : `the file holds no intact claim (${bytes.length} bytes, ${damagedClaims} damaged)`);
  }
  const alignedBytes = bytes!.length - (bytes!.length % MANIFEST_CLAIM_BYTES);
  const repairs: WalRepair[] = alignedBytes === bytes!.length ? [] : [{
    file: MANIFEST_FILE, action: 'truncated', offsetBytes: alignedBytes,
    reason: 'torn claim at the end' }];
  return { claim, floor, sizeBytes: alignedBytes, repairs };
}

/**
 * The refusal when the manifest claims synced bytes the segments do not hold: the claimed
 * segment is gone (and the floor does not say it was compacted away), or it ends short of the
 * claim. A claim below the floor is about a segment compaction removed: a power loss can lose
 * the claims that followed it, never the floor (it is synced before the removal).
 */
function lostRecords(manifest: ManifestState, scanned: ReadonlyMap<number, SegmentProgress>,
  lastSequence: number | undefined): WalError | undefined {
  const { claim, floor } = manifest;
  if (claim === undefined || claim.sequence === 0) return undefined;
  if (claim.sequence < floor.firstSequence) return undefined;
  const name = segmentName(claim.sequence);
  const progress = scanned.get(claim.sequence);
  if (progress === undefined) {
    return walError('records-lost', name, 0, `the file is missing, but the manifest ` +
      `(${MANIFEST_FILE}) says it held ${claim.syncedBytes} bytes of synced records` +
      (lastSequence === undefined ? '; no segment is left'
        : `; the last segment left is ${segmentName(lastSequence)}`));
  }
  if (progress.validBytes >= claim.syncedBytes) return undefined;
  return walError('records-lost', name, progress.validBytes, `it holds ` +
    `${progress.validBytes} bytes of intact records (file size ${progress.sizeBytes}), but ` +
    `${claim.syncedBytes} bytes had been synced (acknowledged) before: it was emptied, zeroed ` +
    `or cut short`);
}

interface SegmentList {
  /** The segments to read, in order: the floor's and every later one. */
  readonly sequences: readonly number[];
  /** Segments below the floor still on disk (a crash came before their unlink): to remove. */
  readonly compacted: readonly WalRepair[];
}

/**
 * The WAL's segment sequence numbers in order, or an error when one is missing between, or
 * when the first is later than the manifest's floor (`floor.firstSequence` was never removed on
 * purpose: its loss is a loss of records). Segments below the floor are left out: compaction
 * had made its floor durable and was removing them when the node stopped.
 */
function listSegments(storage: Storage, floor: CompactionFloor): SegmentList | WalError {
  const sequences: number[] = [];
  const compacted: WalRepair[] = [];
  for (const name of storage.list()) {
    const sequence = segmentSequence(name);
    if (sequence === undefined) continue;
    if (sequence >= floor.firstSequence) sequences.push(sequence);
    else compacted.push({ file: name, action: 'removed', offsetBytes: 0, reason: 'compacted: ' +
      `below the manifest's floor (${segmentName(floor.firstSequence)}; a snapshot at index ` +
      `${floor.snapshotIndex} covers it), its removal was interrupted` });
  }
  sequences.sort((a, b) => a - b);
  const first = sequences[0];
  if (first !== undefined && floor.firstSequence > 0 && first > floor.firstSequence) {
    return walError('records-lost', segmentName(floor.firstSequence), 0, 'the file is ' +
      `missing, but the manifest (${MANIFEST_FILE}) says only the segments before it were ` +
      `removed (compacted after a snapshot at index ${floor.snapshotIndex}); the first ` +
      `segment left is ${segmentName(first)}`);
  }
  for (let i = 1; i < sequences.length; i++) {
    const previous = sequences[i - 1]!;
    const current = sequences[i]!;
    if (current !== previous + 1) {
      return walError('missing-segment', segmentName(current), 0,
        `segment ${segmentName(previous + 1)} is missing (found ${segmentName(previous)} then ` +
        `${segmentName(current)})`);
    }
  }
  return { sequences, compacted };
}

/**
 * Applies intact records in order, checking that they tell one consistent story. The log is
 * kept as a base (where it starts: 0 at first; the first segment's start when older segments
 * were compacted away; an installed snapshot) and the entries after it.
 */
class Replay {
  entries: Entry[] = [];
  hardState: HardState = INITIAL_HARD_STATE;
  private baseIndex = 0;
  /** The term at the base, when known (index 0, or an installed snapshot). */
  private baseTerm: number | undefined = 0;
  private started = false;
  private firstFile = '';
  /** The highest snapshot a snapshot record says was installed. */
  private installedIndex = 0;
  private where = { file: '', offsetBytes: 0 };

  private get lastIndex(): number {
    return this.baseIndex + this.entries.length;
  }

  apply(
    file: string,
    offsetBytes: number,
    record: WalRecord,
    sequence: number,
    opensSegment: boolean,
  ): WalError | undefined {
    this.where = { file, offsetBytes };
    if (opensSegment !== (record.type === 'segment-header')) {
      return this.inconsistent(opensSegment
        ? `segment starts with a ${recordTypeName(record)} record, not a segment header`
        : 'segment header in the middle of a segment');
    }
    switch (record.type) {
      case 'segment-header': return this.openSegment(record, sequence);
      case 'entries': return this.appendEntries(record.entries);
      case 'hard-state':
        this.hardState = record.hardState;
        return undefined;
      case 'truncate': return this.truncate(record.lastKeptIndex);
      case 'snapshot':
        // Raft §7: the installed snapshot replaces the whole log.
        this.entries = [];
        this.baseIndex = record.index;
        this.baseTerm = record.term;
        this.installedIndex = Math.max(this.installedIndex, record.index);
        return undefined;
      default: return assertNever(record, 'WAL record');
    }
  }

  /**
   * Joins the log with the newest valid snapshot and checks what holds only once every record
   * is in: the snapshot covers everything before the log's start, and the commit index is
   * inside the log. The log keeps only entries after the snapshot.
   */
  finish(lastFile: string, snapshots: SnapshotScan): RecoveredWalState | WalError {
    const newest = snapshots.valid[0];
    if (newest === undefined) {
      if (this.baseIndex > 0) return this.noSnapshot(lastFile, snapshots);
      return this.checkCommit(lastFile, { hardState: this.hardState, entries: this.entries }, 0);
    }
    const { snapshot } = newest;
    const { index, term } = snapshot.meta;
    if (index < this.baseIndex || this.installedIndex > index) {
      return this.noSnapshot(lastFile, snapshots);
    }
    const termThere = index === this.baseIndex
      ? (this.baseTerm ?? term)
      : this.entries[index - this.baseIndex - 1]?.term;
    // Not holding the snapshot's last entry: it was installed and the crash came before its
    // snapshot record; the snapshot replaces the whole log (Raft §7).
    const entries = termThere === term ? this.entries.slice(index - this.baseIndex) : [];
    const hardState = this.hardState.commitIndex >= index
      ? this.hardState
      : { ...this.hardState, commitIndex: index };
    return this.checkCommit(lastFile, { hardState, entries, snapshot }, index);
  }

  private checkCommit(lastFile: string, state: RecoveredWalState,
    snapshotIndex: number): RecoveredWalState | WalError {
    const last = state.entries[state.entries.length - 1]?.index ?? snapshotIndex;
    if (state.hardState.commitIndex > last) {
      this.where = { file: lastFile, offsetBytes: 0 };
      return this.inconsistent(`hard state commits index ${state.hardState.commitIndex} but the ` +
        `log ends at ${last}`);
    }
    return state;
  }

  private noSnapshot(lastFile: string, snapshots: SnapshotScan): WalError {
    const needed = Math.max(this.baseIndex, this.installedIndex);
    if (snapshots.valid.length === 0 && snapshots.damaged.length === 0 &&
      this.installedIndex === 0) {
      // No snapshot was ever here: the segments before the first one are what is missing.
      return walError('missing-segment', this.firstFile, 0, `the log starts at index ` +
        `${this.baseIndex + 1}, not 1, and no snapshot covers the entries before it`);
    }
    const damaged = snapshots.damaged.map((d) => `${d.file} (${d.reason})`).join(', ');
    const newest = snapshots.valid[0]?.snapshot.meta.index;
    return walError('missing-snapshot', damaged === '' ? lastFile : snapshots.damaged[0]!.file, 0,
      `the log needs a snapshot at index ${needed} or later, but the newest valid snapshot is ` +
      `${newest === undefined ? 'none' : `at index ${newest}`}` +
      (damaged === '' ? '' : `; damaged snapshot files: ${damaged}`));
  }

  private openSegment(
    header: Extract<WalRecord, { type: 'segment-header' }>,
    sequence: number,
  ): WalError | undefined {
    const { file, offsetBytes } = this.where;
    if (header.magic !== SEGMENT_MAGIC || header.version !== WAL_FORMAT_VERSION) {
      return walError('unsupported-format', file, offsetBytes,
        `segment format ${hex(header.magic)} version ${header.version}; this build reads ` +
        `${hex(SEGMENT_MAGIC)} version ${WAL_FORMAT_VERSION}`);
    }
    if (header.sequence !== sequence) {
      return this.inconsistent(`header says segment ${header.sequence}, the name says ${sequence}`);
    }
    if (!this.started) {
      // Older segments may have been compacted away: the log starts where this one does, and
      // a snapshot must cover what came before (checked at the end).
      this.started = true;
      this.firstFile = file;
      this.baseIndex = header.firstIndex - 1;
      this.baseTerm = this.baseIndex === 0 ? 0 : undefined;
      return undefined;
    }
    if (header.firstIndex !== this.lastIndex + 1) {
      return walError('inconsistent-log', file, offsetBytes, `segment starts at index ` +
        `${header.firstIndex} but the segments before it end at index ${this.lastIndex}`);
    }
    return undefined;
  }

  private appendEntries(entries: readonly Entry[]): WalError | undefined {
    const first = entries[0];
    if (first !== undefined && first.index !== this.lastIndex + 1) {
      return this.inconsistent(`entries start at index ${first.index} but the log ends at ` +
        `${this.lastIndex}`);
    }
    for (const entry of entries) this.entries.push(entry);
    return undefined;
  }

  private truncate(lastKeptIndex: LogIndex): WalError | undefined {
    if (lastKeptIndex > this.lastIndex || lastKeptIndex < this.hardState.commitIndex ||
      (lastKeptIndex < this.baseIndex && !this.compactedStart())) {
      return this.inconsistent(`truncate to index ${lastKeptIndex} outside [commit index ` +
        `${this.hardState.commitIndex}, last index ${this.lastIndex}]`);
    }
    if (lastKeptIndex < this.baseIndex) {
      // A segment's header gives the index after the log's end when it was opened; a
      // conflicting append may then cut the log back below it (uncommitted entries only: the
      // check above). When compaction removed the segments before this one, the log now
      // starts at the cut, and a snapshot at or after it must cover what came before (finish).
      this.entries = [];
      this.baseIndex = lastKeptIndex;
      return undefined;
    }
    this.entries.length = lastKeptIndex - this.baseIndex;
    return undefined;
  }

  /** The log starts at a compacted segment's header, not at index 0 or a snapshot record. */
  private compactedStart(): boolean {
    return this.baseTerm === undefined && this.installedIndex < this.baseIndex;
  }

  private inconsistent(detail: string): WalError {
    return walError('inconsistent-log', this.where.file, this.where.offsetBytes, detail);
  }
}

/**
 * Whether `storage` holds anything of a log: a segment, a snapshot file (in `snapshotStorage`,
 * by default the same directory), or a manifest that claims synced records. A data dir checks
 * this before it starts a new log in `storage`.
 */
export function walHoldsRecords(storage: Storage, snapshotStorage: Storage = storage): boolean {
  const files = storage.list();
  if (files.some((name) => segmentSequence(name) !== undefined)) return true;
  const snapshots = scanSnapshots(snapshotStorage);
  if (snapshots.valid.length > 0 || snapshots.damaged.length > 0) return true;
  const { claim, floor } = readManifest(storage.read(MANIFEST_FILE));
  return (claim !== undefined && claimExceeds(claim, NO_CLAIM)) || floor.snapshotIndex > 0;
}
