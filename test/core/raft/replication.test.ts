/**
 * Goal: log replication (Raft §5.3, §5.4.2, §8): conflicting logs converge to the leader's, fast
 * back-off, the Figure 8 commit rule, the no-op at term start, batching, pipelining limits and
 * proposal outcomes. Method: in-process clusters from the test harness, with logs set up by
 * hand (Raft paper Figures 7 and 8), messages delivered, dropped or held one by one; planted
 * mutants show that the checks catch the bugs they target.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId } from '../../../src/core/ids.js';
import type { NodeId } from '../../../src/core/ids.js';
import type { AppendRequest, Entry } from '../../../src/core/raft/index.js';
import type { InFlight } from './harness.js';
import { Cluster, bytesEqual, logOf } from './harness.js';

const n = nodeId;

function logTerms(c: Cluster, id: string): number[] {
  const node = c.node(id);
  const out: number[] = [];
  for (let i = 1; i <= node.status().lastIndex; i++) {
    out.push((node.entry(logIndex(i)) as Entry).term);
  }
  return out;
}

/** In-flight appends to `to` that carry entries (empty ones only move the commit index). */
function appendsTo(c: Cluster, to: NodeId): AppendRequest[] {
  return c.inFlight.map((m) => m.message)
    .filter((m, i): m is AppendRequest => c.inFlight[i]?.to === to && m.kind === 'append' &&
      m.entries.length > 0);
}

/** Elects `leader` (fired first), then lets replication settle. */
function settled(c: Cluster, leader: string): void {
  c.fire(leader);
  c.deliverAll();
  assert.equal(c.leader(), leader);
  c.runFor(200);
}

const others = (c: Cluster, leader: string): [NodeId, NodeId] =>
  c.ids.filter((id) => id !== leader) as [NodeId, NodeId];

describe('raft: replication: log matching', () => {
  test('followers with conflicting logs converge to the leader\'s (Raft Figure 7)', () => {
    const leaderLog = [1, 1, 1, 4, 4, 5, 5, 6, 6, 6];
    const c = new Cluster({
      ids: ['L', 'a', 'b', 'c', 'd', 'e', 'f'],
      states: {
        L: logOf(leaderLog, 7),
        a: logOf([1, 1, 1, 4, 4, 5, 5, 6, 6], 7),
        b: logOf([1, 1, 1, 4], 7),
        c: logOf([1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 6], 7),
        d: logOf([1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7, 7], 7),
        e: logOf([1, 1, 1, 4, 4, 4, 4], 7),
        f: logOf([1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3], 7),
      },
    });
    settled(c, 'L');
    const expected = [...leaderLog, 8];
    for (const id of c.ids) assert.deepEqual(logTerms(c, id), expected, `log of ${id}`);
    for (const id of c.ids) assert.equal(c.node(id).status().commitIndex, expected.length);
    c.checkLogMatching();
    assert.deepEqual(c.violations, []);
  });

  test('fast back-off: a 100-entry divergent tail costs one refusal', () => {
    const leaderLog = [1, ...Array<number>(100).fill(3)];
    const c = new Cluster({ states: {
      n1: logOf(leaderLog), n2: logOf(leaderLog), n3: logOf([1, ...Array<number>(100).fill(2)], 3),
    } });
    settled(c, 'n1');
    const refusals = c.sent.filter((s) => s.startsWith('n3->n1 append-response') &&
      s.includes('refused'));
    assert.equal(refusals.length, 1, refusals.join('\n'));
    assert.deepEqual(logTerms(c, 'n3'), logTerms(c, 'n1'));
  });

  test('fast back-off: a follower tail of higher terms is skipped term by term', () => {
    // etcd's example: L 1 3 3 3 ... 7 / F 1 3 3 4 4 5 5 5 6 (here with long runs).
    const leaderLog = [1, ...Array<number>(50).fill(3), 7];
    const followerLog = [1, 3, 3, ...Array<number>(20).fill(4), ...Array<number>(20).fill(5),
      ...Array<number>(30).fill(6)];
    const c = new Cluster({ states: {
      n1: logOf(leaderLog), n2: logOf(leaderLog), n3: logOf(followerLog, 7),
    } });
    settled(c, 'n1');
    const refusals = c.sent.filter((s) => s.startsWith('n3->n1 append-response') &&
      s.includes('refused'));
    assert.ok(refusals.length <= 3, refusals.join('\n'));
    assert.deepEqual(logTerms(c, 'n3'), logTerms(c, 'n1'));
  });
});

describe('raft: replication: commit rule (Raft §5.4.2, Figure 8)', () => {
  /**
   * Figure 8: S1 leads term 4 with [1, 2(t2), 3(t4)]; entry 2 reaches S2 and S3 (a majority),
   * entry 3 only S2. S1 must not commit entry 2 by counting. Then S1 and S2 crash and S5, whose
   * entry 2 is of term 3, wins with S3 and S4 and overwrites entry 2.
   */
  function figure8(mutant: boolean): { c: Cluster; commitOfS1: number } {
    const c = new Cluster({
      ids: ['s1', 's2', 's3', 's4', 's5'],
      tuning: { entriesPerMessageMax: 1 },
      mutants: { commitPreviousTermByCount: mutant },
      states: {
        s1: logOf([1, 2], 3, 1), s2: logOf([1, 2], 3, 1), s3: logOf([1], 3, 1),
        s4: logOf([1], 3, 1), s5: logOf([1, 3], 3, 1),
      },
    });
    c.cut(n('s1'), n('s4'));
    c.cut(n('s1'), n('s5'));
    c.fire('s1');
    // S3 never receives entry 3 (the append it would accept), everything else flows.
    const holdsBack = (m: InFlight): boolean => m.to === 's3' && m.message.kind === 'append' &&
      m.message.entries.some((e) => e.index === 3) && c.node('s3').status().lastIndex >= 2;
    while (c.inFlight.length > 0) {
      if (holdsBack(c.inFlight[0] as InFlight)) c.inFlight.shift();
      else c.deliver();
    }
    assert.equal(c.node('s1').status().role, 'leader');
    assert.deepEqual(logTerms(c, 's3'), [1, 2]);
    const commitOfS1 = c.node('s1').status().commitIndex;
    c.crash(n('s1'));
    c.crash(n('s2'));
    c.heal();
    assert.equal(c.elect(), 's5');
    c.runFor(1000);
    return { c, commitOfS1 };
  }

  test('an entry of an earlier term stored on a majority is not committed by counting', () => {
    const { c, commitOfS1 } = figure8(false);
    assert.equal(commitOfS1, 1);
    assert.deepEqual(logTerms(c, 's3'), [1, 3, c.node('s5').status().term]);
    assert.deepEqual(c.violations, []);
  });

  test('mutant commitPreviousTermByCount: the committed entry is later overwritten', () => {
    const { c, commitOfS1 } = figure8(true);
    assert.equal(commitOfS1, 2);
    assert.ok(c.violations.some((v) => v.startsWith('committed entry 2 changed')),
      c.violations.join('\n'));
  });
});

describe('raft: replication: no-op at term start (Raft §8)', () => {
  const states = { n1: logOf([1, 1]), n2: logOf([1, 1]), n3: logOf([1, 1]) };

  test('a new leader appends a no-op, which commits the entries of earlier terms', () => {
    const c = new Cluster({ states });
    settled(c, 'n1');
    const last = c.node('n1').entry(logIndex(3)) as Entry;
    assert.equal(last.kind, 'noop');
    assert.equal(last.term, c.node('n1').status().term);
    for (const id of c.ids) assert.equal(c.node(id).status().commitIndex, 3);
  });

  test('mutant noNoopAtTermStart: earlier entries stay uncommitted until a client write', () => {
    const c = new Cluster({ states, mutants: { noNoopAtTermStart: true } });
    settled(c, 'n1');
    assert.equal(c.node('n1').status().lastIndex, 2);
    assert.equal(c.node('n1').status().commitIndex, 0);
    c.propose(n('n1'), 'x');
    c.deliverAll();
    assert.equal(c.node('n1').status().commitIndex, 3);
  });
});

describe('raft: replication: batching and flow control', () => {
  test('N proposals between two Readies become one append per follower', () => {
    const c = new Cluster();
    settled(c, 'n1');
    const before = c.inFlight.length;
    for (let i = 0; i < 10; i++) {
      const result = c.node('n1').propose(new TextEncoder().encode(`v${i}`), c.nowMs);
      assert.equal(result.kind, 'accepted');
      assert.equal(c.node('n1').hasReady(), true, 'hasReady() has no side effect');
    }
    c.process(n('n1'));
    assert.equal(before, 0);
    for (const f of others(c, 'n1')) {
      const appends = appendsTo(c, f);
      assert.equal(appends.length, 1, `appends to ${f}`);
      assert.equal(appends[0]?.entries.length, 10);
    }
    c.deliverAll();
    for (const id of c.ids) assert.equal(c.node(id).status().commitIndex, 11);
  });

  test('at most inflightMessagesMax appends are unacknowledged per follower', () => {
    const c = new Cluster({ tuning: { inflightMessagesMax: 2, entriesPerMessageMax: 1 } });
    settled(c, 'n1');
    const [a, b] = others(c, 'n1');
    for (let i = 0; i < 5; i++) c.node('n1').propose(new Uint8Array([i]), c.nowMs);
    c.process(n('n1'));
    assert.equal(appendsTo(c, a).length, 2);
    assert.equal(appendsTo(c, b).length, 2);
    c.deliverFirst((m) => m.to === a && m.message.kind === 'append');
    c.deliverFirst((m) => m.from === a && m.message.kind === 'append-response');
    assert.equal(appendsTo(c, a).length, 2, 'one ack frees one slot');
    assert.equal(appendsTo(c, b).length, 2);
    c.deliverAll();
    for (const id of c.ids) assert.equal(c.node(id).status().lastIndex, 6);
  });

  test('an append holds at most entriesPerMessageMax entries and bytesPerMessageMax bytes', () => {
    // Sizes count 16 bytes of overhead per entry: 3 x 26 fits in 180, 26 + 166 does not.
    const c = new Cluster({ tuning: { entriesPerMessageMax: 3, bytesPerMessageMax: 180 } });
    settled(c, 'n1');
    for (let i = 0; i < 7; i++) c.node('n1').propose(new Uint8Array(10), c.nowMs);
    for (let i = 0; i < 3; i++) c.node('n1').propose(new Uint8Array(150), c.nowMs);
    c.process(n('n1'));
    const sizes = appendsTo(c, others(c, 'n1')[0]).map((m) => m.entries.map((e) => e.data.length));
    assert.deepEqual(sizes, [[10, 10, 10], [10, 10, 10], [10], [150], [150], [150]]);
  });

  test('heartbeats carry min(leader commit, follower match)', () => {
    const c = new Cluster();
    settled(c, 'n1');
    const [a] = others(c, 'n1');
    const matchOfA = c.node('n1').status().commitIndex;
    c.cut(n('n1'), a);
    c.propose(n('n1'), 'x');
    c.deliverAll();
    c.runFor(60);
    const commit = c.node('n1').status().commitIndex;
    assert.equal(commit, matchOfA + 1);
    const heartbeats = c.sent.filter((s) => s.startsWith(`n1->${a} heartbeat `));
    assert.match(heartbeats[heartbeats.length - 1] ?? '',
      new RegExp(`^n1->${a} heartbeat t=1 commit=${matchOfA} round=\\d+$`));
  });

  test('a follower that lost appends catches up through heartbeats', () => {
    const c = new Cluster();
    settled(c, 'n1');
    const [a] = others(c, 'n1');
    for (let i = 0; i < 5; i++) c.propose(n('n1'), `v${i}`);
    while (c.inFlight.length > 0) {
      c.drop((m) => m.to === a && m.message.kind === 'append');
      c.deliver();
    }
    assert.equal(c.node(a).status().lastIndex, 1);
    assert.equal(c.node('n1').status().commitIndex, 6);
    c.runFor(500);
    assert.equal(c.node(a).status().lastIndex, 6);
    assert.equal(c.node(a).status().commitIndex, 6);
    const applied = c.applied.get(a) ?? [];
    assert.ok(bytesEqual((applied[5] as Entry).data, new TextEncoder().encode('v4')));
  });
});

describe('raft: replication: proposals', () => {
  test('a follower rejects a proposal and names the leader', () => {
    const c = new Cluster();
    settled(c, 'n1');
    const [a] = others(c, 'n1');
    assert.deepEqual(c.propose(a, 'x'), { kind: 'rejected', reason: 'not-leader',
      leaderHint: 'n1' });
  });

  test('a leader drops proposals once pendingProposalsMax entries are uncommitted', () => {
    const c = new Cluster({ tuning: { pendingProposalsMax: 3 } });
    settled(c, 'n1');
    c.isolate(n('n1'));
    const kinds = [1, 2, 3, 4].map(() => c.propose(n('n1'), 'x').kind);
    assert.deepEqual(kinds, ['accepted', 'accepted', 'accepted', 'dropped']);
  });

  test('a proposal larger than bytesPerMessageMax is rejected', () => {
    const c = new Cluster({ tuning: { bytesPerMessageMax: 100 } });
    settled(c, 'n1');
    const result = c.node('n1').propose(new Uint8Array(100), c.nowMs);
    assert.deepEqual(result, { kind: 'rejected', reason: 'entry-too-large', sizeBytes: 116,
      sizeBytesMax: 100 });
  });

  test('an accepted proposal names the index and term where it will apply', () => {
    const c = new Cluster();
    settled(c, 'n1');
    const result = c.propose(n('n1'), 'hello');
    assert.equal(result.kind, 'accepted');
    c.deliverAll();
    if (result.kind !== 'accepted') return;
    for (const id of c.ids) {
      const entry: Entry | undefined = c.applied.get(id)?.[result.index - 1];
      assert.equal(entry?.term, result.term);
      assert.ok(bytesEqual(entry.data, new TextEncoder().encode('hello')));
    }
  });
});
