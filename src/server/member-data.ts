/**
 * A member's data dir opened at start, before any listener: the directory checked private
 * (src/adapters/data-dir.ts), its identity written at the first start and checked at every
 * later one (member-identity.ts), and its write-ahead log recovered. Any refusal is a
 * CoordError (or a StorageError for the disk's own failures) with one line naming the reason;
 * nothing is left open when it throws.
 *
 * First start, in this order, so that a crash at any point leaves a dir that starts again:
 * 1. no identity file, and the WAL directory holds no record (`walHoldsRecords`): a new member;
 *    an identity-less WAL that does hold records is refused (CONCLAVE_DATA_DIR_FOREIGN);
 * 2. the WAL is opened, which creates its manifest, and synced;
 * 3. the identity is written atomically and durably (temp file, sync, rename, sync dir).
 * Later starts require the manifest (`requireManifest`): it exists since step 2.
 */
import { openDataDir, SNAP_SUBDIRECTORY, WAL_SUBDIRECTORY } from '../adapters/data-dir.js';
import type { FileStorage } from '../adapters/file-storage.js';
import { AssertionError } from '../core/assert.js';
import type { NodeId } from '../core/ids.js';
import { CoordError } from '../errors.js';
import type { Storage } from '../ports/storage.js';
import {
  WAL_DEFAULTS, openWal, walHoldsRecords, type Wal, type WalConfig, type WalRepair,
} from '../runtime/wal/index.js';
import {
  IDENTITY_FILE, IDENTITY_TEMP_FILE, decodeIdentity, encodeIdentity, expectedIdentity,
  identityMismatch, type MemberIdentity,
} from './member-identity.js';

export interface MemberDataOptions {
  readonly dataDir: string;
  readonly name: NodeId;
  readonly clusterName: string;
  /** `--initial-cluster-token` (empty: none). */
  readonly initialClusterToken: string;
  /** Every member's name (the cluster id is derived from them). */
  readonly members: readonly NodeId[];
  /** Accept a data dir more open than 0700. */
  readonly insecure: boolean;
  /** Default: WAL_DEFAULTS. */
  readonly wal?: WalConfig;
  /** A member joining a running cluster takes its id instead of deriving one. */
  readonly clusterId?: string | undefined;
}

export interface MemberData {
  readonly directory: string;
  readonly identity: MemberIdentity;
  /** Recovered and open; its first `sync` completes after the recovery sync. */
  readonly wal: Wal;
  readonly walStorage: Storage;
  /** `<data-dir>/snap`: the WAL's snapshot files. */
  readonly snapStorage: Storage;
  /** What recovery cut (a torn tail); log it. */
  readonly repairs: readonly WalRepair[];
  /** This start created the identity: a new member. */
  readonly bootstrapped: boolean;
  /** Waits for the WAL's last batch, then releases every file descriptor. Idempotent. */
  close(): Promise<void>;
}

export async function openMemberData(options: MemberDataOptions): Promise<MemberData> {
  const dir = openDataDir(options.dataDir, { insecure: options.insecure });
  let walStorage: FileStorage | undefined;
  let snapStorage: FileStorage | undefined;
  let wal: Wal | undefined;
  try {
    walStorage = dir.subdirectory(WAL_SUBDIRECTORY);
    snapStorage = dir.subdirectory(SNAP_SUBDIRECTORY);
    const { stored, expected } = checkIdentity(options, dir.root, walStorage, snapStorage,
      dir.directory);
    const opened = openWal(walStorage, options.wal ?? WAL_DEFAULTS,
      { requireManifest: stored !== undefined, snapshotStorage: snapStorage });
    if ('error' in opened) throw new CoordError(opened.error.code, opened.error.message);
    wal = opened.wal;
    if (stored === undefined) {
      await syncOf(wal); // The manifest is durable before the identity says the dir is set up.
      await writeIdentity(dir.root, expected);
    }
    let closed: Promise<void> | undefined;
    return {
      directory: dir.directory, identity: expected, wal, walStorage, snapStorage,
      repairs: opened.repairs, bootstrapped: stored === undefined,
      close: () => (closed ??= closeAll(dir.root, [walStorage, snapStorage], wal)),
    };
  } catch (error) {
    await closeAll(dir.root, [walStorage, snapStorage], wal);
    throw error;
  }
}

/** What the dir says it is and what this member is; throws when they must not meet. */
function checkIdentity(options: MemberDataOptions, root: Storage, walStorage: Storage,
  snapStorage: Storage, directory: string):
  { stored: MemberIdentity | undefined; expected: MemberIdentity } {
  const derived = expectedIdentity(options.name, {
    clusterName: options.clusterName, token: options.initialClusterToken,
    members: options.members,
  });
  const expected = options.clusterId === undefined ? derived
    : { ...derived, clusterId: options.clusterId };
  const stored = readIdentity(root, directory);
  if (stored !== undefined) {
    const mismatch = identityMismatch(stored, expected);
    if (mismatch !== undefined) {
      throw new CoordError('CONCLAVE_DATA_DIR_FOREIGN',
        `refusing data dir ${directory}: ${mismatch}`);
    }
  } else if (walHoldsRecords(walStorage, snapStorage)) {
    throw new CoordError('CONCLAVE_DATA_DIR_FOREIGN', `refusing data dir ${directory}: its ` +
      `write-ahead log holds records but there is no ${IDENTITY_FILE} file, so whose they ` +
      'are is unknown (made by an older version, or the file was removed); use an empty data ' +
      'dir for a new member');
  }
  return { stored, expected };
}

/** Lets the WAL's batch in flight finish (it writes from its callback), then closes. */
async function closeAll(root: FileStorage, storages: readonly (FileStorage | undefined)[],
  wal: Wal | undefined): Promise<void> {
  if (wal !== undefined) await syncOf(wal).catch(() => undefined);
  for (const storage of storages) storage?.close();
  root.close();
}

/** The stored identity, undefined when there is none; a damaged one is refused. */
function readIdentity(root: Storage, directory: string): MemberIdentity | undefined {
  const bytes = root.read(IDENTITY_FILE);
  if (bytes === undefined) return undefined;
  const identity = decodeIdentity(bytes);
  if (typeof identity !== 'string') return identity;
  throw new CoordError('CONCLAVE_STORAGE_CORRUPT', `refusing data dir ${directory}: ` +
    `${IDENTITY_FILE} is unreadable (${identity}); restore it from a backup of this member, ` +
    'or replace the member with an empty data dir');
}

function writeIdentity(root: Storage, identity: MemberIdentity): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: unknown): void => {
      if (error instanceof AssertionError) throw error;
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    try {
      root.remove(IDENTITY_TEMP_FILE);
      root.append(IDENTITY_TEMP_FILE, encodeIdentity(identity));
    } catch (error) {
      return failed(error);
    }
    root.sync(IDENTITY_TEMP_FILE, (syncError) => {
      if (syncError !== undefined) return failed(syncError);
      try {
        root.rename(IDENTITY_TEMP_FILE, IDENTITY_FILE);
      } catch (error) {
        return failed(error);
      }
      root.syncDir((dirError) => (dirError === undefined ? resolve() : failed(dirError)));
    });
  });
}

function syncOf(wal: Wal): Promise<void> {
  return new Promise((resolve, reject) =>
    wal.sync((error) => (error === undefined ? resolve() : reject(error))));
}
