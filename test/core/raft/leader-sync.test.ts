/**
 * Goal: the leader's write path of Raft thesis §10.2.1. A leader's appends leave before its
 * own disk write of the same entries is durable; its own copy counts towards commit only once
 * `advance` reports that write durable, so an entry commits on a majority of durable copies,
 * the leader's included or not; the term and vote are durable before any message carries
 * them; and with `accept` the leader builds and replicates the next batch while a write is in
 * flight. Method: in-process 3-node clusters from the test harness; the leader's Readies are
 * taken by hand (`startReady`) and their writes completed when the test says
 * (`completeReady`), while messages are delivered, cut or held one by one.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AssertionError } from '../../../src/core/assert.js';
import { nodeId, type NodeId } from '../../../src/core/ids.js';
import type { RaftEnvelope, Ready } from '../../../src/core/raft/index.js';
import { Cluster } from './harness.js';

const n = nodeId;
const data = (text: string): Uint8Array => new TextEncoder().encode(text);

/** n1 leads term 1 and every node holds and has applied its no-op. */
function ledByN1(): Cluster {
  const c = new Cluster();
  c.fire('n1');
  c.deliverAll();
  c.runFor(200);
  assert.equal(c.leader(), 'n1');
  return c;
}

/** Appends in `envelopes` that carry the entry at `index`, by recipient. */
function appendsWith(envelopes: readonly RaftEnvelope[], index: number): NodeId[] {
  return envelopes.filter(({ message: m }) => m.kind === 'append' &&
    m.entries.some((e) => e.index === index)).map((e) => e.to);
}

/** Delivers every message; n1 steps what it gets, but its Readies are left to the test. */
function deliverAllButHoldN1(c: Cluster): void {
  for (let m = c.inFlight[0]; m !== undefined; m = c.inFlight[0]) {
    c.deliver(0, { process: m.to !== 'n1' });
  }
}

/** Proposes on n1 and takes the Ready that carries the entry, its write left in flight. */
function proposeUnsynced(c: Cluster, text: string): { index: number; ready: Ready } {
  const result = c.node('n1').propose(data(text), c.nowMs);
  assert.equal(result.kind, 'accepted');
  const ready = c.startReady(n('n1'));
  assert.deepEqual(ready.entries.map((e) => e.index), [result.index]);
  assert.equal(ready.mustSync, true);
  return { index: result.index, ready };
}

describe('raft: leader sync (thesis §10.2.1)', () => {
  test('a leader\'s appends of new entries leave before its own write of them is durable', () => {
    const c = ledByN1();
    const { index, ready } = proposeUnsynced(c, 'x');
    assert.deepEqual(appendsWith(ready.messagesBeforePersist, index).sort(), ['n2', 'n3']);
    assert.deepEqual(appendsWith(ready.messages, index), [], 'nothing of it waits for the sync');
    assert.deepEqual(c.inFlight.map((m) => `${m.to} ${m.message.kind}`).sort(),
      ['n2 append', 'n3 append'], 'on the wire while the write is in flight');
    assert.ok(c.node('n1').status().stableIndex < index);
  });

  test('one durable follower copy of three commits nothing while the leader\'s is unsynced', () => {
    const c = ledByN1();
    c.cut(n('n1'), n('n3'));
    const { index, ready } = proposeUnsynced(c, 'x');
    c.deliverAll(); // n2 stores the entry, syncs, acknowledges; n1 steps the ack
    const leader = c.node('n1');
    assert.equal(leader.status().progress.find((p) => p.id === 'n2')?.matchIndex, index);
    assert.equal(leader.status().commitIndex, index - 1, 'n2 alone is not a majority');
    c.completeReady(n('n1'), ready); // n1's own write is durable: two copies of three
    assert.equal(leader.status().commitIndex, index);
    c.process(n('n1'));
    assert.deepEqual(c.applied.get(n('n1'))?.map((e) => e.index).at(-1), index);
    assert.deepEqual(c.violations, []);
  });

  test('two durable follower copies commit the entry before the leader\'s own write is', () => {
    const c = ledByN1();
    const { index, ready } = proposeUnsynced(c, 'x');
    c.deliverAll();
    const leader = c.node('n1');
    assert.equal(leader.status().commitIndex, index, 'a majority of durable copies, without n1');
    assert.ok(leader.status().stableIndex < index);
    c.completeReady(n('n1'), ready);
    c.process(n('n1'));
    assert.equal(c.applied.get(n('n1'))?.at(-1)?.index, index);
  });

  test('with both followers cut off, even the leader\'s durable copy commits nothing', () => {
    const c = ledByN1();
    c.isolate(n('n1'));
    const { index, ready } = proposeUnsynced(c, 'x');
    c.completeReady(n('n1'), ready);
    c.process(n('n1'));
    c.deliverAll();
    const status = c.node('n1').status();
    assert.equal(status.stableIndex, index);
    assert.equal(status.commitIndex, index - 1);
  });

  test('accepted: the next batch is built and replicated while a write is in flight', () => {
    const c = ledByN1();
    const first = proposeUnsynced(c, 'x');
    c.acceptReady(n('n1'), first.ready);
    const second = proposeUnsynced(c, 'y');
    assert.deepEqual(appendsWith(second.ready.messagesBeforePersist, second.index).sort(),
      ['n2', 'n3']);
    c.acceptReady(n('n1'), second.ready);
    deliverAllButHoldN1(c);
    const leader = c.node('n1');
    assert.equal(leader.status().commitIndex, second.index, 'committed by n2 and n3');
    assert.ok(leader.status().stableIndex < first.index, 'neither write of n1 is durable yet');
    assert.throws(() => leader.advance(second.ready), AssertionError, 'writes complete in order');
    c.completeReady(n('n1'), first.ready, { accepted: true });
    c.completeReady(n('n1'), second.ready, { accepted: true });
    assert.equal(leader.status().stableIndex, second.index);
    c.process(n('n1'));
    assert.deepEqual(c.applied.get(n('n1'))?.slice(-2).map((e) => e.index),
      [first.index, second.index]);
    assert.deepEqual(c.violations, []);
  });

  test('a leader whose term is not durable yet sends nothing early until it is', () => {
    // n1 is the only voter, n2 a learner: n1 wins its election in the Ready that stores term 1.
    const c = new Cluster({ ids: ['n1', 'n2'], voters: ['n1'] });
    const node = c.node('n1');
    const tickN1 = (): Ready => {
      c.nowMs = node.nextDeadlineMs();
      node.tick(c.nowMs);
      return c.startReady(n('n1'));
    };
    const elected = tickN1();
    assert.equal(elected.hardState?.term, 1);
    assert.deepEqual(elected.messagesBeforePersist, []);
    assert.deepEqual(appendsWith(elected.messages, 1), ['n2'], 'the no-op, after the sync');
    c.acceptReady(n('n1'), elected);
    const kinds = (envelopes: readonly RaftEnvelope[]): string[] =>
      envelopes.map((e) => `${e.to} ${e.message.kind}`);
    const beat = tickN1();
    assert.equal(beat.hardState, undefined, 'term 1 was handed out already, but is not durable');
    assert.deepEqual(kinds(beat.messagesBeforePersist), []);
    assert.deepEqual(kinds(beat.messages), ['n2 heartbeat']);
    c.acceptReady(n('n1'), beat);
    c.completeReady(n('n1'), elected, { accepted: true });
    c.completeReady(n('n1'), beat, { accepted: true });
    const durable = tickN1();
    assert.deepEqual(kinds(durable.messagesBeforePersist), ['n2 heartbeat']);
  });

  test('a follower\'s acknowledgement waits for its write, accepted or not', () => {
    const c = ledByN1();
    proposeUnsynced(c, 'x');
    c.deliverFirst((m) => m.to === 'n2' && m.message.kind === 'append', { process: false });
    const write = c.startReady(n('n2'));
    assert.equal(write.mustSync, true);
    assert.deepEqual(write.messagesBeforePersist, []);
    assert.deepEqual(write.messages.map((e) => e.message.kind), ['append-response']);
  });
});
