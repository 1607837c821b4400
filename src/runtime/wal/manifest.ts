/**
 * The WAL's manifest: how far the log is known to have been synced, and which segments were
 * removed on purpose, kept apart from the segments, so that recovery can tell a segment that
 * lost synced records (deleted, emptied, zeroed or cut short by hand or by a faulty disk) from
 * the torn tail a crash leaves, and from the old segments compaction removes after a snapshot.
 * Without it these look alike (a last segment that ends early, no last segment at all, a log
 * that starts later than it did) and recovery would silently drop acknowledged writes.
 *
 * The file `wal-manifest` is a sequence of fixed-size records, little-endian:
 * ```
 * record = magic:u32  crc:u32  a:u64  b:u64        crc = CRC-32C of a and b
 * claim  = "CWM1"  sequence  syncedBytes
 * floor  = "CWF1"  firstSequence  snapshotIndex
 * ```
 * A claim says: segment `sequence` held `syncedBytes` bytes of intact records, all covered by a
 * completed sync (sequence 0: nothing synced yet). The newest claim is the largest by
 * (sequence, syncedBytes); claims only grow, because a segment only grows once synced (recovery
 * cuts only bytes that were never synced) and a new segment has a higher sequence.
 *
 * A floor says: the segments before `firstSequence` were removed on purpose, once a durable
 * snapshot at `snapshotIndex` covered every entry in them; segment `firstSequence` and every
 * later one were not. The newest floor is the largest `firstSequence`. Compaction makes its
 * floor durable (append, then sync this file) before it unlinks the first segment, so:
 * - a crash before the floor is durable finds the old segments all there (nothing removed);
 * - a crash after it finds some of the segments below the floor still there (the unlinks, or
 *   their directory sync, did not happen): recovery removes them, as the compaction would have;
 * - at no point is a segment gone that the newest durable floor says was kept: so a missing
 *   segment at or above the floor is always lost data, and recovery refuses it
 *   (CONCLAVE_WAL_RECORDS_LOST), whatever snapshot exists.
 * The floor names a segment whose creation is durable (its first batch completed), so a power
 * loss cannot take away the segment the floor says comes first.
 *
 * Cost on the write path: one 24-byte append per batch, after the batch's own sync completed,
 * and no sync of its own. The claim is written only once the bytes it names are durable, so it
 * never says more than the disk holds (no false refusal after a power loss); a power loss can
 * lose recent claims (it says less: the check is weaker for the last seconds, never wrong). A
 * process crash loses nothing (the page cache survives). A floor costs one sync per compaction
 * (once per snapshot). The file is created synced, and rewritten atomically (write a temp file
 * with the newest claim and floor, sync, rename, sync the directory) once it reaches
 * `WalConfig.manifestBytesMax`, off the write path; a rewrite and a compaction never overlap,
 * so a floor is never appended to a file a rename is about to replace.
 */
import { crc32c } from '../../core/checksum.js';

export const MANIFEST_FILE = 'wal-manifest';
export const MANIFEST_TEMP_FILE = 'wal-manifest.tmp';
/** "CWM1" as a little-endian u32: a sync claim, manifest format version 1. */
export const MANIFEST_MAGIC = 0x314d5743;
/** "CWF1" as a little-endian u32: a compaction floor, manifest format version 1. */
export const FLOOR_MAGIC = 0x31465743;
/** The size of every manifest record (claims and floors). Unit: bytes. */
export const MANIFEST_CLAIM_BYTES = 24;

/** Segment `sequence` held `syncedBytes` bytes of synced records. */
export interface SyncClaim {
  readonly sequence: number;
  /** Unit: bytes from the start of the segment file. */
  readonly syncedBytes: number;
}

export const NO_CLAIM: SyncClaim = Object.freeze({ sequence: 0, syncedBytes: 0 });

/** The segments before `firstSequence` were removed on purpose (see the file comment). */
export interface CompactionFloor {
  readonly firstSequence: number;
  /** The snapshot that covered the removed segments' entries (for messages). */
  readonly snapshotIndex: number;
}

/** No floor record: nothing is known to have been removed (a manifest from before floors). */
export const NO_FLOOR: CompactionFloor = Object.freeze({ firstSequence: 0, snapshotIndex: 0 });

/** Whether `a` says more than `b`: a later segment, or more of the same one. */
export function claimExceeds(a: SyncClaim, b: SyncClaim): boolean {
  return a.sequence > b.sequence || (a.sequence === b.sequence && a.syncedBytes > b.syncedBytes);
}

export function encodeClaim(claim: SyncClaim): Uint8Array {
  return encodeRecord(MANIFEST_MAGIC, claim.sequence, claim.syncedBytes);
}

export function encodeFloor(floor: CompactionFloor): Uint8Array {
  return encodeRecord(FLOOR_MAGIC, floor.firstSequence, floor.snapshotIndex);
}

function encodeRecord(magic: number, a: number, b: number): Uint8Array {
  const bytes = new Uint8Array(MANIFEST_CLAIM_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, magic, true);
  setU64(view, 8, a);
  setU64(view, 16, b);
  view.setUint32(4, crc32c(bytes, 8, MANIFEST_CLAIM_BYTES), true);
  return bytes;
}

export interface ManifestRead {
  /** The newest intact claim; undefined when the file is missing or holds none. */
  readonly claim: SyncClaim | undefined;
  /** The newest intact floor; NO_FLOOR when there is none. */
  readonly floor: CompactionFloor;
  /** Records that failed their checksum or magic (a torn last one is normal after a crash). */
  readonly damagedClaims: number;
}

/** Reads the manifest's bytes (undefined: no file). Total: any bytes give an answer. */
export function readManifest(bytes: Uint8Array | undefined): ManifestRead {
  if (bytes === undefined) return { claim: undefined, floor: NO_FLOOR, damagedClaims: 0 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let claim: SyncClaim | undefined;
  let floor = NO_FLOOR;
  let damagedClaims = 0;
  for (let at = 0; at + MANIFEST_CLAIM_BYTES <= bytes.length; at += MANIFEST_CLAIM_BYTES) {
    const decoded = decodeRecord(bytes, view, at);
    if (decoded === undefined) {
      damagedClaims++;
    } else if (decoded.magic === MANIFEST_MAGIC) {
      const read = { sequence: decoded.a, syncedBytes: decoded.b };
      if (claim === undefined || claimExceeds(read, claim)) claim = read;
    } else if (decoded.a > floor.firstSequence) {
      floor = { firstSequence: decoded.a, snapshotIndex: decoded.b };
    }
  }
  // A partial record at the end is a torn append.
  if (bytes.length % MANIFEST_CLAIM_BYTES !== 0) damagedClaims++;
  return { claim, floor, damagedClaims };
}

function decodeRecord(bytes: Uint8Array, view: DataView, at: number):
  { magic: number; a: number; b: number } | undefined {
  const magic = view.getUint32(at, true);
  if (magic !== MANIFEST_MAGIC && magic !== FLOOR_MAGIC) return undefined;
  if (view.getUint32(at + 4, true) !== crc32c(bytes, at + 8, at + MANIFEST_CLAIM_BYTES)) {
    return undefined;
  }
  const a = getU64(view, at + 8);
  const b = getU64(view, at + 16);
  if (a === undefined || b === undefined) return undefined;
  return { magic, a, b };
}

function setU64(view: DataView, at: number, value: number): void {
  view.setUint32(at, value % 2 ** 32, true);
  view.setUint32(at + 4, Math.floor(value / 2 ** 32), true);
}

/** The u64 at `at`, or undefined beyond 2^53 − 1 (we never write such values). */
function getU64(view: DataView, at: number): number | undefined {
  const value = view.getUint32(at, true) + view.getUint32(at + 4, true) * 2 ** 32;
  return Number.isSafeInteger(value) ? value : undefined;
}
