/**
 * Goal: the term as a generation clock (Raft §5.1): stale messages are refused with the current
 * term, a higher term is adopted and a leader steps down, and term and vote reach storage before
 * any message that depends on them (with the voteNotPersisted and ackBeforeSync mutants showing
 * what breaks otherwise). Method: single nodes stepped by hand, and harness clusters with
 * crashes that lose whatever was not persisted.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { RaftMessage } from '../../../src/core/raft/index.js';
import { Cluster, described, drain, loneNode, logOf } from './harness.js';

const n = nodeId;

describe('raft: generation clock', () => {
  test('requests of a lower term are refused with the current term', () => {
    const node = loneNode({ state: logOf([1, 3], 3) });
    const stale: RaftMessage[] = [
      { kind: 'append', term: term(2), prevLogIndex: logIndex(2), prevLogTerm: term(2),
        entries: [], commitIndex: logIndex(2) },
      { kind: 'heartbeat', term: term(2), commitIndex: logIndex(2) },
      { kind: 'vote', term: term(2), lastLogIndex: logIndex(9), lastLogTerm: term(2) },
      { kind: 'pre-vote', term: term(2), lastLogIndex: logIndex(9), lastLogTerm: term(2) },
      { kind: 'vote-response', term: term(2), granted: true },
      { kind: 'append-response', term: term(2), success: true, index: logIndex(2),
        hintIndex: logIndex(0), hintTerm: term(0) },
    ];
    for (const m of stale) node.step(n('n2'), m, 0);
    assert.deepEqual(described(drain(node)), [
      'n2: append-response t=3 refused index=0 hint=0/0',
      'n2: heartbeat-response t=3',
      'n2: vote-response t=3 refused',
      'n2: pre-vote-response t=3 refused',
    ]);
    const s = node.status();
    assert.deepEqual([s.term, s.vote, s.leaderId, s.commitIndex], [3, undefined, undefined, 0]);
  });

  test('a leader that sees a higher term steps down and adopts it', () => {
    const c = new Cluster();
    c.fire('n1');
    c.deliverAll();
    const leader = c.node('n1');
    const t = leader.status().term;
    leader.step(n('n2'), { kind: 'heartbeat-response', term: term(t + 2) }, c.nowMs);
    assert.equal(leader.status().role, 'follower');
    assert.equal(leader.status().term, t + 2);
    assert.equal(leader.status().vote, undefined);
    const events = drain(leader).flatMap((r) => r.events);
    assert.deepEqual(events, [
      { kind: 'term-changed', from: t, to: t + 2, reason: 'higher-term-seen' },
      { kind: 'leader-changed', term: t + 2, leaderId: undefined, previousLeaderId: 'n1' },
      { kind: 'role-changed', term: t + 2, from: 'leader', to: 'follower',
        reason: 'higher-term-seen' },
    ]);
  });

  test('a deposed leader\'s writes never commit; it steps down when it hears the new term', () => {
    const c = new Cluster({ tuning: { checkQuorum: false } });
    c.fire('n1');
    c.deliverAll();
    c.isolate(n('n1'));
    assert.equal(c.propose(n('n1'), 'stale').kind, 'accepted');
    c.runFor(2000);
    const newLeader = c.leader();
    assert.ok(newLeader !== undefined && newLeader !== 'n1');
    const newTerm = c.node(newLeader).status().term;
    c.heal();
    c.runFor(60); // one heartbeat interval
    assert.equal(c.node('n1').status().role, 'follower');
    assert.equal(c.node('n1').status().term, newTerm);
    c.runFor(500);
    const staleData = new TextEncoder().encode('stale');
    for (const applied of c.applied.values()) {
      assert.ok(!applied.some((e) => e.data.length === staleData.length &&
        e.data.every((x, i) => x === staleData[i])), 'the stale write never applies');
    }
    assert.deepEqual(c.violations, []);
  });
});

describe('raft: generation clock: persist before send', () => {
  test('a granted vote is in Ready.hardState, with mustSync, beside the vote response', () => {
    const node = loneNode({ id: 'n2' });
    node.step(n('n1'), { kind: 'vote', term: term(1), lastLogIndex: logIndex(0),
      lastLogTerm: term(0) }, 0);
    const [ready, ...rest] = drain(node);
    assert.equal(rest.length, 0);
    assert.deepEqual(ready?.hardState, { term: 1, vote: 'n1', commitIndex: 0 });
    assert.equal(ready?.mustSync, true);
    assert.deepEqual(described(ready ? [ready] : []), ['n1: vote-response t=1 granted']);
    assert.deepEqual(ready?.messagesBeforePersist, []);
  });

  test('a candidate\'s own term and vote are in the Ready that carries its vote requests', () => {
    const node = loneNode({ tuning: { preVote: false } });
    node.tick(node.nextDeadlineMs());
    const [ready] = drain(node);
    assert.deepEqual(ready?.hardState, { term: 1, vote: 'n1', commitIndex: 0 });
    assert.deepEqual(described(ready ? [ready] : []), ['n2: vote t=1 last=0/0',
      'n3: vote t=1 last=0/0']);
  });

  /**
   * n2 is the swing voter: n1 is cut from n3. n2 votes n1 in term 1, restarts, then n3
   * campaigns in term 1 with n2 cut from n1. A persisted vote makes n2 refuse.
   */
  function swingVoter(mutant: boolean): Cluster {
    const c = new Cluster({ tuning: { preVote: false }, mutants: { voteNotPersisted: mutant } });
    c.cut(n('n1'), n('n3'));
    c.fire('n1');
    while (c.node('n1').status().role !== 'leader') c.deliver();
    c.cut(n('n1'), n('n2')); // before n2 gets the no-op: its log stays as short as n3's
    c.crash(n('n2'));
    c.restart(n('n2'));
    c.fire('n3');
    c.deliverAll();
    return c;
  }

  test('a restarted voter remembers its vote: one leader per term', () => {
    const c = swingVoter(false);
    assert.notEqual(c.node('n3').status().role, 'leader');
    assert.deepEqual(c.violations, []);
  });

  test('mutant voteNotPersisted: a restart loses the vote and two leaders share a term', () => {
    const c = swingVoter(true);
    assert.equal(c.node('n3').status().role, 'leader');
    assert.ok(c.violations.some((v) => v.startsWith('two leaders in term 1')),
      c.violations.join('\n'));
  });

  /**
   * n1 leads and is cut from n3. n2 receives a new entry and crashes before persisting it; then
   * n1 crashes. If n2 acknowledged early, n1 committed the entry, which n2 and n3 then overwrite.
   */
  function lostAck(mutant: boolean): { c: Cluster; commitOfN1: number; ackedEarly: boolean } {
    const c = new Cluster({ mutants: { ackBeforeSync: mutant } });
    c.fire('n1');
    c.deliverAll();
    c.runFor(200);
    c.cut(n('n1'), n('n3'));
    c.propose(n('n1'), 'x');
    c.deliverFirst((m) => m.to === 'n2' && m.message.kind === 'append', { process: false });
    const ready = c.processThenCrashBeforePersist(n('n2'));
    assert.ok(ready !== undefined && ready.entries.length === 1);
    const ackedEarly = ready.messagesBeforePersist.length > 0;
    if (!mutant) {
      assert.deepEqual(described([ready]), ['n1: append-response t=1 ok index=2']);
    }
    c.deliverAll();
    const commitOfN1 = c.node('n1').status().commitIndex;
    c.crash(n('n1'));
    c.restart(n('n2'));
    c.heal();
    c.elect();
    c.runFor(1000);
    return { c, commitOfN1, ackedEarly };
  }

  test('an entry is acknowledged only in Ready.messages, after its persistence', () => {
    const { c, commitOfN1, ackedEarly } = lostAck(false);
    assert.equal(ackedEarly, false);
    assert.equal(commitOfN1, 1);
    assert.deepEqual(c.violations, []);
  });

  test('mutant ackBeforeSync: a committed entry is lost', () => {
    const { c, commitOfN1, ackedEarly } = lostAck(true);
    assert.equal(ackedEarly, true);
    assert.equal(commitOfN1, 2);
    assert.ok(c.violations.some((v) => v.startsWith('committed entry 2 changed')),
      c.violations.join('\n'));
  });
});
