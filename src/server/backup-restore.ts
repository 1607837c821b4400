/**
 * `conclave snapshot status|restore`: a backup file checked whole (backup-file.ts, then the
 * key-value snapshot inside decoded), and a new member's data dir seeded from it. A restored
 * member belongs to a new cluster: its data dir gets the identity of the cluster named by
 * `--initial-cluster` and `--initial-cluster-token`, which must differ from the backed-up
 * cluster's id, and its snapshot file holds the backup's state with the new membership. Every
 * member of the new cluster is restored from the same file, so their logs agree from the
 * snapshot's index on; they then start with `conclave server` as a new cluster.
 *
 * New machines, new addresses: a backup holds the store only, no membership, and the restored
 * snapshot names the members and nothing else (no recorded peer address, no client URL), so
 * each restored member reaches the others at its `--cluster` addresses, and each publishes its
 * client URL anew once it runs (client-url-publisher.ts). Nothing of the old cluster's
 * addresses can reach the new one.
 */
import { dataDirIsEmpty } from '../adapters/data-dir.js';
import type { NodeId } from '../core/ids.js';
import { decodeKvSnapshot } from '../core/kv/index.js';
import type { Snapshot } from '../core/raft/types.js';
import { CoordError, UsageError } from '../errors.js';
import { writeSnapshotFile } from '../runtime/snapshot/snapshot-store.js';
import { BackupReader, type BackupSummary } from './backup-file.js';
import { openMemberData } from './member-data.js';
import { deriveClusterId } from './member-identity.js';

export interface CheckedBackup {
  readonly summary: BackupSummary;
  readonly data: Uint8Array;
}

/** The backup in `bytes`, checked to the last key; CONCLAVE_STORAGE_CORRUPT naming `file`. */
export function checkBackup(file: string, bytes: Uint8Array): CheckedBackup {
  const reader = new BackupReader(true);
  const bad = (reason: string): CoordError =>
    new CoordError('CONCLAVE_STORAGE_CORRUPT', `${file} is not a usable backup: ${reason}`);
  const problem = reader.feed(bytes);
  if (problem !== undefined) throw bad(problem);
  const summary = reader.finish();
  if (typeof summary === 'string') throw bad(summary);
  const data = reader.snapshotData();
  const kv = decodeKvSnapshot(data);
  if ('kind' in kv) throw bad(`its key-value snapshot cannot be read: ${kv.reason}`);
  if (kv.kvs.length !== summary.keys || kv.revision !== summary.revision) {
    throw bad(`its header says ${summary.keys} keys at revision ${summary.revision}, its data `
      + `${kv.kvs.length} keys at revision ${kv.revision}`);
  }
  return { summary, data };
}

export interface RestoreOptions {
  readonly dataDir: string;
  readonly name: NodeId;
  /** The new cluster's member names (from --initial-cluster). */
  readonly members: readonly NodeId[];
  readonly clusterName: string;
  readonly initialClusterToken: string;
}

export interface RestoreResult {
  readonly clusterId: string;
  readonly dataDir: string;
  readonly index: number;
}

/** Seeds `options.dataDir` from `backup`; refuses a non-empty dir or the backup's cluster id. */
export async function restoreBackup(backup: CheckedBackup,
  options: RestoreOptions): Promise<RestoreResult> {
  if (!options.members.includes(options.name)) {
    throw new UsageError(`--name ${options.name} is not in --initial-cluster `
      + `(${options.members.join(',')})`);
  }
  if (!dataDirIsEmpty(options.dataDir)) {
    throw new UsageError(`--data-dir ${options.dataDir} is not empty: a restore seeds a new `
      + 'member only (remove it, or choose another)');
  }
  const clusterId = deriveClusterId({ clusterName: options.clusterName,
    token: options.initialClusterToken, members: options.members });
  if (clusterId === backup.summary.clusterId) {
    throw new UsageError(`the restored cluster would have the backed-up cluster's id `
      + `${clusterId}: give a new --initial-cluster-token`);
  }
  const data = await openMemberData({ dataDir: options.dataDir, name: options.name,
    clusterName: options.clusterName, initialClusterToken: options.initialClusterToken,
    members: options.members, insecure: false });
  try {
    // Term 1: the new cluster's members start at term 0 and elect from there.
    const snapshot: Snapshot = { meta: { index: backup.summary.index as never, term: 1 as never,
      membership: { voters: [...options.members], learners: [] } }, data: backup.data };
    await new Promise<void>((resolve, reject) => writeSnapshotFile(data.snapStorage, snapshot,
      (error) => (error === undefined ? resolve() : reject(error))));
  } finally {
    await data.close();
  }
  return { clusterId, dataDir: data.directory, index: backup.summary.index };
}
