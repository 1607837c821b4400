/**
 * Goal: snapshots and log compaction in the core (Raft §7): a follower whose entries the leader
 * compacted away gets InstallSnapshot in chunks, resumable after a lost chunk, checked by a
 * CRC-32C before installing; the snapshot replaces its log and its state machine; a node
 * restarts from a snapshot plus the log after it. Method: in-process clusters (test harness:
 * messages delivered, dropped or altered by hand, stores that keep the snapshot), single nodes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AssertionError } from '../../../src/core/assert.js';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import { checkRaftDurableState, type Snapshot } from '../../../src/core/raft/index.js';
import type { InFlight } from './harness.js';
import { Cluster, logOf, snapshotData } from './harness.js';

const n = nodeId;
const isChunk = (m: InFlight): boolean => m.message.kind === 'snapshot';

/** Delivers messages one by one (ticking n1 when none is left) until a chunk is in flight. */
function untilChunkInFlight(c: Cluster): void {
  for (let guard = 0; guard < 1000; guard++) {
    if (c.inFlight.some(isChunk)) return;
    if (c.inFlight.length > 0) c.deliver();
    else c.fire('n1');
  }
  throw new Error('no snapshot chunk was sent');
}

/** n1 leads; n3 is cut off while n1 commits `writes` entries, snapshots and compacts. */
function leaderCompactedPastN3(writes: number, chunkBytes = 4): Cluster {
  const c = new Cluster({ seed: 7, tuning: { snapshotChunkBytesMax: chunkBytes } });
  c.fire('n1');
  c.deliverAll();
  c.cut(n('n1'), n('n3'));
  for (let i = 0; i < writes; i++) c.propose(n('n1'), `w${i}`);
  c.deliverAll();
  c.runFor(10); // the commit reaches the state machine
  c.snapshotAndCompact(n('n1'));
  assert.ok(c.node('n1').status().compactedIndex > c.node('n3').status().lastIndex);
  return c;
}

describe('raft: snapshots', () => {
  test('a follower restored from InstallSnapshot after the leader compacted past its log', () => {
    const c = leaderCompactedPastN3(10);
    const snapshot = c.disks.get(n('n1'))!.snapshot as Snapshot;
    c.heal();
    c.runFor(500);
    const restored = c.restoredFrom.get(n('n3'));
    assert.deepEqual(restored?.meta, snapshot.meta);
    assert.deepEqual(restored?.data, snapshotData(snapshot.meta.index));
    const s1 = c.node('n1').status();
    const s3 = c.node('n3').status();
    assert.equal(s3.snapshotIndex, snapshot.meta.index);
    assert.equal(s3.compactedIndex, snapshot.meta.index, 'the snapshot replaced n3\'s log');
    assert.equal(s3.lastIndex, s1.lastIndex);
    assert.equal(s3.commitIndex, s1.commitIndex);
    // Appends go on after the snapshot.
    c.propose(n('n1'), 'after');
    c.deliverAll();
    c.runFor(100);
    assert.equal(c.node('n3').status().appliedIndex, c.node('n1').status().appliedIndex);
    c.checkLogMatching();
    assert.deepEqual(c.violations, []);
  });

  test('the snapshot travels in chunks of snapshotChunkBytesMax, one at a time', () => {
    const c = leaderCompactedPastN3(10, 4);
    const size = c.disks.get(n('n1'))!.snapshot!.data.length;
    c.heal();
    c.runFor(500);
    const chunks = c.sent.filter((s) => s.startsWith('n1->n3 snapshot '));
    assert.equal(chunks.length, Math.ceil(size / 4), chunks.join('\n'));
    assert.ok(chunks.every((s, i) => s.includes(`bytes=${i * 4}+`)), chunks.join('\n'));
  });

  test('a lost chunk is sent again from where the follower stopped (resumable)', () => {
    const c = leaderCompactedPastN3(10, 3);
    c.heal();
    untilChunkInFlight(c); // a heartbeat answer starts the transfer
    // Deliver the first chunk and its answer, lose the second.
    c.deliverFirst(isChunk);
    c.deliverFirst((m) => m.message.kind === 'snapshot-response');
    const lost = c.drop(isChunk);
    assert.equal(lost.length, 1);
    assert.equal(lost[0]!.message.kind === 'snapshot' && lost[0]!.message.offsetBytes, 3);
    c.runFor(500);
    const chunks = c.sent.filter((s) => s.startsWith('n1->n3 snapshot '));
    const offsets = chunks.map((s) => /bytes=(\d+)\+/.exec(s)?.[1]);
    assert.deepEqual(offsets.slice(0, 3), ['0', '3', '3'], 'resumed at byte 3, not 0');
    assert.ok(c.restoredFrom.has(n('n3')));
    assert.deepEqual(c.violations, []);
  });

  // Seeds 1723253049 and 1723253069 of `sim --scenario core`: a follower never caught up, as
  // the leader took a snapshot every 25 entries, faster than a transfer of ~100 KB in 64-byte
  // chunks, and started each transfer again from byte 0 of the newer snapshot.
  test('a transfer under way finishes with its snapshot after the leader takes a newer one',
    () => {
      const c = leaderCompactedPastN3(10, 3);
      const first = c.disks.get(n('n1'))!.snapshot!;
      c.heal();
      untilChunkInFlight(c);
      c.deliverFirst(isChunk);
      c.deliverFirst((m) => m.message.kind === 'snapshot-response');
      // n1 writes and snapshots again while the next chunk is on its way to n3.
      const onTheWay = c.drop((m) => m.to === n('n3'));
      for (let i = 0; i < 5; i++) c.propose(n('n1'), `later${i}`);
      c.deliverAll();
      c.runFor(10);
      const newer = c.snapshotAndCompact(n('n1'));
      c.inFlight.push(...onTheWay);
      assert.ok(newer.meta.index > first.meta.index);
      c.runFor(500);
      const chunks = c.sent.filter((s) => s.startsWith('n1->n3 snapshot '));
      const firstChunks = Math.ceil(first.data.length / 3);
      assert.ok(chunks.slice(0, firstChunks)
        .every((s, i) => s.includes(`at=${first.meta.index}/`) && s.includes(`bytes=${i * 3}+`)),
      chunks.join('\n'));
      assert.deepEqual(c.restoredFrom.get(n('n3'))?.meta.index, newer.meta.index,
        'then the newer one, as the log after the first was compacted');
      assert.equal(c.node('n3').status().appliedIndex, c.node('n1').status().appliedIndex);
      assert.deepEqual(c.violations, []);
    });

  // Seeds 1723253061 and 1723253118 of `sim --scenario core` ran away (20 million events): each
  // answer to a duplicated chunk sent one more chunk, so the copies in flight multiplied.
  test('a repeated snapshot answer sends no chunk: duplicates in flight die out', () => {
    const c = leaderCompactedPastN3(10, 3);
    const size = c.disks.get(n('n1'))!.snapshot!.data.length;
    c.heal();
    untilChunkInFlight(c);
    const chunk = c.inFlight.find(isChunk)!;
    c.inFlight.push(chunk, chunk); // the network delivers the first chunk three times
    c.deliverAll();
    const chunks = c.sent.filter((s) => s.startsWith('n1->n3 snapshot '));
    assert.ok(c.restoredFrom.has(n('n3')));
    assert.ok(chunks.length <= Math.ceil(size / 3) + 1, `${chunks.length} chunks sent for `
      + `${Math.ceil(size / 3)}:\n${chunks.join('\n')}`);
    assert.deepEqual(c.violations, []);
  });

  test('a damaged chunk fails the checksum: the follower starts again, then installs', () => {
    const c = leaderCompactedPastN3(10, 64);
    c.heal();
    untilChunkInFlight(c);
    const position = c.inFlight.findIndex(isChunk);
    const chunk = c.inFlight[position]!;
    assert.ok(chunk.message.kind === 'snapshot');
    const damaged = new Uint8Array(chunk.message.data);
    damaged[0] = damaged[0]! ^ 0xff;
    c.inFlight[position] = { ...chunk, message: { ...chunk.message, data: damaged } };
    c.deliver(position);
    assert.ok(c.sent.some((s) => s.startsWith('n3->n1 snapshot-response') && s.endsWith('next=0')));
    assert.equal(c.restoredFrom.has(n('n3')), false, 'nothing installed from damaged bytes');
    c.runFor(500);
    const snapshot = c.disks.get(n('n1'))!.snapshot!;
    assert.deepEqual(c.restoredFrom.get(n('n3'))?.data, snapshot.data);
  });

  test('a follower that holds the snapshot\'s last entry only moves its commit index', () => {
    const c = new Cluster({ seed: 8 });
    c.fire('n1');
    c.deliverAll();
    for (let i = 0; i < 5; i++) c.propose(n('n1'), `w${i}`);
    c.deliverAll();
    c.runFor(10);
    const snapshot = c.snapshotAndCompact(n('n1'));
    const node = c.node('n3');
    node.step(n('n1'), { kind: 'snapshot', term: term(1), meta: snapshot.meta,
      totalBytes: snapshot.data.length, checksum: 0, offsetBytes: 0, data: snapshot.data }, c.nowMs);
    c.process(n('n3'));
    assert.equal(c.restoredFrom.has(n('n3')), false);
    assert.ok(node.status().commitIndex >= snapshot.meta.index);
  });

  test('a node restarts from its snapshot and the log after it', () => {
    const c = new Cluster({ seed: 9 });
    c.fire('n1');
    c.deliverAll();
    for (let i = 0; i < 8; i++) c.propose(n('n1'), `w${i}`);
    c.deliverAll();
    c.runFor(10);
    const snapshot = c.snapshotAndCompact(n('n2'));
    c.propose(n('n1'), 'tail');
    c.deliverAll();
    c.runFor(10);
    const before = c.node('n2').status();
    c.crash(n('n2'));
    c.restart(n('n2'));
    const after = c.node('n2').status();
    assert.equal(after.snapshotIndex, snapshot.meta.index);
    assert.equal(after.lastIndex, before.lastIndex);
    assert.ok(after.commitIndex >= snapshot.meta.index);
    c.runFor(200);
    const applied = c.applied.get(n('n2'))!;
    assert.equal(applied[0]?.index, snapshot.meta.index + 1, 'applying resumes after the snapshot');
    assert.deepEqual(c.violations, []);
  });

  test('snapshots and compaction refuse what they cannot cover', () => {
    const c = new Cluster({ seed: 10 });
    c.fire('n1');
    c.deliverAll();
    c.propose(n('n1'), 'x');
    c.deliverAll();
    c.runFor(10);
    const node = c.node('n1');
    const applied = node.status().appliedIndex;
    assert.throws(() => node.createSnapshot(logIndex(applied + 1), new Uint8Array()),
      AssertionError, 'past the applied index');
    assert.throws(() => node.compact(logIndex(1)), AssertionError, 'no snapshot covers it');
    node.createSnapshot(logIndex(applied), new Uint8Array());
    assert.throws(() => node.createSnapshot(logIndex(applied), new Uint8Array()), AssertionError);
  });

  test('checkRaftDurableState takes the snapshot as the log base', () => {
    const snapshot: Snapshot = { meta: { index: logIndex(5), term: term(2),
      membership: { voters: [n('n1')], learners: [] } }, data: new Uint8Array() };
    const tail = logOf([1, 1, 1, 1, 2, 2, 3]).entries.slice(5);
    const hardState = { term: term(3), vote: undefined, commitIndex: logIndex(6) };
    assert.deepEqual(checkRaftDurableState({ hardState, entries: tail, snapshot }), []);
    assert.match(checkRaftDurableState({ hardState, entries: tail.slice(1), snapshot })[0] ?? '',
      /expected 6/);
    assert.deepEqual(checkRaftDurableState({ hardState: { ...hardState, commitIndex: logIndex(4) },
      entries: [], snapshot }), [], 'a commit index below the snapshot is raised to it');
  });
});
