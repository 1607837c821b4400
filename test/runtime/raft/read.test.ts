/**
 * Goal: the runtime's linearizable reads (`RaftRuntime.read`, ReadIndex): served without a log
 * write, after a write they see it, on a follower too (forwarded to the leader, served from the
 * follower's own state machine once it applied the index), and a cut-off leader fails them.
 * Method: a 3-node RuntimeCluster (real runtime, WAL and KV on simulated disks and network).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeId } from '../../../src/core/ids.js';
import type { ReadOutcome } from '../../../src/runtime/raft/raft-runtime.js';
import { encodeKvCommand } from '../../../src/sim/scenarios/raft/sim-kv.js';
import { RuntimeCluster } from './runtime-cluster.js';

/** Puts key=value through `leader` and runs until it applied. */
function put(c: RuntimeCluster, leader: NodeId, key: string, value: string): void {
  let applied = false;
  c.runtime(leader).propose(encodeKvCommand({ kind: 'put', key, value }), (o) => {
    assert.equal(o.kind, 'applied');
    applied = true;
  });
  c.runUntil(() => applied, 2_000);
  assert.ok(applied);
}

/** Reads key at `node`; returns the value seen inside the callback, or the failure. */
function read(c: RuntimeCluster, node: NodeId, key: string): { outcome: ReadOutcome; value?: string } {
  let result: { outcome: ReadOutcome; value?: string } | undefined;
  c.runtime(node).read((outcome) => {
    const value = c.hosts.get(node)!.process!.stateMachine.get(key);
    result = value === undefined ? { outcome } : { outcome, value };
  });
  c.runUntil(() => result !== undefined, 2_000);
  assert.ok(result !== undefined, 'the read never ended');
  return result;
}

describe('runtime: raft: reads', () => {
  test('a read at the leader sees the last write and writes nothing to the log', () => {
    const c = new RuntimeCluster({ seed: 21 });
    const leader = c.elect();
    put(c, leader, 'k', 'v1');
    const lastIndex = c.runtime(leader).status().lastIndex;
    for (let i = 0; i < 20; i++) {
      const r = read(c, leader, 'k');
      assert.equal(r.outcome.kind, 'ready');
      assert.equal(r.value, 'v1');
    }
    assert.equal(c.runtime(leader).status().lastIndex, lastIndex, 'reads wrote no entry');
  });

  test('a read at a follower is forwarded and served once the follower applied the index', () => {
    const c = new RuntimeCluster({ seed: 22 });
    const leader = c.elect();
    const follower = c.ids.find((id) => id !== leader)!;
    put(c, leader, 'k', 'v2');
    const r = read(c, follower, 'k');
    assert.equal(r.outcome.kind, 'ready');
    assert.equal(r.value, 'v2');
  });

  test('a leader cut off from the others fails the read instead of answering stale', () => {
    const c = new RuntimeCluster({ seed: 23 });
    const leader = c.elect();
    put(c, leader, 'k', 'v3');
    for (const id of c.ids) {
      if (id !== leader) {
        c.network.blockLink(leader, id);
        c.network.blockLink(id, leader);
      }
    }
    const r = read(c, leader, 'k');
    assert.equal(r.outcome.kind, 'failed');
    assert.ok(c.scheduler.nowMs > 0);
  });

  test('a stopped node fails reads at once', () => {
    const c = new RuntimeCluster({ seed: 24 });
    const leader = c.elect();
    c.runtime(leader).stop();
    let outcome: ReadOutcome | undefined;
    c.runtime(leader).read((o) => { outcome = o; });
    assert.deepEqual(outcome, { kind: 'failed', reason: 'node stopped' });
  });
});
