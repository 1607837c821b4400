/**
 * The WAL's manifest: how far the log is known to have been synced, kept apart from the
 * segments, so that recovery can tell a segment that lost synced records (deleted, emptied,
 * zeroed or cut short by hand or by a faulty disk) from the torn tail a crash leaves. Without
 * it both look alike (a last segment that ends early, or no last segment at all) and recovery
 * would silently drop acknowledged writes.
 *
 * The file `wal-manifest` is a sequence of fixed-size claims, little-endian:
 * ```
 * claim = magic:u32 ("CWM1")  crc:u32  sequence:u64  syncedBytes:u64
 *         crc = CRC-32C of sequence and syncedBytes
 * ```
 * A claim says: segment `sequence` held `syncedBytes` bytes of intact records, all covered by a
 * completed sync (sequence 0: nothing synced yet). The newest claim is the largest by
 * (sequence, syncedBytes); claims only grow, because a segment only grows once synced (recovery
 * cuts only bytes that were never synced) and a new segment has a higher sequence.
 *
 * Cost on the write path: one 24-byte append per batch, after the batch's own sync completed,
 * and no sync of its own. The claim is written only once the bytes it names are durable, so it
 * never says more than the disk holds (no false refusal after a power loss); a power loss can
 * lose recent claims (it says less: the check is weaker for the last seconds, never wrong). A
 * process crash loses nothing (the page cache survives). The file is created synced, and
 * rewritten atomically (write a temp file, sync, rename, sync the directory) once it reaches
 * `WalConfig.manifestBytesMax`, off the write path.
 */
import { crc32c } from '../../core/checksum.js';

export const MANIFEST_FILE = 'wal-manifest';
export const MANIFEST_TEMP_FILE = 'wal-manifest.tmp';
/** "CWM1" as a little-endian u32: manifest format version 1. */
export const MANIFEST_MAGIC = 0x314d5743;
export const MANIFEST_CLAIM_BYTES = 24;

/** Segment `sequence` held `syncedBytes` bytes of synced records. */
export interface SyncClaim {
  readonly sequence: number;
  /** Unit: bytes from the start of the segment file. */
  readonly syncedBytes: number;
}

export const NO_CLAIM: SyncClaim = Object.freeze({ sequence: 0, syncedBytes: 0 });

/** Whether `a` says more than `b`: a later segment, or more of the same one. */
export function claimExceeds(a: SyncClaim, b: SyncClaim): boolean {
  return a.sequence > b.sequence || (a.sequence === b.sequence && a.syncedBytes > b.syncedBytes);
}

export function encodeClaim(claim: SyncClaim): Uint8Array {
  const bytes = new Uint8Array(MANIFEST_CLAIM_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MANIFEST_MAGIC, true);
  setU64(view, 8, claim.sequence);
  setU64(view, 16, claim.syncedBytes);
  view.setUint32(4, crc32c(bytes, 8, MANIFEST_CLAIM_BYTES), true);
  return bytes;
}

export interface ManifestRead {
  /** The newest intact claim; undefined when the file is missing or holds none. */
  readonly claim: SyncClaim | undefined;
  /** Claims that failed their checksum or magic (a torn last one is normal after a crash). */
  readonly damagedClaims: number;
}

/** Reads the manifest's bytes (undefined: no file). Total: any bytes give an answer. */
export function readManifest(bytes: Uint8Array | undefined): ManifestRead {
  if (bytes === undefined) return { claim: undefined, damagedClaims: 0 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let claim: SyncClaim | undefined;
  let damagedClaims = 0;
  for (let at = 0; at + MANIFEST_CLAIM_BYTES <= bytes.length; at += MANIFEST_CLAIM_BYTES) {
    const decoded = decodeClaim(bytes, view, at);
    if (decoded === undefined) damagedClaims++;
    else if (claim === undefined || claimExceeds(decoded, claim)) claim = decoded;
  }
  // A partial claim at the end is a torn append.
  if (bytes.length % MANIFEST_CLAIM_BYTES !== 0) damagedClaims++;
  return { claim, damagedClaims };
}

function decodeClaim(bytes: Uint8Array, view: DataView, at: number): SyncClaim | undefined {
  if (view.getUint32(at, true) !== MANIFEST_MAGIC) return undefined;
  if (view.getUint32(at + 4, true) !== crc32c(bytes, at + 8, at + MANIFEST_CLAIM_BYTES)) {
    return undefined;
  }
  const sequence = getU64(view, at + 8);
  const syncedBytes = getU64(view, at + 16);
  if (sequence === undefined || syncedBytes === undefined) return undefined;
  return { sequence, syncedBytes };
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
