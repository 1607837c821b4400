/**
 * Goal: leadership transfer in the core (Raft thesis §3.10): the leader stops taking proposals,
 * brings the target up to date, sends timeout-now; the target campaigns at once without
 * pre-vote and voters set leader stickiness aside for it; the leader gives up after an election
 * timeout. Method: in-process clusters (test harness; messages delivered instantly, so the
 * virtual clock shows that no election timeout passed) and single nodes stepped by hand.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { RaftEvent, RaftMessage } from '../../../src/core/raft/index.js';
import { Cluster, described, drain, loneNode, logOf } from './harness.js';

const n = nodeId;

/** A settled 3-node cluster led by n1. */
function ledBy1(options: { ids?: string[] } = {}): Cluster {
  const c = new Cluster({ seed: 3, ...options });
  c.fire('n1');
  c.deliverAll();
  assert.equal(c.leader(), 'n1');
  c.runFor(100);
  return c;
}

function transferEvents(c: Cluster, id: string): string[] {
  return (c.readies.get(n(id)) ?? []).flatMap((r) => r.events)
    .filter((e): e is Extract<RaftEvent, { kind: 'leadership-transfer' }> =>
      e.kind === 'leadership-transfer')
    .map((e) => `${e.stage} ${e.target}`);
}

describe('raft: leadership transfer', () => {
  test('a caught-up target is told timeout-now and wins at once, skipping pre-vote', () => {
    const c = ledBy1();
    const before = c.nowMs;
    const termBefore = c.node('n1').status().term;
    const result = c.node('n1').transferLeadership(n('n2'), c.nowMs);
    assert.deepEqual(result, { kind: 'started', target: 'n2', term: termBefore });
    c.process(n('n1'));
    c.deliverAll();
    assert.equal(c.leader(), 'n2');
    assert.equal(c.node('n2').status().term, termBefore + 1);
    assert.equal(c.nowMs, before, 'no virtual time passed: no election timeout was spent');
    assert.deepEqual(transferEvents(c, 'n1'), ['started n2', 'timeout-now-sent n2']);
    const campaign = c.sent.filter((s) => s.startsWith('n2->'));
    assert.ok(campaign.some((s) => s.includes('vote t=2 last=1/1 transfer')), campaign.join('\n'));
    assert.ok(!campaign.some((s) => s.includes('pre-vote ')), 'no pre-vote round');
    assert.deepEqual(c.violations, []);
  });

  test('a lagging target is brought up to date before timeout-now', () => {
    const c = ledBy1();
    c.cut(n('n1'), n('n3'));
    for (let i = 0; i < 5; i++) c.propose(n('n1'), `w${i}`);
    c.deliverAll();
    c.heal();
    const result = c.node('n1').transferLeadership(n('n3'), c.nowMs);
    assert.equal(result.kind, 'started');
    c.process(n('n1'));
    const lastIndex = c.node('n1').status().lastIndex;
    // The first thing n1 sends n3 is entries, not timeout-now.
    assert.ok(!c.inFlight.some((m) => m.to === 'n3' && m.message.kind === 'timeout-now'));
    c.runFor(200);
    assert.equal(c.leader(), 'n3');
    assert.ok(c.node('n3').status().lastIndex > lastIndex, 'n3 holds the log, plus its no-op');
    assert.deepEqual(c.violations, []);
  });

  test('the leader drops proposals while transferring', () => {
    const c = ledBy1();
    c.cut(n('n1'), n('n2'));
    c.node('n1').transferLeadership(n('n2'), c.nowMs);
    assert.deepEqual(c.propose(n('n1'), 'x'),
      { kind: 'dropped', reason: 'leader-stepping-down' });
  });

  test('an unanswered transfer aborts after electionTimeoutMsMin; the leader takes proposals again', () => {
    const c = ledBy1();
    c.cut(n('n1'), n('n2'));
    const startMs = c.nowMs;
    c.node('n1').transferLeadership(n('n2'), c.nowMs);
    c.process(n('n1'));
    const deadlineMs = c.node('n1').nextDeadlineMs();
    assert.ok(deadlineMs <= startMs + 300);
    c.runFor(299);
    assert.equal(c.propose(n('n1'), 'y').kind, 'dropped');
    c.runFor(2);
    assert.equal(c.leader(), 'n1');
    assert.equal(c.propose(n('n1'), 'z').kind, 'accepted');
    // n2 was caught up, so timeout-now left at once; the cut link lost it.
    assert.deepEqual(transferEvents(c, 'n1'), ['started n2', 'timeout-now-sent n2', 'aborted n2']);
    assert.equal(c.node('n1').status().transferTarget, undefined);
  });

  test('without a named target, the most up-to-date voter is chosen', () => {
    const c = ledBy1();
    c.cut(n('n1'), n('n2'));
    c.propose(n('n1'), 'only-n3-has-it');
    c.deliverAll();
    const result = c.node('n1').transferLeadership(undefined, c.nowMs);
    assert.deepEqual(result.kind === 'started' && result.target, 'n3');
  });

  test('rejections: not leader, this node or a stranger as target, no other voter', () => {
    const c = ledBy1();
    assert.deepEqual(c.node('n2').transferLeadership(n('n3'), c.nowMs),
      { kind: 'rejected', reason: 'not-leader', leaderHint: 'n1' });
    assert.deepEqual(c.node('n1').transferLeadership(n('n1'), c.nowMs),
      { kind: 'rejected', reason: 'invalid-target' });
    assert.deepEqual(c.node('n1').transferLeadership(n('n9'), c.nowMs),
      { kind: 'rejected', reason: 'invalid-target' });
    const alone = loneNode({ voters: ['n1'] });
    alone.tick(alone.nextDeadlineMs());
    drain(alone);
    assert.deepEqual(alone.transferLeadership(undefined, 1000),
      { kind: 'rejected', reason: 'no-voter' });
  });

  test('a second transfer to another target replaces the first', () => {
    const c = ledBy1();
    c.cut(n('n1'), n('n2'));
    c.node('n1').transferLeadership(n('n2'), c.nowMs);
    assert.equal(c.node('n1').transferLeadership(n('n2'), c.nowMs).kind, 'started');
    c.process(n('n1')); // the timeout-now to n2 is lost on the cut link
    c.heal();
    c.node('n1').transferLeadership(n('n3'), c.nowMs);
    c.process(n('n1'));
    c.deliverAll();
    assert.equal(c.leader(), 'n3');
    assert.deepEqual(transferEvents(c, 'n1'), ['started n2', 'timeout-now-sent n2', 'aborted n2',
      'started n3', 'timeout-now-sent n3']);
  });
});

describe('raft: leadership transfer: the target and the voters', () => {
  const heartbeat = { kind: 'heartbeat', term: term(2), commitIndex: logIndex(1) } as const;
  const transferVote: RaftMessage = { kind: 'vote', term: term(3), lastLogIndex: logIndex(1),
    lastLogTerm: term(1), transfer: true };

  test('a follower that hears from its leader grants a transfer vote, not an ordinary one', () => {
    const follower = loneNode({ id: 'n3', state: logOf([1], 2) });
    follower.step(n('n1'), heartbeat, 10);
    drain(follower);
    const { transfer: _, ...ordinary } = transferVote as Extract<RaftMessage, { kind: 'vote' }>;
    follower.step(n('n2'), ordinary, 20);
    assert.deepEqual(described(drain(follower)), [], 'stickiness: ignored');
    follower.step(n('n2'), transferVote, 20);
    assert.deepEqual(described(drain(follower)), ['n2: vote-response t=3 granted']);
  });

  test('timeout-now is obeyed only from the leader of the current term', () => {
    const follower = loneNode({ id: 'n2', state: logOf([1], 2) });
    follower.step(n('n1'), heartbeat, 10);
    drain(follower);
    follower.step(n('n3'), { kind: 'timeout-now', term: term(2) }, 11);
    follower.step(n('n1'), { kind: 'timeout-now', term: term(1) }, 11);
    assert.equal(follower.status().role, 'follower');
    follower.step(n('n1'), { kind: 'timeout-now', term: term(2) }, 12);
    assert.equal(follower.status().role, 'candidate');
    assert.deepEqual(described(drain(follower)).sort(), [
      'n1: vote t=3 last=1/1 transfer', 'n3: vote t=3 last=1/1 transfer',
    ]);
  });
});
