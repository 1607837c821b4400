/**
 * Recovery: reads every segment in order, checks each record, replays them into the log and
 * the last hard state, and cuts a torn tail off the last segment. Refuses (returns a WalError)
 * on anything a crash cannot explain.
 */
import { assertNever } from '../../core/assert.js';
import type { LogIndex, Term } from '../../core/ids.js';
import type { Entry, HardState } from '../../core/raft/types.js';
import type { Storage } from '../../ports/storage.js';
import type { RecoveredRaftState } from '../raft-storage.js';
import type { WalConfig } from './config.js';
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
  readonly action: 'truncated' | 'removed';
  /** Where the torn record started (the new size when truncated). Unit: bytes. */
  readonly offsetBytes: number;
  readonly reason: string;
}

export interface RecoveredWal {
  readonly state: RecoveredRaftState;
  /** The segment new records go to, if one survived recovery. */
  readonly lastSegment: { readonly sequence: number; readonly sizeBytes: number } | undefined;
  readonly repairs: readonly WalRepair[];
}

/**
 * Reads the log in `storage` and repairs a torn tail (truncate or remove, not yet synced: the
 * caller syncs before anyone acts on the result). Other files in the directory are ignored.
 * Refusing (a WalError) changes nothing on disk.
 */
export function recoverWal(storage: Storage, config: WalConfig): RecoveredWal | WalError {
  const sequences = listSegments(storage);
  if ('code' in sequences) return sequences;
  const replay = new Replay();
  const repairs: WalRepair[] = [];
  let lastSegment: RecoveredWal['lastSegment'];
  for (const [i, sequence] of sequences.entries()) {
    const name = segmentName(sequence);
    const isLast = i === sequences.length - 1;
    const bytes = storage.read(name) ?? new Uint8Array(0);
    const scan = scanSegment(name, bytes, isLast, config.recordBytesMax);
    if ('code' in scan) return scan;
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
    if (scan.torn !== undefined) repairs.push({ file: name, action: 'truncated', ...scan.torn });
    lastSegment = { sequence, sizeBytes: scan.validBytes };
  }
  const lastName = lastSegment === undefined ? '' : segmentName(lastSegment.sequence);
  const finished = replay.finish(lastName);
  if (finished !== undefined) return finished;
  // Repair only once the whole log checked out: a refusal leaves the files as they were.
  for (const repair of repairs) {
    if (repair.action === 'removed') storage.remove(repair.file);
    else storage.truncate(repair.file, repair.offsetBytes);
  }
  return { state: { hardState: replay.hardState, entries: replay.entries }, lastSegment, repairs };
}

/** The WAL's segment sequence numbers in order, or an error when one is missing between. */
function listSegments(storage: Storage): number[] | WalError {
  const sequences: number[] = [];
  for (const name of storage.list()) {
    const sequence = segmentSequence(name);
    if (sequence !== undefined) sequences.push(sequence);
  }
  sequences.sort((a, b) => a - b);
  for (let i = 1; i < sequences.length; i++) {
    const previous = sequences[i - 1]!;
    const current = sequences[i]!;
    if (current !== previous + 1) {
      return walError('missing-segment', segmentName(current), 0,
        `segment ${segmentName(previous + 1)} is missing (found ${segmentName(previous)} then ` +
        `${segmentName(current)})`);
    }
  }
  return sequences;
}

/** Applies intact records in order, checking that they tell one consistent story. */
class Replay {
  readonly entries: Entry[] = [];
  hardState: HardState = INITIAL_HARD_STATE;
  private where = { file: '', offsetBytes: 0 };

  private get lastIndex(): number {
    return this.entries.length;
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
      default: return assertNever(record, 'WAL record');
    }
  }

  /** Checks what holds only once every record is in. */
  finish(lastFile: string): WalError | undefined {
    if (this.hardState.commitIndex > this.lastIndex) {
      this.where = { file: lastFile, offsetBytes: 0 };
      return this.inconsistent(`hard state commits index ${this.hardState.commitIndex} but the ` +
        `log ends at ${this.lastIndex}`);
    }
    return undefined;
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
    if (header.firstIndex !== this.lastIndex + 1) {
      // The first segment of a log without snapshots must start at index 1.
      const kind = this.lastIndex === 0 ? 'missing-segment' : 'inconsistent-log';
      return walError(kind, file, offsetBytes, `segment starts at index ${header.firstIndex} ` +
        `but the segments before it end at index ${this.lastIndex}`);
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
    if (lastKeptIndex > this.lastIndex || lastKeptIndex < this.hardState.commitIndex) {
      return this.inconsistent(`truncate to index ${lastKeptIndex} outside [commit index ` +
        `${this.hardState.commitIndex}, last index ${this.lastIndex}]`);
    }
    this.entries.length = lastKeptIndex;
    return undefined;
  }

  private inconsistent(detail: string): WalError {
    return walError('inconsistent-log', this.where.file, this.where.offsetBytes, detail);
  }
}
