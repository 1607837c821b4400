/**
 * Goal: linearizable reads without log writes (Raft thesis §6.4 ReadIndex, §6.4.1 leases): a
 * leader confirms its leadership with a heartbeat round sent after the read arrived, many reads
 * share one round, a new leader waits for its first commit, a deposed leader never confirms,
 * followers forward reads, and the opt-in lease answers at once only while it holds. The mutant
 * readsWithoutReadIndex shows a stale read these rules prevent. Method: in-process clusters of
 * the test harness (messages delivered or dropped by hand, virtual time), single nodes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import {
  RAFT_DEFAULTS_LOCAL, validateRaftConfig, type RaftTuning, type ReadFailure, type ReadState,
} from '../../../src/core/raft/index.js';
import { Cluster, drain, envelopes, loneNode, logOf } from './harness.js';

const n = nodeId;

function readStates(c: Cluster, id: string): ReadState[] {
  return (c.readies.get(n(id)) ?? []).flatMap((r) => r.readStates);
}

function readsFailed(c: Cluster, id: string): ReadFailure[] {
  return (c.readies.get(n(id)) ?? []).flatMap((r) => r.readsFailed);
}

function heartbeatRounds(c: Cluster, from: string): string[] {
  return c.sent.filter((s) => s.startsWith(`${from}->`) && s.includes(' heartbeat t=') &&
    s.includes('round='));
}

/** A settled 3-node cluster led by n1, with one write committed. */
function ledBy1(tuning: Partial<RaftTuning> = {}, mutants = {}): Cluster {
  const c = new Cluster({ seed: 3, tuning, mutants });
  c.fire('n1');
  c.deliverAll();
  assert.equal(c.leader(), 'n1');
  c.propose(n('n1'), 'w1');
  c.deliverAll();
  return c;
}

describe('raft: read index', () => {
  test('a leader answers only after a majority answered a round sent after the read', () => {
    const c = ledBy1();
    const commit = c.node('n1').status().commitIndex;
    assert.deepEqual(c.node('n1').readIndex('r1', c.nowMs), { kind: 'pending' });
    c.process(n('n1'));
    assert.deepEqual(readStates(c, 'n1'), [], 'not before the round is answered');
    c.deliver(); // the round reaches n2; its answer is queued
    assert.deepEqual(readStates(c, 'n1'), []);
    c.deliverFirst((m) => m.from === 'n2' && m.message.kind === 'heartbeat-response');
    assert.deepEqual(readStates(c, 'n1'), [{ requestId: 'r1', index: commit }],
      'n1 and n2 are a majority of three');
  });

  test('reads asked together share one heartbeat round', () => {
    const c = ledBy1();
    const before = heartbeatRounds(c, 'n1').length;
    for (let i = 0; i < 50; i++) c.node('n1').readIndex(`r${i}`, c.nowMs);
    c.process(n('n1'));
    c.deliverAll();
    assert.equal(readStates(c, 'n1').length, 50);
    assert.equal(heartbeatRounds(c, 'n1').length - before, 2, 'one round: one heartbeat per peer');
  });

  test('a new leader holds reads until it commits an entry of its own term', () => {
    const node = loneNode({ state: logOf([1], 1, 1) });
    node.tick(node.nextDeadlineMs());
    node.step(n('n2'), { kind: 'pre-vote-response', term: term(2), granted: true }, 1000);
    node.step(n('n2'), { kind: 'vote-response', term: term(2), granted: true }, 1000);
    assert.equal(node.status().role, 'leader');
    drain(node);
    assert.equal(node.status().commitIndex, 1, 'the no-op (index 2, term 2) is not committed');
    node.readIndex('early', 1000);
    const before = drain(node);
    assert.deepEqual(envelopes(before), [], 'no round for it yet');
    node.step(n('n2'), { kind: 'append-response', term: term(2), success: true,
      index: logIndex(2), hintIndex: logIndex(0), hintTerm: term(0) }, 1001);
    const round = envelopes(drain(node))
      .find((e) => e.to === 'n2' && e.message.kind === 'heartbeat');
    assert.ok(round?.message.kind === 'heartbeat' && round.message.readRound !== undefined);
    node.step(n('n2'), { kind: 'heartbeat-response', term: term(2),
      readRound: round.message.readRound }, 1002);
    assert.deepEqual(drain(node).flatMap((r) => r.readStates),
      [{ requestId: 'early', index: 2 }], 'served at the no-op, not at the old commit index 1');
  });

  test('an isolated leader never confirms a read; it fails when check-quorum deposes it', () => {
    const c = ledBy1();
    c.isolate(n('n1'));
    c.node('n1').readIndex('stale?', c.nowMs);
    c.runFor(1_000);
    assert.deepEqual(readStates(c, 'n1'), []);
    assert.deepEqual(readsFailed(c, 'n1'), [{ requestId: 'stale?', reason: 'leadership-lost' }]);
    assert.notEqual(c.node('n1').status().role, 'leader');
  });

  test('a follower forwards the read and gets the leader\'s index', () => {
    const c = ledBy1();
    const commit = c.node('n1').status().commitIndex;
    assert.deepEqual(c.node('n2').readIndex('f1', c.nowMs), { kind: 'pending' });
    c.process(n('n2'));
    c.deliverAll();
    assert.deepEqual(readStates(c, 'n2'), [{ requestId: 'f1', index: commit }]);
    assert.ok(c.sent.some((s) => s.startsWith('n2->n1 read-index t=1 id=f1')));
  });

  test('without a leader, reads are rejected; a forwarded read fails when the leader changes', () => {
    const lone = loneNode({ id: 'n2' });
    assert.deepEqual(lone.readIndex('x', 0), { kind: 'rejected', reason: 'no-leader' });
    const c = ledBy1();
    c.cut(n('n1'), n('n2'));
    c.node('n2').readIndex('f2', c.nowMs);
    c.process(n('n2'));
    c.runFor(2_000); // n2 hears nothing, campaigns: its leader changes
    assert.deepEqual(readsFailed(c, 'n2').filter((f) => f.requestId === 'f2'),
      [{ requestId: 'f2', reason: 'leader-changed' }]);
  });

  test('reads beyond pendingReadsMax are dropped', () => {
    const c = ledBy1({ pendingReadsMax: 3 });
    c.isolate(n('n1'));
    for (let i = 0; i < 3; i++) assert.equal(c.node('n1').readIndex(`r${i}`, c.nowMs).kind, 'pending');
    assert.deepEqual(c.node('n1').readIndex('r3', c.nowMs),
      { kind: 'dropped', reason: 'too-many-pending' });
  });

  test('a lone voter confirms its reads by itself', () => {
    const node = loneNode({ voters: ['n1'] });
    node.tick(node.nextDeadlineMs());
    drain(node);
    node.readIndex('solo', 1000);
    const readies = drain(node);
    assert.deepEqual(readies.flatMap((r) => r.readStates),
      [{ requestId: 'solo', index: node.status().commitIndex }]);
  });

  test('mutant readsWithoutReadIndex: a deposed leader serves a stale read', () => {
    for (const mutant of [false, true]) {
      const c = ledBy1({}, { readsWithoutReadIndex: mutant });
      c.isolate(n('n1'));
      c.runFor(1_000); // n2 or n3 wins term 2 and commits past n1's log
      const leader = c.leader();
      assert.ok(leader !== undefined && leader !== 'n1');
      c.propose(leader, 'w2');
      c.deliverAll();
      const newCommit = c.node(leader).status().commitIndex;
      c.node('n1').readIndex('old', c.nowMs);
      c.process(n('n1'));
      const states = readStates(c, 'n1');
      if (mutant) {
        assert.equal(states.length, 1);
        assert.ok(states[0]!.index < newCommit, 'served at an index that misses w2: stale');
      } else {
        assert.deepEqual(states, [], 'no leader known: nothing to serve');
      }
    }
  });
});

describe('raft: read index: leases', () => {
  const lease = { leaseBasedReads: true, clockRateErrorMax: 0.01 };
  // electionTimeoutMsMin 300: the lease is 300 × 0.99 / 1.01 ≈ 294 ms after a round's send.
  const leaseMs = 300 * 0.99 / 1.01;

  test('while the lease holds, reads are answered without a round; then rounds again', () => {
    const c = ledBy1(lease);
    const roundAtMs = c.nowMs;
    c.node('n1').readIndex('confirm', c.nowMs); // one round takes the lease
    c.process(n('n1'));
    c.deliverAll();
    const rounds = heartbeatRounds(c, 'n1').length;
    c.nowMs = roundAtMs + leaseMs - 1;
    c.node('n1').readIndex('leased', c.nowMs);
    c.process(n('n1'));
    assert.deepEqual(readStates(c, 'n1').map((s) => s.requestId), ['confirm', 'leased']);
    assert.equal(heartbeatRounds(c, 'n1').length, rounds, 'no round for the leased read');
    c.isolate(n('n1'));
    c.nowMs = roundAtMs + leaseMs + 1;
    c.node('n1').readIndex('expired', c.nowMs);
    c.process(n('n1'));
    assert.ok(!readStates(c, 'n1').some((s) => s.requestId === 'expired'));
  });

  test('no lease once a leadership transfer started in the term', () => {
    const c = ledBy1(lease);
    c.node('n1').readIndex('confirm', c.nowMs);
    c.process(n('n1'));
    c.deliverAll();
    c.cut(n('n1'), n('n2'));
    c.node('n1').transferLeadership(n('n2'), c.nowMs);
    c.process(n('n1'));
    c.isolate(n('n1'));
    c.node('n1').readIndex('during-transfer', c.nowMs);
    c.process(n('n1'));
    assert.ok(!readStates(c, 'n1').some((s) => s.requestId === 'during-transfer'));
  });

  test('with leases on, a restarted node refuses votes for electionTimeoutMsMin', () => {
    const vote = { kind: 'vote', term: term(5), lastLogIndex: logIndex(1),
      lastLogTerm: term(1) } as const;
    const quiet = loneNode({ id: 'n3', state: logOf([1]), tuning: lease, nowMs: 1000 });
    quiet.step(n('n2'), vote, 1000 + 299);
    assert.equal(quiet.status().term, 1, 'ignored inside the quiet period');
    quiet.step(n('n2'), vote, 1000 + 300);
    assert.equal(quiet.status().vote, 'n2');
    const plain = loneNode({ id: 'n3', state: logOf([1]), nowMs: 1000 });
    plain.step(n('n2'), vote, 1000);
    assert.equal(plain.status().vote, 'n2', 'without leases: no quiet period');
  });

  test('the config refuses leases without check-quorum, and a bad drift bound', () => {
    const config = { ...RAFT_DEFAULTS_LOCAL, id: n('n1'), voters: [n('n1')],
      leaseBasedReads: true, checkQuorum: false, clockRateErrorMax: 0.7 };
    assert.deepEqual(validateRaftConfig(config).map((p) => p.field),
      ['clockRateErrorMax', 'leaseBasedReads,checkQuorum']);
  });
});
