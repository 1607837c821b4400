/**
 * Why a write-ahead log refuses to open. These are operating errors (a damaged disk, a file
 * removed by hand), returned as values; the server prints `message` and exits.
 */

export type WalErrorKind =
  /** A record before the log's tail fails its checksum or length, or decodes to nonsense. */
  | 'corrupt-record'
  /** A segment is missing: a gap in the sequence numbers, or the log does not start at 1. */
  | 'missing-segment'
  /** Intact records that contradict each other (an index gap, a header of another segment). */
  | 'inconsistent-log'
  /** A segment written in a format (magic or version) this code does not read. */
  | 'unsupported-format'
  /**
   * The log starts after index 1, or records an installed snapshot, but no valid snapshot file
   * covers what is missing (deleted, or damaged: the file is named).
   */
  | 'missing-snapshot'
  /**
   * The manifest says a segment held synced records that are not there any more: the segment
   * is missing, or holds fewer intact bytes than were synced (deleted, emptied, zeroed, cut).
   */
  | 'records-lost'
  /** The manifest is required (the data dir has one since its start) but missing or unreadable. */
  | 'missing-manifest';

export interface WalError {
  /**
   * Stable code: CONCLAVE_WAL_RECORDS_LOST when the manifest proves synced records are gone
   * (`records-lost`, `missing-manifest`), CONCLAVE_WAL_CORRUPT for every other refusal.
   */
  readonly code: 'CONCLAVE_WAL_CORRUPT' | 'CONCLAVE_WAL_RECORDS_LOST';
  readonly kind: WalErrorKind;
  /** The file at fault (its name in the storage directory). */
  readonly file: string;
  /** Where in `file` the bad record starts. Unit: bytes from the start of the file. */
  readonly offsetBytes: number;
  /** What is wrong, without the location. */
  readonly detail: string;
  /** One paragraph for the operator: where, what, and what to do. */
  readonly message: string;
}

const ADVICE =
  'Refusing to start, so that no acknowledged write is silently lost. Restore this data ' +
  'directory from a backup, or replace this member (docs/raft.md, "A member that lost data"); ' +
  'do not delete files by hand.';

export function walError(
  kind: WalErrorKind,
  file: string,
  offsetBytes: number,
  detail: string,
): WalError {
  const lost = kind === 'records-lost' || kind === 'missing-manifest';
  const message = lost
    ? `write-ahead log lost synced records: ${file}: ${detail}. ${ADVICE}`
    : `write-ahead log damaged: ${file} at byte ${offsetBytes}: ${detail}. ${ADVICE}`;
  const code = lost ? 'CONCLAVE_WAL_RECORDS_LOST' : 'CONCLAVE_WAL_CORRUPT';
  return { code, kind, file, offsetBytes, detail, message };
}
