/**
 * Goal: RaftNode never crashes on input and judges every message against what it knows: a
 * sender outside every configuration, a term above TERM_MAX, a second leader in a term, an
 * append or snapshot contradicting committed or proven entries, a commit index past the log,
 * grants and acks for what was never asked or sent, oversized snapshots — each is dropped and
 * reported as a `message-rejected` event with its reason, and the cluster goes on. Method: the
 * in-process harness (virtual time) and lone nodes stepped by hand; each attack of issue #13
 * first, as it crashed or corrupted the node before (AssertionError: two leaders in term T).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term, type NodeId } from '../../../src/core/ids.js';
import {
  checkRaftDurableState, encodeMembership, type Entry, type RaftMessage, type RaftNode, type Ready,
} from '../../../src/core/raft/index.js';
import { TERM_MAX } from '../../../src/core/raft/messages.js';
import { REJECTION_EVENTS_PER_READY_MAX } from '../../../src/core/raft/rejections.js';
import { Cluster, drain, loneNode, logOf } from './harness.js';

const n = nodeId;
const EVIL = n('evil');
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function rejections(readies: readonly Ready[]): string[] {
  return readies.flatMap((r) => r.events).flatMap((e) => e.kind === 'message-rejected'
    ? [`${e.reason} ${e.from} ${e.messageKind}${e.count > 1 ? ` x${e.count}` : ''}`]
    : []);
}

/** Steps `m` from `from` into `node` and returns the rejections of the Readies that follow. */
function stepAndReject(node: RaftNode, from: NodeId, m: RaftMessage, nowMs = 0): string[] {
  node.step(from, m, nowMs);
  return rejections(drain(node));
}

const heartbeat = (t: number, commit = 0): RaftMessage =>
  ({ kind: 'heartbeat', term: term(t), commitIndex: logIndex(commit) });

function entry(index: number, t: number, text = `e${index}`): Entry {
  return { index: logIndex(index), term: term(t), kind: 'normal', data: bytes(text) };
}

function append(t: number, prev: number, prevTerm: number, entries: Entry[],
  commit = 0): RaftMessage {
  return { kind: 'append', term: term(t), prevLogIndex: logIndex(prev),
    prevLogTerm: term(prevTerm), entries, commitIndex: logIndex(commit) };
}

/** A 3-node cluster with a leader and one committed proposal. */
function runningCluster(): { c: Cluster; leader: NodeId; follower: NodeId; t: number } {
  const c = new Cluster();
  const leader = c.elect();
  c.propose(leader, 'before');
  c.deliverAll();
  const follower = c.ids.find((id) => id !== leader)!;
  return { c, leader, follower, t: c.node(leader).status().term };
}

/** Rejections recorded by the harness for `id` since `from` Readies. */
function clusterRejections(c: Cluster, id: NodeId, from = 0): string[] {
  return rejections((c.readies.get(id) ?? []).slice(from));
}

/** The cluster still elects and commits: a proposal through the leader is applied everywhere. */
function assertServes(c: Cluster, text: string): void {
  const leader = c.elect();
  const result = c.propose(leader, text);
  assert.equal(result.kind, 'accepted');
  c.runFor(200);
  for (const id of c.ids) {
    assert.ok(c.applied.get(id)!.some((e) => new TextDecoder().decode(e.data) === text),
      `${id} did not apply ${text}`);
  }
  assert.deepEqual(c.violations, []);
}

describe('raft: hostile input: the attacks of issue #13', () => {
  for (const target of ['leader', 'follower'] as const) {
    test(`a heartbeat at the current term from unknown 'evil' is rejected by the ${target}`, () => {
      const { c, leader, follower, t } = runningCluster();
      const id = target === 'leader' ? leader : follower;
      const before = c.readies.get(id)!.length;
      c.node(id).step(EVIL, heartbeat(t), c.nowMs); // crashed: two leaders in term T
      c.process(id);
      assert.deepEqual(clusterRejections(c, id, before), ['unknown-sender evil heartbeat']);
      const status = c.node(id).status();
      assert.equal(status.term, t);
      assert.equal(status.leaderId, leader);
      assertServes(c, 'after');
    });
  }

  test('one forged heartbeat per member kills no one and moves no term', () => {
    const { c, t } = runningCluster();
    for (const id of c.ids) c.node(id).step(EVIL, heartbeat(t + 1, 99), c.nowMs);
    for (const id of c.ids) c.process(id);
    for (const id of c.ids) assert.equal(c.node(id).status().term, t);
    assertServes(c, 'after');
  });

  for (const forgedTerm of [2 ** 53 - 1, TERM_MAX + 1]) {
    test(`a heartbeat at term ${forgedTerm} changes no term, from evil or a member id`, () => {
      const { c, leader, follower, t } = runningCluster();
      const before = c.readies.get(follower)!.length;
      c.node(follower).step(EVIL, heartbeat(forgedTerm), c.nowMs);
      c.node(follower).step(leader, heartbeat(forgedTerm), c.nowMs);
      c.process(follower);
      assert.deepEqual(clusterRejections(c, follower, before),
        [`unknown-sender evil heartbeat`, `term-out-of-range ${leader} heartbeat`]);
      assert.equal(c.node(follower).status().term, t);
      // The cluster can still elect: the leader crashes, the others take term t + 1 or more.
      c.crash(leader);
      c.runFor(3_000);
      const next = c.leader();
      assert.ok(next !== undefined && c.node(next).status().term > t);
    });
  }

  test('a forged append at the current term from a non-member is not stored', () => {
    const { c, follower, t } = runningCluster();
    const status = c.node(follower).status();
    const forged = append(t, status.lastIndex, status.lastTerm,
      [entry(status.lastIndex + 1, t, 'forged/x')], status.lastIndex + 1);
    c.node(follower).step(EVIL, forged, c.nowMs);
    c.process(follower);
    assert.equal(c.node(follower).status().lastIndex, status.lastIndex);
    assert.ok(clusterRejections(c, follower).includes('unknown-sender evil append'));
    assertServes(c, 'after');
  });

  test('a heartbeat whose commit index is past the log is rejected, and commits nothing', () => {
    const { c, leader, follower, t } = runningCluster();
    const status = c.node(follower).status();
    c.node(follower).step(leader, heartbeat(t, status.lastIndex + 1_000), c.nowMs);
    c.process(follower);
    assert.ok(clusterRejections(c, follower).includes(`commit-beyond-log ${leader} heartbeat`));
    assert.equal(c.node(follower).status().commitIndex, status.commitIndex);
  });

  test('every kind from evil, at every term relation, is rejected as unknown-sender', () => {
    const { c, leader, follower, t } = runningCluster();
    const kinds = (x: number): RaftMessage[] => [
      { kind: 'pre-vote', term: term(x), lastLogIndex: logIndex(100), lastLogTerm: term(x) },
      { kind: 'vote', term: term(x), lastLogIndex: logIndex(100), lastLogTerm: term(x) },
      { kind: 'pre-vote-response', term: term(x), granted: true },
      { kind: 'vote-response', term: term(x), granted: true },
      append(x, 0, 0, [entry(1, x, 'forged/a')], 1),
      { kind: 'append-response', term: term(x), success: true, index: logIndex(50),
        hintIndex: logIndex(0), hintTerm: term(0) },
      heartbeat(x, 50),
      { kind: 'heartbeat-response', term: term(x), readRound: 7 },
      { kind: 'timeout-now', term: term(x) },
      { kind: 'read-index', term: term(x), requestId: 'r1' },
      { kind: 'read-index-response', term: term(x), requestId: 'r1', success: true,
        index: logIndex(1) },
      { kind: 'snapshot', term: term(x), meta: { index: logIndex(9), term: term(Math.max(1, x)),
        membership: { voters: [EVIL], learners: [] } }, totalBytes: 2 ** 40, checksum: 0,
      offsetBytes: 0, data: new Uint8Array(4) },
      { kind: 'snapshot-response', term: term(x), snapshotIndex: logIndex(9),
        nextOffsetBytes: 2 ** 40 },
    ];
    const terms = [0, t - 1, t, t + 1, TERM_MAX, 2 ** 53 - 1].filter((x) => x >= 0);
    for (const id of [leader, follower]) {
      const before = c.readies.get(id)!.length;
      let sent = 0;
      for (const x of terms) {
        for (const m of kinds(x)) {
          if (m.kind === 'snapshot' && x === 0) continue; // meta.term 1 > message term 0: invalid
          c.node(id).step(EVIL, m, c.nowMs);
          sent++;
        }
      }
      c.process(id);
      const seen = clusterRejections(c, id, before);
      const total = seen.reduce((s, line) => s + Number(/ x(\d+)$/.exec(line)?.[1] ?? 1), 0);
      assert.equal(total, sent);
      assert.ok(seen.every((line) => line.startsWith('unknown-sender evil')), seen.join('\n'));
      assert.equal(c.node(id).status().term, t);
    }
    assertServes(c, 'after');
    for (const id of c.ids) {
      const texts = c.applied.get(id)!.map((e) => new TextDecoder().decode(e.data));
      assert.ok(!texts.some((text) => text.startsWith('forged/')));
    }
  });
});

describe('raft: hostile input: contradictions under member ids', () => {
  test('a second leader in a term is rejected by the followers and by the leader itself', () => {
    const { c, leader, follower, t } = runningCluster();
    const other = c.ids.find((id) => id !== leader && id !== follower)!;
    const beforeFollower = c.readies.get(follower)!.length;
    const beforeLeader = c.readies.get(leader)!.length;
    const s = c.node(follower).status();
    for (const m of [heartbeat(t), append(t, s.lastIndex, s.lastTerm, []),
      { kind: 'timeout-now', term: term(t) } as RaftMessage]) {
      c.node(follower).step(other, m, c.nowMs);
      c.node(leader).step(other, m, c.nowMs);
    }
    c.process(follower);
    c.process(leader);
    const expected = ['heartbeat', 'append', 'timeout-now']
      .map((k) => `second-leader ${other} ${k}`);
    assert.deepEqual(clusterRejections(c, follower, beforeFollower), expected);
    assert.deepEqual(clusterRejections(c, leader, beforeLeader), expected);
    assert.equal(c.node(leader).status().role, 'leader');
    assert.equal(c.node(follower).status().leaderId, leader);
    assertServes(c, 'after');
  });

  test('an append contradicting committed entries is rejected (below-commit)', () => {
    // n1 holds 1/1 2/1 3/1 with 2 committed, in term 2 led by n2.
    const node = loneNode({ state: logOf([1, 1, 1], 2, 2) });
    node.step(n('n2'), append(2, 3, 1, []), 0);
    drain(node);
    // Entry 2 of term 2 where a committed entry of term 1 stands; then a prev that differs.
    assert.deepEqual(stepAndReject(node, n('n2'), append(2, 1, 1, [entry(2, 2)])),
      ['below-commit n2 append']);
    assert.deepEqual(stepAndReject(node, n('n2'), append(2, 2, 2, [])),
      ['below-commit n2 append']);
    assert.equal(node.status().lastIndex, 3);
    assert.equal(node.entry(logIndex(2))?.term, 1);
  });

  test('an append rewriting entries of this term is rejected (contradicts-leader-log)', () => {
    const node = loneNode({ state: logOf([1, 1, 1], 2, 1) });
    // n2 leads term 2 and appends 4/2, 5/2.
    node.step(n('n2'), append(2, 3, 1, [entry(4, 2), entry(5, 2)]), 0);
    drain(node);
    // The same "leader" now says index 4 holds a term-1 entry: it never rewrites its own log.
    assert.deepEqual(stepAndReject(node, n('n2'), append(2, 3, 1, [entry(4, 1)])),
      ['contradicts-leader-log n2 append']);
    // Entry 3 was proven by the first append: a prev of another term there contradicts too.
    assert.deepEqual(stepAndReject(node, n('n2'), append(2, 3, 2, [])),
      ['contradicts-leader-log n2 append']);
    assert.deepEqual([4, 5].map((i) => node.entry(logIndex(i))?.term), [2, 2]);
    // An honest, older append (a duplicate) is still fine.
    assert.deepEqual(stepAndReject(node, n('n2'), append(2, 3, 1, [entry(4, 2)])), []);
  });

  test('a heartbeat commits only what appends of its term proved (Raft §5.3)', () => {
    // 1/1 2/1 3/2, commit 1, term 3: entries 2..3 may be another leader's, not the new one's.
    const node = loneNode({ state: logOf([1, 1, 2], 3, 1) });
    assert.deepEqual(stepAndReject(node, n('n2'), heartbeat(3, 3)), []);
    assert.equal(node.status().commitIndex, 1);
    // An append proves the prefix up to 3: now the commit index may follow.
    assert.deepEqual(stepAndReject(node, n('n2'), append(3, 3, 2, [], 1)), []);
    node.step(n('n2'), heartbeat(3, 3), 0);
    drain(node);
    assert.equal(node.status().commitIndex, 3);
  });

  test('grants for terms never asked for and acks for what was never sent are rejected', () => {
    const { c, leader, follower, t } = runningCluster();
    const lead = c.node(leader);
    const before = c.readies.get(leader)!.length;
    const last = lead.status().lastIndex;
    lead.step(follower, { kind: 'append-response', term: term(t), success: true,
      index: logIndex(last + 100), hintIndex: logIndex(0), hintTerm: term(0) }, c.nowMs);
    lead.step(follower, { kind: 'heartbeat-response', term: term(t), readRound: 1_000_000 },
      c.nowMs);
    lead.step(follower, { kind: 'vote-response', term: term(t + 5), granted: true }, c.nowMs);
    lead.step(follower, { kind: 'pre-vote-response', term: term(t + 2), granted: true }, c.nowMs);
    c.process(leader);
    assert.deepEqual(clusterRejections(c, leader, before), [
      `ack-beyond-sent ${follower} append-response`,
      `ack-beyond-sent ${follower} heartbeat-response`,
      `unexpected-grant ${follower} vote-response`,
      `unexpected-grant ${follower} pre-vote-response`,
    ]);
    assert.equal(lead.status().term, t);
    assert.equal(lead.status().role, 'leader');
    assert.ok(lead.status().progress.every((p) => p.matchIndex <= last));
    assertServes(c, 'after');
  });

  test('a message claiming to come from the node itself is rejected', () => {
    const node = loneNode();
    assert.deepEqual(stepAndReject(node, n('n1'), heartbeat(1)), ['from-self n1 heartbeat']);
    assert.equal(node.status().term, 0);
  });
});

describe('raft: hostile input: snapshots are bounded in bytes and chunks', () => {
  const snapshot = (offset: number, data: Uint8Array, totalBytes: number): RaftMessage => ({
    kind: 'snapshot', term: term(2), meta: { index: logIndex(10), term: term(2),
      membership: { voters: [n('n1'), n('n2'), n('n3')], learners: [] } },
    totalBytes, checksum: 0, offsetBytes: offset, data,
  });

  test('a snapshot above snapshotBytesMax is rejected before any chunk is kept', () => {
    const node = loneNode({ tuning: { snapshotBytesMax: 1024 } });
    assert.deepEqual(stepAndReject(node, n('n2'), snapshot(0, new Uint8Array(8), 2 ** 53 - 1)),
      ['snapshot-too-large n2 snapshot']);
    assert.deepEqual(stepAndReject(node, n('n2'), snapshot(0, new Uint8Array(8), 1025)),
      ['snapshot-too-large n2 snapshot']);
    assert.deepEqual(stepAndReject(node, n('n2'), snapshot(0, new Uint8Array(8), 1024)), []);
  });

  test('a snapshot that needs more than snapshotChunksMax chunks is dropped', () => {
    const node = loneNode({ tuning: { snapshotChunksMax: 3 } });
    const one = new Uint8Array(1);
    for (let offset = 0; offset < 3; offset++) {
      assert.deepEqual(stepAndReject(node, n('n2'), snapshot(offset, one, 10)), []);
    }
    assert.deepEqual(stepAndReject(node, n('n2'), snapshot(3, one, 10)),
      ['snapshot-too-many-chunks n2 snapshot']);
    // The assembly is gone: the next chunk past 0 is answered "start from byte 0".
    node.step(n('n2'), snapshot(1, one, 10), 0);
    const answers = drain(node).flatMap((r) => [...r.messagesBeforePersist, ...r.messages]);
    assert.ok(answers.some((e) => e.message.kind === 'snapshot-response' &&
      e.message.nextOffsetBytes === 0));
  });
});

describe('raft: hostile input: terms, membership, and the events', () => {
  test('a member at TERM_MAX no longer campaigns; a recovered term above it is refused', () => {
    const node = loneNode({ state: logOf([], TERM_MAX) });
    assert.equal(node.nextDeadlineMs(), Number.POSITIVE_INFINITY);
    node.tick(100_000);
    assert.equal(node.status().role, 'follower');
    assert.deepEqual(checkRaftDurableState(logOf([], TERM_MAX + 1)),
      [`term ${TERM_MAX + 1} is above TERM_MAX (${TERM_MAX})`]);
  });

  test('a member added by an uncommitted config entry is heard; knownPeers are heard', () => {
    const node = loneNode();
    const add: Entry = { index: logIndex(1), term: term(1), kind: 'config',
      data: encodeMembership({ voters: [n('n1'), n('n2'), n('n3')], learners: [n('n4')] }) };
    assert.deepEqual(stepAndReject(node, n('n4'), heartbeat(0)), ['unknown-sender n4 heartbeat']);
    node.step(n('n2'), append(1, 0, 0, [add]), 0);
    drain(node);
    assert.deepEqual(stepAndReject(node, n('n4'), { kind: 'read-index', term: term(1),
      requestId: 'x' }), []);
    const peer = loneNode({ tuning: { knownPeers: [n('n9')] } });
    assert.deepEqual(stepAndReject(peer, n('n9'), heartbeat(1)), []);
    assert.equal(peer.status().leaderId, 'n9');
  });

  test('a flood of rejections costs a bounded number of events, summed per reason', () => {
    const node = loneNode();
    for (let i = 0; i < 500; i++) node.step(EVIL, heartbeat(i), 0);
    for (let i = 0; i < 10; i++) node.step(n('n1'), heartbeat(i), 0);
    const [ready] = drain(node);
    const events = ready!.events.filter((e) => e.kind === 'message-rejected');
    assert.equal(events.length, REJECTION_EVENTS_PER_READY_MAX + 2);
    const total = events.reduce((s, e) => s + (e.kind === 'message-rejected' ? e.count : 0), 0);
    assert.equal(total, 510);
  });

  test('mutant trustSenderTerm: a rejected message still moves the term', () => {
    const node = loneNode({ mutants: { trustSenderTerm: true } });
    assert.deepEqual(stepAndReject(node, EVIL, heartbeat(2 ** 53 - 1)),
      ['unknown-sender evil heartbeat']);
    assert.equal(node.status().term, 2 ** 53 - 1);
    assert.equal(node.nextDeadlineMs(), Number.POSITIVE_INFINITY); // it can never campaign again
  });
});
