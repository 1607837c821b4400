/**
 * Goal: the election rules of RaftNode (Raft §5.2, §5.4.1, thesis §9.6 pre-vote, check-quorum,
 * leader stickiness). Method: single nodes stepped by hand for the exact rules, and 3- or
 * 5-node in-process clusters (test harness, seeded Prng, virtual time) for the behaviours that
 * need several members; mutants prove that the cluster tests can fail.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { RaftMessage } from '../../../src/core/raft/index.js';
import { Cluster, described, drain, loneNode, logOf } from './harness.js';

const n = nodeId;
const vote = (t: number, lastIndex = 0, lastTerm = 0): RaftMessage =>
  ({ kind: 'vote', term: term(t), lastLogIndex: logIndex(lastIndex), lastLogTerm: term(lastTerm) });

describe('raft: election', () => {
  test('a follower grants at most one vote per term', () => {
    const node = loneNode({ id: 'n1', voters: ['n1', 'n2', 'n3'] });
    node.step(n('n2'), vote(1), 0);
    node.step(n('n3'), vote(1), 0);
    node.step(n('n2'), vote(1), 0); // a retry by the one it voted for is granted again
    assert.deepEqual(described(drain(node)), [
      'n2: vote-response t=1 granted',
      'n3: vote-response t=1 refused',
      'n2: vote-response t=1 granted',
    ]);
    assert.equal(node.status().vote, 'n2');
  });

  test('a candidate with a stale log is refused (Raft §5.4.1)', () => {
    const node = loneNode({ state: logOf([1, 1, 2]) });
    node.step(n('n2'), vote(3, 5, 1), 0); // longer, but older last term
    node.step(n('n3'), vote(3, 2, 2), 0); // same last term, shorter
    assert.deepEqual(described(drain(node)), [
      'n2: vote-response t=3 refused',
      'n3: vote-response t=3 refused',
    ]);
    node.step(n('n3'), vote(3, 3, 2), 0); // as up to date: granted
    assert.deepEqual(described(drain(node)), ['n3: vote-response t=3 granted']);
  });

  test('a candidate with a stale log loses the election in a cluster', () => {
    const c = new Cluster({ states: { n1: logOf([1]), n2: logOf([1, 1]), n3: logOf([1, 1]) } });
    c.fire('n1'); // n1 times out first, but its log lacks entry 2
    c.deliverAll();
    assert.notEqual(c.node('n1').status().role, 'leader');
    const leader = c.elect();
    assert.notEqual(leader, 'n1');
    assert.deepEqual(c.violations, []);
  });

  test('election timeouts are drawn from [electionTimeoutMsMin, electionTimeoutMsMax)', () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 200; seed++) {
      const node = loneNode({ seed, tuning: { electionTimeoutMsMin: 300,
        electionTimeoutMsMax: 310 } });
      const timeout = node.nextDeadlineMs();
      assert.ok(timeout >= 300 && timeout < 310, `timeout ${timeout}`);
      seen.add(timeout);
    }
    assert.equal(seen.size, 10, 'every value of the range is drawn');
  });

  test('a single voter elects itself at its first timeout', () => {
    const node = loneNode({ voters: ['n1'] });
    node.tick(node.nextDeadlineMs());
    assert.equal(node.status().role, 'leader');
    assert.equal(node.status().term, 1);
    const events = drain(node).flatMap((r) => r.events);
    assert.deepEqual(events.filter((e) => e.kind === 'role-changed').map((e) =>
      e.kind === 'role-changed' ? `${e.from}->${e.to} ${e.reason}` : ''), [
      'follower->pre-candidate election-timeout',
      'pre-candidate->candidate pre-vote-won',
      'candidate->leader election-won',
    ]);
  });

  test('a candidate that a majority refuses returns to follower in its term', () => {
    const node = loneNode({ tuning: { preVote: false } });
    const at = node.nextDeadlineMs();
    node.tick(at);
    assert.equal(node.status().role, 'candidate');
    node.step(n('n2'), { kind: 'vote-response', term: term(1), granted: false }, at);
    node.step(n('n3'), { kind: 'vote-response', term: term(1), granted: false }, at);
    assert.equal(node.status().role, 'follower');
    assert.equal(node.status().term, 1);
  });
});

describe('raft: election: pre-vote', () => {
  test('a pre-candidate does not raise its term; voters keep theirs', () => {
    const node = loneNode({ state: logOf([1], 1) });
    node.tick(node.nextDeadlineMs());
    assert.equal(node.status().role, 'pre-candidate');
    assert.equal(node.status().term, 1);
    const readies = drain(node);
    assert.deepEqual(described(readies),
      ['n2: pre-vote t=2 last=1/1', 'n3: pre-vote t=2 last=1/1']);
    assert.ok(readies.every((r) => r.hardState === undefined), 'nothing to persist');

    const voter = loneNode({ id: 'n2', state: logOf([1], 1) });
    voter.step(n('n1'), { kind: 'pre-vote', term: term(2), lastLogIndex: logIndex(1),
      lastLogTerm: term(1) }, 0);
    assert.deepEqual(described(drain(voter)), ['n1: pre-vote-response t=2 granted']);
    assert.equal(voter.status().term, 1);
    assert.equal(voter.status().vote, undefined);
  });

  test('a node isolated for many timeouts rejoins without disrupting the leader', () => {
    const c = new Cluster({ seed: 3 });
    const leader = c.elect();
    const follower = c.ids.find((id) => id !== leader) as (typeof c.ids)[number];
    const termBefore = c.node(leader).status().term;
    c.isolate(follower);
    c.runFor(20 * 600);
    assert.equal(c.node(follower).status().term, termBefore, 'pre-vote kept the term');
    c.heal();
    c.runFor(3000);
    assert.equal(c.leader(), leader);
    assert.equal(c.node(leader).status().term, termBefore);
    assert.equal(c.node(follower).status().leaderId, leader);
    assert.deepEqual(c.violations, []);
  });

  test('without pre-vote the same isolated node raises its term and deposes the leader', () => {
    const c = new Cluster({ seed: 3, tuning: { preVote: false } });
    const leader = c.elect();
    const follower = c.ids.find((id) => id !== leader) as (typeof c.ids)[number];
    const termBefore = c.node(leader).status().term;
    c.isolate(follower);
    c.runFor(20 * 600);
    assert.ok(c.node(follower).status().term > termBefore + 10);
    c.heal();
    c.runFor(3000);
    assert.ok((c.node(c.elect()).status().term) > termBefore, 'the term moved on');
  });
});

describe('raft: election: check-quorum and stickiness', () => {
  test('an isolated leader steps down within one election timeout', () => {
    const c = new Cluster({ seed: 5 });
    const leader = c.elect();
    c.runFor(1000);
    const isolatedAtMs = c.nowMs;
    c.isolate(leader);
    let stepDownMs: number | undefined;
    while (c.nowMs < isolatedAtMs + 3000 && stepDownMs === undefined) {
      c.runFor(5);
      if (c.node(leader).status().role !== 'leader') stepDownMs = c.nowMs;
    }
    assert.ok(stepDownMs !== undefined, 'stepped down');
    // Last contact was at most one heartbeat before the cut; min timeout 300 ms, heartbeat 50.
    const afterMs = stepDownMs - isolatedAtMs;
    assert.ok(afterMs <= 300 + 5, `stepped down after ${afterMs} ms`);
    const events = c.readies.get(leader)?.flatMap((r) => r.events) ?? [];
    assert.ok(events.some((e) => e.kind === 'role-changed' && e.reason === 'check-quorum-lost'));
  });

  test('mutant preVoteWithoutCheckQuorum: the isolated leader keeps leading', () => {
    const c = new Cluster({ seed: 5, mutants: { preVoteWithoutCheckQuorum: true } });
    const leader = c.elect();
    c.isolate(leader);
    c.runFor(3000);
    assert.equal(c.node(leader).status().role, 'leader');
  });

  test('a follower that hears from its leader ignores higher-term (pre-)votes', () => {
    const c = new Cluster({ seed: 9 });
    const leader = c.elect();
    const [a, b] = c.ids.filter((id) => id !== leader) as [typeof leader, typeof leader];
    const t = c.node(a).status().term;
    const last = c.node(a).status().lastIndex;
    for (const kind of ['pre-vote', 'vote'] as const) {
      c.node(a).step(b, { kind, term: term(t + 1), lastLogIndex: logIndex(last + 5),
        lastLogTerm: term(t) }, c.nowMs);
    }
    assert.equal(c.node(a).hasReady(), false, 'no answer at all');
    assert.equal(c.node(a).status().term, t);
  });

  test('mutant preVoteWithoutCheckQuorum: the same follower grants the pre-vote', () => {
    const c = new Cluster({ seed: 9, mutants: { preVoteWithoutCheckQuorum: true } });
    const leader = c.elect();
    const [a, b] = c.ids.filter((id) => id !== leader) as [typeof leader, typeof leader];
    const t = c.node(a).status().term;
    const last = c.node(a).status().lastIndex;
    c.node(a).step(b, { kind: 'pre-vote', term: term(t + 1), lastLogIndex: logIndex(last + 5),
      lastLogTerm: term(t) }, c.nowMs);
    assert.deepEqual(described(drain(c.node(a))), [`${b}: pre-vote-response t=${t + 1} granted`]);
  });

  test('a follower that has not heard from a leader for electionTimeoutMsMin votes', () => {
    const c = new Cluster({ seed: 9 });
    const leader = c.elect();
    const [a, b] = c.ids.filter((id) => id !== leader) as [typeof leader, typeof leader];
    c.isolate(leader);
    c.nowMs += 300;
    const t = c.node(a).status().term;
    const last = c.node(a).status().lastIndex;
    c.node(a).step(b, { kind: 'vote', term: term(t + 1), lastLogIndex: logIndex(last),
      lastLogTerm: term(t) }, c.nowMs);
    assert.deepEqual(described(drain(c.node(a))), [`${b}: vote-response t=${t + 1} granted`]);
  });
});
