/**
 * Goal: through the runtime, a leader process crash fails over within the reset delay span
 * plus a few round trips (the simulated network reports the dead process's streams as reset,
 * and the runtime hands the hint to the core), while a leader that is silently cut off (no
 * reset) still costs at least electionTimeoutMsMin, as before. Method: 3- and 5-node
 * RuntimeClusters (real runtime, WAL, KV state machine; simulated network of about 0.3 ms per
 * hop, disks of 0.2 ms per sync), timed in virtual time from the crash or cut to the first
 * new leader with its no-op committed, over several seeds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeId } from '../../../src/core/ids.js';
import type { RaftTuning } from '../../../src/core/raft/index.js';
import { RuntimeCluster } from './runtime-cluster.js';

/** Time until a node other than `old` leads with its no-op committed; Infinity past 5 s. */
function failoverMs(c: RuntimeCluster, old: NodeId): number {
  const startMs = c.scheduler.nowMs;
  const ok = c.runUntil(() => {
    const leader = c.leader();
    if (leader === undefined || leader === old) return false;
    const status = c.runtime(leader).status();
    return status.commitIndex === status.lastIndex;
  }, 5_000);
  return ok ? c.scheduler.nowMs - startMs : Number.POSITIVE_INFINITY;
}

function settled(nodes: number, seed: number, tuning: Partial<RaftTuning> = {}) {
  const c = new RuntimeCluster({ nodes, seed, tuning });
  const leader = c.elect();
  c.runUntil(() => false, 200 + seed * 7); // heartbeats flowing, the kill at varied phases
  return { c, leader };
}

describe('runtime: raft: failover on the leader reset hint', () => {
  test('a crashed leader is replaced within the delay span plus a few round trips', () => {
    const spanMs = 0.1 * 300; // leaderResetDelayRatioMax × electionTimeoutMsMin (LOCAL)
    const took: number[] = [];
    for (const nodes of [3, 5]) {
      for (let seed = 1; seed <= 8; seed++) {
        const { c, leader } = settled(nodes, seed);
        c.hosts.get(leader)!.crash();
        took.push(failoverMs(c, leader));
      }
    }
    // Pre-vote, vote and the no-op are a few hops of ~0.3 ms and syncs of 0.2 ms each. A rare
    // split vote would cost a full timeout: these seeds have none.
    for (const ms of took) assert.ok(ms < spanMs + 10, `failover times ${took.join(', ')}`);
  });

  test('a silently cut-off leader still costs at least electionTimeoutMsMin', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const { c, leader } = settled(3, seed);
      const others = c.ids.filter((id) => id !== leader);
      c.network.partition([[leader], others]);
      const ms = failoverMs(c, leader);
      assert.ok(ms >= c.tuning.electionTimeoutMsMin - 50 && ms < 5_000, `seed ${seed}: ${ms} ms`);
    }
  });

  test('without preVoteOnLeaderReset a crash costs the election timeout again', () => {
    const { c, leader } = settled(3, 1, { preVoteOnLeaderReset: false });
    c.hosts.get(leader)!.crash();
    assert.ok(failoverMs(c, leader) >= c.tuning.electionTimeoutMsMin - 50);
  });
});
