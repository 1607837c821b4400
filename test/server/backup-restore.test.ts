/**
 * server: backup restore — the seeded data dir's snapshot names the new cluster's members and
 * nothing else: no peer address and no client URL of the backed-up cluster (a backup holds no
 * membership), so restored members use their --cluster addresses on new machines.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { nodeId } from '../../src/core/ids.js';
import { decodeSnapshot } from '../../src/runtime/snapshot/index.js';
import { restoreBackup } from '../../src/server/backup-restore.js';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('server: backup restore', () => {
  test('the restored snapshot holds the new members by name only, at the backup\'s index',
    async () => {
    const root = mkdtempSync(join(tmpdir(), 'conclave-restore-'));
    dirs.push(root);
    const data = new Uint8Array([2, 0, 0, 0, 1]);
    const backup = { data, summary: { clusterId: 'aaaaaaaaaaaaaaaa', index: 42, term: 7,
      revision: 30, keys: 0, dataBytes: data.length, fileBytes: 100, checksum: '00000000' } };
    const members = ['m1', 'm2', 'm4'].map(nodeId);
    const result = await restoreBackup(backup, { dataDir: join(root, 'm4'), name: nodeId('m4'),
      members, clusterName: 'conclave', initialClusterToken: 'new-machines' });
    assert.equal(result.index, 42);
    const snapDir = join(root, 'm4', 'snap');
    const files = readdirSync(snapDir).filter((f) => f.endsWith('.snap'));
    assert.equal(files.length, 1);
    const snapshot = decodeSnapshot(readFileSync(join(snapDir, files[0]!)));
    assert.ok(typeof snapshot !== 'string', String(snapshot));
    assert.deepEqual(snapshot.meta, { index: 42, term: 1,
      membership: { voters: members, learners: [] } });
    assert.deepEqual([...snapshot.data], [...data]);
  });
});
