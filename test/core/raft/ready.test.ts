/**
 * Goal: the Ready contract that the runtime relies on (src/core/raft/ready.ts): what is handed
 * out when, exactly once, and what `advance` acknowledges; plus `nextDeadlineMs` and the
 * time/restart rules. Method: single nodes driven by hand, reading each Ready field by field.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AssertionError } from '../../../src/core/assert.js';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import { checkRaftDurableState } from '../../../src/core/raft/index.js';
import type { Entry } from '../../../src/core/raft/index.js';
import { Cluster, described, drain, loneNode, logOf } from './harness.js';

const n = nodeId;
const heartbeat = (t: number, commit: number) =>
  ({ kind: 'heartbeat', term: term(t), commitIndex: logIndex(commit) }) as const;

function singleLeader() {
  const node = loneNode({ voters: ['n1'] });
  node.tick(node.nextDeadlineMs());
  drain(node);
  return node;
}

describe('raft: ready', () => {
  test('while a Ready is outstanding hasReady is false and new output waits for the next', () => {
    const node = loneNode({ id: 'n2', state: logOf([1], 1) });
    node.step(n('n1'), heartbeat(1, 0), 0);
    assert.equal(node.hasReady(), true);
    const first = node.ready();
    node.step(n('n1'), heartbeat(1, 1), 10);
    assert.equal(node.hasReady(), false);
    assert.throws(() => node.ready(), AssertionError);
    node.advance(first);
    const second = node.ready();
    assert.deepEqual(described([second]), ['n1: heartbeat-response t=1']);
    assert.deepEqual(second.hardState, { term: 1, vote: undefined, commitIndex: 1 });
    assert.throws(() => node.advance(first), AssertionError, 'only the outstanding Ready');
  });

  test('a leader commits its own entry only after the Ready that carried it was advanced', () => {
    const node = singleLeader();
    const result = node.propose(new Uint8Array([7]), 1000);
    assert.deepEqual(result, { kind: 'accepted', index: 2, term: 1 });
    const persist = node.ready();
    assert.deepEqual(persist.entries.map((e) => e.index), [2]);
    assert.equal(persist.mustSync, true);
    assert.deepEqual(persist.committedEntries, []);
    assert.equal(node.status().commitIndex, 1);
    node.advance(persist);
    const apply = node.ready();
    assert.deepEqual(apply.entries, []);
    assert.deepEqual(apply.committedEntries.map((e) => e.index), [2]);
    assert.equal(apply.hardState?.commitIndex, 2);
    assert.equal(apply.mustSync, false, 'only the commit index changed');
    node.advance(apply);
    assert.equal(node.status().appliedIndex, 2);
    assert.equal(node.hasReady(), false);
  });

  test('entries that replace a conflicting suffix start at the conflict index', () => {
    const node = loneNode({ id: 'n2', state: logOf([1, 1, 2, 2], 2) });
    node.step(n('n1'), { kind: 'append', term: term(3), prevLogIndex: logIndex(2),
      prevLogTerm: term(1), entries: [{ index: logIndex(3), term: term(3), kind: 'normal',
        data: new Uint8Array([3]) }], commitIndex: logIndex(0) }, 0);
    const [ready] = drain(node);
    assert.deepEqual(ready?.entries.map((e) => `${e.index}/${e.term}`), ['3/3']);
    assert.equal(node.status().lastIndex, 3);
  });

  test('an entry overwritten while its write was in flight is not counted durable', () => {
    const node = loneNode({ id: 'n2', state: logOf([1], 1) });
    const entry = (i: number, t: number): Entry =>
      ({ index: logIndex(i), term: term(t), kind: 'normal', data: new Uint8Array([i]) });
    node.step(n('n1'), { kind: 'append', term: term(1), prevLogIndex: logIndex(1),
      prevLogTerm: term(1), entries: [entry(2, 1), entry(3, 1)], commitIndex: logIndex(1) }, 0);
    const writing = node.ready();
    node.step(n('n3'), { kind: 'append', term: term(2), prevLogIndex: logIndex(1),
      prevLogTerm: term(1), entries: [entry(2, 2)], commitIndex: logIndex(1) }, 0);
    node.advance(writing);
    assert.equal(node.status().stableIndex, 1);
    const replacement = node.ready();
    assert.deepEqual(replacement.entries.map((e) => `${e.index}/${e.term}`), ['2/2']);
    node.advance(replacement);
    assert.equal(node.status().stableIndex, 2);
  });

  test('softState appears only when role, term or leader changed', () => {
    const node = loneNode({ id: 'n2' });
    node.step(n('n1'), heartbeat(1, 0), 0);
    const [first] = drain(node);
    assert.deepEqual(first?.softState, { role: 'follower', term: 1, leaderId: 'n1' });
    node.step(n('n1'), heartbeat(1, 0), 10);
    const [second] = drain(node);
    assert.equal(second?.softState, undefined);
  });

  test('each committed entry is applied once, in index order, and again after a restart', () => {
    const c = new Cluster({ seed: 4 });
    const leader = c.elect();
    for (let i = 0; i < 20; i++) c.propose(leader, `v${i}`);
    c.deliverAll();
    for (const id of c.ids) assert.equal(c.applied.get(id)?.length, 21);
    const follower = c.ids.find((id) => id !== leader) ?? leader;
    c.crash(follower);
    c.restart(follower);
    c.runFor(200);
    assert.equal(c.applied.get(follower)?.length, 21, 'replayed from index 1');
    assert.deepEqual(c.violations, []);
  });
});

describe('raft: ready: time', () => {
  test('nextDeadlineMs is the election deadline; an earlier tick does nothing', () => {
    const node = loneNode();
    const deadline = node.nextDeadlineMs();
    node.tick(deadline - 1);
    assert.equal(node.hasReady(), false);
    assert.equal(node.nextDeadlineMs(), deadline);
    node.tick(deadline);
    assert.equal(node.status().role, 'pre-candidate');
  });

  test('a leader\'s deadline is its next heartbeat, then one interval later', () => {
    const c = new Cluster();
    c.fire('n1');
    c.deliverAll();
    const leader = c.node('n1');
    const due = leader.nextDeadlineMs();
    assert.equal(due, c.nowMs + 50);
    c.nowMs = due;
    c.tick(n('n1'));
    assert.deepEqual(c.inFlight.map((m) => m.message.kind), ['heartbeat', 'heartbeat']);
    assert.equal(leader.nextDeadlineMs(), due + 50);
  });

  test('a single-voter leader has nothing scheduled', () => {
    assert.equal(singleLeader().nextDeadlineMs(), Number.POSITIVE_INFINITY);
  });

  test('checkRaftDurableState names what makes a recovered state unusable', () => {
    const gap = logOf([1, 1, 2]);
    const broken = { hardState: { ...gap.hardState, commitIndex: logIndex(9) },
      entries: [gap.entries[0], gap.entries[2]] as Entry[] };
    assert.deepEqual(checkRaftDurableState(broken), [
      'entry 1 has index 3, expected 2',
      'commit index 9 is past the last entry 3',
    ]);
    assert.deepEqual(checkRaftDurableState(gap), []);
    assert.throws(() => loneNode({ state: broken }), AssertionError);
  });

  test('entries newer than the stored term (torn hard state) raise the term on start', () => {
    const node = loneNode({ state: logOf([1, 3], 2) });
    assert.equal(node.status().term, 3);
    assert.deepEqual(node.ready().hardState, { term: 3, vote: undefined, commitIndex: 0 });
  });

  test('time that goes backwards is a programmer error', () => {
    const node = loneNode({ nowMs: 100 });
    assert.throws(() => node.tick(99), AssertionError);
  });
});
