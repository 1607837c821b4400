/**
 * The key-value store as a Raft state machine's snapshot (Raft §7): taken in steps, so a large
 * store never stalls the event loop (the store's keys are captured copy-on-write, then encoded
 * a section per step while entries keep applying), and restored from either byte format.
 */
import {
  decodeKvSnapshot, KvSnapshotEncoder, type KvStore,
} from '../../core/kv/index.js';
import { CoordError } from '../../errors.js';
import type { SnapshotSteps } from '../raft/raft-runtime.js';

/** The store as of now, encoded over later `step()` calls (see `StateMachine.beginSnapshot`). */
export function kvSnapshotSteps(store: KvStore): SnapshotSteps {
  const capture = store.captureSnapshot();
  const encoder = new KvSnapshotEncoder(capture);
  return {
    step: () => {
      const bytes = encoder.step();
      // Every key was read before the last (join) steps: stop recording changes.
      if (bytes !== undefined) capture.release();
      return bytes;
    },
    cancel: () => capture.release(),
  };
}

/**
 * Replaces the store's state with the snapshot in `data`. Throws CONCLAVE_STORAGE_CORRUPT,
 * naming the reason, for bytes that are not a usable snapshot (the Raft layer checked their
 * CRC, so this is damage before it, or a format this version does not know).
 */
export function restoreKvSnapshot(store: KvStore, data: Uint8Array): void {
  const decoded = decodeKvSnapshot(data);
  if ('kind' in decoded) {
    throw new CoordError('CONCLAVE_STORAGE_CORRUPT',
      `the key-value snapshot (${data.length} bytes) cannot be used: ${decoded.reason}`);
  }
  store.restore(decoded);
}
