/**
 * server: startNode — three embedded Raft nodes with a user state machine, in one process over
 * real loopback TCP and real files: a proposal is applied on every node, in the same order.
 * Method: real sockets and disks; waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { nodeId } from '../../src/core/ids.js';
import { startNode, type EmbeddedNode } from '../../src/server/start-node.js';
import { waitFor } from '../support/real-cluster.js';
import { freePort } from '../support/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-embed-'));
const nodes: EmbeddedNode<number>[] = [];
after(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  rmSync(dir, { recursive: true, force: true });
});

describe('server: startNode', () => {
  test('a proposal through the leader is applied by every embedded node, in order', async () => {
    const ports = [await freePort(), await freePort(), await freePort()];
    const peers = Object.fromEntries(ports.map((p, i) => [`n${i + 1}`, `127.0.0.1:${p}`]));
    const applied: number[][] = [[], [], []];
    for (let i = 0; i < 3; i++) {
      nodes.push(await startNode<number>({
        id: nodeId(`n${i + 1}`), dataDir: join(dir, `n${i + 1}`), listen: `127.0.0.1:${ports[i]!}`, peers,
        raft: { heartbeatIntervalMs: 20, electionTimeoutMsMin: 150, electionTimeoutMsMax: 300 },
        stateMachine: { apply: (entry) => applied[i]!.push(entry.data[0]!) },
      }));
    }
    const leader = await waitFor(async () => nodes.find((n) => n.status().role === 'leader'), 10_000, 'a leader');
    for (const value of [7, 8, 9]) {
      const outcome = await leader.propose(new Uint8Array([value]));
      assert.equal(outcome.kind, 'applied');
    }
    await waitFor(async () => (applied.every((a) => a.length === 3) ? true : undefined), 5000, 'every node to apply 3 entries');
    assert.deepEqual(applied, [[7, 8, 9], [7, 8, 9], [7, 8, 9]]);
    const follower = nodes.find((n) => n !== leader)!;
    const refused = await follower.propose(new Uint8Array([1]));
    assert.equal(refused.kind, 'failed');
  });
});
