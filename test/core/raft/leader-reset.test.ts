/**
 * Goal: the transport's reset hint speeds up failover after a leader process dies, through
 * pre-vote only (issue #9; RaftConfig.preVoteOnLeaderReset): a follower whose leader link reset
 * pre-votes early; a receiver keeps leader stickiness unless it too saw the reset; a fresh
 * message clears the hint; a silent cut-off and a flapping link behave as before. Method:
 * single RaftNodes stepped by hand for the exact rules, and 3- and 5-node in-process clusters
 * (test harness, seeded Prng, virtual time, instant delivery) for failover times and terms,
 * each compared with the same run without the hint so that the tests can fail.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term, type NodeId } from '../../../src/core/ids.js';
import type { RaftMessage, RaftNode, RaftTuning } from '../../../src/core/raft/index.js';
import { Cluster, described, drain, loneNode } from './harness.js';

const n = nodeId;
const heartbeat = (t: number): RaftMessage =>
  ({ kind: 'heartbeat', term: term(t), commitIndex: logIndex(0) });
const preVote = (t: number): RaftMessage =>
  ({ kind: 'pre-vote', term: term(t), lastLogIndex: logIndex(0), lastLogTerm: term(0) });

/** LOCAL tuning: electionTimeoutMsMin 300, so the reset delay falls in [0, 30). */
const SPAN_MS = 30;

/** n1, a follower of n2 in term 1 that has just heard a heartbeat at `nowMs`. */
function followerOfN2(tuning: Partial<RaftTuning> = {}, nowMs = 1000): RaftNode {
  const node = loneNode({ id: 'n1', voters: ['n1', 'n2', 'n3'], tuning, nowMs });
  node.step(n('n2'), heartbeat(1), nowMs);
  drain(node);
  assert.equal(node.status().leaderId, 'n2');
  return node;
}

function roleReasons(node: RaftNode, atMs: number): string[] {
  node.tick(atMs);
  return drain(node).flatMap((r) => r.events)
    .flatMap((e) => (e.kind === 'role-changed' ? [`${e.from}->${e.to} ${e.reason}`] : []));
}

describe('raft: leader reset: the pre-candidate side', () => {
  test('a reset of the leader link brings the pre-vote forward to within the delay span', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const node = loneNode({ seed, nowMs: 1000 });
      node.step(n('n2'), heartbeat(1), 1000);
      drain(node);
      assert.ok(node.nextDeadlineMs() >= 1300, 'the usual timeout first');
      node.peerReset(n('n2'), 1001);
      const deadlineMs = node.nextDeadlineMs();
      assert.ok(deadlineMs >= 1001 && deadlineMs < 1001 + SPAN_MS, `deadline ${deadlineMs}`);
      assert.deepEqual(roleReasons(node, deadlineMs),
        ['follower->pre-candidate leader-link-reset']);
      assert.equal(node.status().term, 1, 'a pre-vote does not raise the term');
    }
  });

  test('each follower starts in its own slot: the voters but the leader, in id order', () => {
    const voters = ['n1', 'n2', 'n3', 'n4', 'n5'];
    const slotMs = SPAN_MS / 4; // n1, n3, n4, n5 may campaign; n2 leads
    for (const [id, slot] of [['n1', 0], ['n3', 1], ['n4', 2], ['n5', 3]] as const) {
      for (let seed = 1; seed <= 10; seed++) {
        const node = loneNode({ id, voters, seed, nowMs: 1000 });
        node.step(n('n2'), heartbeat(1), 1000);
        drain(node);
        node.peerReset(n('n2'), 1000);
        const delayMs = node.nextDeadlineMs() - 1000;
        assert.ok(delayMs >= slot * slotMs && delayMs < (slot + 1) * slotMs,
          `${id} seed ${seed}: ${delayMs} ms`);
      }
    }
  });

  test('the pre-vote goes to every other voter, for the next term', () => {
    const node = followerOfN2();
    node.peerReset(n('n2'), 1000);
    node.tick(node.nextDeadlineMs());
    assert.deepEqual(described(drain(node)), [
      'n2: pre-vote t=2 last=0/0',
      'n3: pre-vote t=2 last=0/0',
    ]);
  });

  test('a reset of a peer that is not the leader changes nothing', () => {
    const node = followerOfN2();
    const before = node.nextDeadlineMs();
    node.peerReset(n('n3'), 1000);
    node.peerReset(n('n9'), 1000); // not a member
    assert.equal(node.nextDeadlineMs(), before);
    assert.equal(node.hasReady(), false);
  });

  test('a fresh message from the leader clears the hint and restores the usual timeout', () => {
    const node = followerOfN2();
    node.peerReset(n('n2'), 1000);
    assert.ok(node.nextDeadlineMs() < 1000 + SPAN_MS);
    node.step(n('n2'), heartbeat(1), 1005); // the leader reconnected
    drain(node);
    assert.ok(node.nextDeadlineMs() >= 1305, `deadline ${node.nextDeadlineMs()}`);
    node.step(n('n3'), preVote(2), 1010);
    assert.equal(node.hasReady(), false, 'stickiness holds again: no answer');
  });

  test('without preVoteOnLeaderReset, or without preVote, the hint is ignored', () => {
    for (const tuning of [{ preVoteOnLeaderReset: false }, { preVote: false }]) {
      const node = followerOfN2(tuning);
      const before = node.nextDeadlineMs();
      node.peerReset(n('n2'), 1000);
      assert.equal(node.nextDeadlineMs(), before, JSON.stringify(tuning));
    }
  });
});

describe('raft: leader reset: the pre-vote receiver side', () => {
  test('a receiver that hears the leader and saw no reset refuses (thesis §9.6)', () => {
    const node = followerOfN2();
    node.step(n('n3'), preVote(2), 1010);
    assert.equal(node.hasReady(), false);
    assert.equal(node.status().term, 1);
  });

  test('a receiver that saw the leader link reset too grants the pre-vote', () => {
    const node = followerOfN2();
    node.peerReset(n('n2'), 1000);
    node.step(n('n3'), preVote(2), 1002);
    assert.deepEqual(described(drain(node)), ['n3: pre-vote-response t=2 granted']);
    assert.equal(node.status().term, 1, 'a pre-vote never changes the receiver term');
  });

  test('real votes keep every rule: a stale log is refused even after the reset', () => {
    const node = followerOfN2();
    node.step(n('n2'), { kind: 'append', term: term(1), prevLogIndex: logIndex(0),
      prevLogTerm: term(0), commitIndex: logIndex(0), entries: [{ index: logIndex(1),
        term: term(1), kind: 'noop', data: new Uint8Array(0) }] }, 1001);
    drain(node);
    node.peerReset(n('n2'), 1002);
    node.step(n('n3'), preVote(2), 1003); // lastLogIndex 0: behind
    node.step(n('n3'), { kind: 'vote', term: term(2), lastLogIndex: logIndex(0),
      lastLogTerm: term(0) }, 1003);
    assert.deepEqual(described(drain(node)), [
      'n3: pre-vote-response t=1 refused',
      'n3: vote-response t=2 refused',
    ]);
  });

  test('with leaseBasedReads a receiver keeps its stickiness (the lease rests on it)', () => {
    const node = followerOfN2({ leaseBasedReads: true }, 1000);
    node.step(n('n2'), heartbeat(1), 1400); // past the restart quiet period
    drain(node);
    node.peerReset(n('n2'), 1401);
    assert.ok(node.nextDeadlineMs() < 1401 + SPAN_MS, 'the early start still applies');
    node.step(n('n3'), preVote(2), 1402);
    assert.equal(node.hasReady(), false);
  });
});

/** Runs a cluster until `leader` leads and heartbeats flowed a while; returns the cluster. */
function settled(nodes: number, seed: number, tuning: Partial<RaftTuning> = {}):
  { c: Cluster; leader: NodeId } {
  const c = new Cluster({ ids: Array.from({ length: nodes }, (_, i) => `n${i + 1}`), seed,
    tuning });
  const leader = c.elect();
  c.runFor(500);
  assert.equal(c.leader(), leader);
  return { c, leader };
}

/** Time from now until some node other than `old` leads, or Infinity within 5 s. */
function failoverMs(c: Cluster, old: NodeId): number {
  const startMs = c.nowMs;
  while (c.nowMs < startMs + 5000) {
    const leader = c.leader();
    if (leader !== undefined && leader !== old) return c.nowMs - startMs;
    c.runFor(1);
  }
  return Number.POSITIVE_INFINITY;
}

describe('raft: leader reset: failover in a cluster', () => {
  test('a crash seen as resets by every survivor elects within the delay span', () => {
    for (const nodes of [3, 5]) {
      for (let seed = 1; seed <= 10; seed++) {
        const { c, leader } = settled(nodes, seed);
        c.crashWithResets(leader);
        const tookMs = failoverMs(c, leader);
        // Delivery is instant here: pre-vote, vote and the no-op take no time, so what is
        // left is the random delay (and, rarely, a split vote's full timeout).
        assert.ok(tookMs <= SPAN_MS, `${nodes} nodes, seed ${seed}: ${tookMs} ms`);
        assert.deepEqual(c.violations, []);
      }
    }
  });

  test('a crash seen by a bare majority of 5 elects as fast', () => {
    const { c, leader } = settled(5, 3);
    c.crash(leader);
    const survivors = c.ids.filter((id) => id !== leader);
    for (const id of survivors.slice(0, 3)) c.peerReset(id, leader);
    assert.ok(failoverMs(c, leader) <= SPAN_MS);
  });

  test('a crash seen by a minority only falls back to the election timeout', () => {
    const { c, leader } = settled(5, 3);
    c.crash(leader);
    const survivors = c.ids.filter((id) => id !== leader);
    for (const id of survivors.slice(0, 2)) c.peerReset(id, leader);
    const tookMs = failoverMs(c, leader);
    // The two that saw it pre-vote early; the other two still count the leader live and
    // refuse until electionTimeoutMsMin after its last heartbeat.
    assert.ok(tookMs >= 300 - 50 && tookMs < 5000, `${tookMs} ms`);
  });

  test('a silently cut-off leader (no reset) costs the usual election timeout', () => {
    for (let seed = 1; seed <= 5; seed++) {
      const { c, leader } = settled(3, seed);
      c.isolate(leader);
      const tookMs = failoverMs(c, leader);
      assert.ok(tookMs >= 300 - 50, `seed ${seed}: ${tookMs} ms`);
    }
  });

  test('without the hint a crash costs the election timeout too (the tests above can fail)', () => {
    const { c, leader } = settled(3, 1, { preVoteOnLeaderReset: false });
    c.crashWithResets(leader);
    assert.ok(failoverMs(c, leader) >= 300 - 50);
  });
});

/** How often `id` started a pre-vote on the reset hint. */
function earlyPreVotes(c: Cluster, id: NodeId): number {
  return (c.readies.get(id) ?? []).flatMap((r) => r.events)
    .filter((e) => e.kind === 'role-changed' && e.reason === 'leader-link-reset').length;
}

describe('raft: leader reset: flaky links', () => {
  test('a flapping link to one follower causes no term change anywhere', () => {
    for (const nodes of [3, 5]) {
      const { c, leader } = settled(nodes, 7);
      const flaky = c.ids.find((id) => id !== leader)!;
      const term0 = c.node(leader).status().term;
      for (let i = 0; i < 100; i++) {
        c.peerReset(flaky, leader); // the leader stays up: it reconnects and sends again
        c.runFor(37);
      }
      for (const id of c.ids) {
        assert.equal(c.node(id).status().term, term0, `${nodes} nodes: ${id}`);
      }
      assert.equal(c.leader(), leader);
      assert.ok(earlyPreVotes(c, flaky) > 0, 'the flaky follower did pre-vote early');
    }
  });

  test('a link cut between the leader and one follower, reset repeatedly, deposes nobody', () => {
    const { c, leader } = settled(5, 11);
    const flaky = c.ids.find((id) => id !== leader)!;
    const term0 = c.node(leader).status().term;
    c.cut(leader, flaky);
    for (let i = 0; i < 100; i++) {
      c.peerReset(flaky, leader);
      c.runFor(50);
    }
    const rest = c.ids.filter((id) => id !== flaky);
    for (const id of rest) assert.equal(c.node(id).status().term, term0, id);
    assert.equal(c.leader(), leader);
    assert.equal(c.node(flaky).status().term, term0, 'its pre-votes were refused');
    assert.ok(earlyPreVotes(c, flaky) > 0, 'the flaky follower did pre-vote early');
  });
});
