/**
 * Goal: no input crashes RaftNode. Method: fast-check schedules of an ordinary 3-node cluster
 * (deliveries, ticks, proposals, restarts) mixed with injected values of every message kind
 * whose fields are drawn from the extremes (0, 2^31, 2^53 − 1, 2^53, −1, 1.5, NaN, broken entry
 * chains, config entries that may not decode). Each value goes through `validateRaftMessage`
 * first, as at the adapter: the validator must answer (never throw); what it accepts is
 * stepped into a member. From `evil` (a non-member) every safety property must also hold and
 * the cluster must still elect and commit; from members' ids (well-formed forgeries included,
 * which only authentication stops) the node's own assertions must never fire.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { nodeId, type NodeId } from '../../../src/core/ids.js';
import { encodeMembership, validateRaftMessage } from '../../../src/core/raft/index.js';
import { Cluster } from './harness.js';

const number = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 12 }) },
  { weight: 2, arbitrary: fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 53 - 2,
    2 ** 53 - 1) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 53, -1, 1.5, Number.NaN) },
);

const configData = encodeMembership({ voters: [nodeId('n1'), nodeId('evil')], learners: [] });
const entry = fc.record({
  index: number, term: number,
  kind: fc.constantFrom('normal', 'noop', 'config', 'bogus'),
  data: fc.oneof(fc.uint8Array({ maxLength: 6 }), fc.constant(configData)),
});

const KINDS = ['pre-vote', 'vote', 'pre-vote-response', 'vote-response', 'append',
  'append-response', 'heartbeat', 'heartbeat-response', 'timeout-now', 'read-index',
  'read-index-response', 'snapshot', 'snapshot-response', 'no-such-kind'] as const;

/** Every field any kind has, drawn at once; the validator keeps those the kind has. */
const hostileValue = fc.record({
  kind: fc.constantFrom(...KINDS),
  term: number, lastLogIndex: number, lastLogTerm: number, granted: fc.boolean(),
  transfer: fc.constantFrom(undefined, true, 'yes'),
  prevLogIndex: number, prevLogTerm: number, commitIndex: number,
  entries: fc.array(entry, { maxLength: 3 }),
  success: fc.boolean(), index: number, hintIndex: number, hintTerm: number,
  readRound: fc.option(number, { nil: undefined }),
  requestId: fc.constantFrom('r1', 'r2', ''),
  meta: fc.record({ index: number, term: number, membership: fc.constantFrom(
    { voters: ['n1', 'n2', 'n3'], learners: [] }, { voters: ['evil'], learners: [] },
    { voters: [], learners: [] }) }),
  totalBytes: number, checksum: number, offsetBytes: number,
  data: fc.uint8Array({ maxLength: 6 }), snapshotIndex: number, nextOffsetBytes: number,
}, { requiredKeys: ['kind'] });

/** Placing entries right after prevLogIndex makes more of them valid (consecutive). */
const aligned = hostileValue.map((v) => {
  const prev = typeof v.prevLogIndex === 'number' ? v.prevLogIndex : 0;
  return v.entries === undefined ? v : { ...v, entries: v.entries.map((e, i) =>
    ({ ...e, index: prev + 1 + i })) };
});

/** Appends and snapshots that pass the validator: the shape right, the content hostile. */
const safeNumber = fc.oneof({ weight: 5, arbitrary: fc.nat({ max: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(2 ** 31, 2 ** 31 + 1, 2 ** 53 - 1) });
const wellFormedAppend = fc.record({ term: safeNumber, prev: fc.nat({ max: 12 }),
  prevTerm: fc.nat({ max: 12 }), count: fc.nat({ max: 3 }), commit: safeNumber,
  config: fc.boolean() }).map((a) => ({
  kind: 'append', term: a.term, prevLogIndex: a.prev,
  prevLogTerm: a.prev === 0 ? 0 : Math.min(a.term, a.prevTerm),
  entries: a.term === 0 ? [] : Array.from({ length: a.count }, (_, i) => ({
    index: a.prev + 1 + i, term: a.term, kind: a.config ? 'config' : 'normal',
    data: a.config ? configData : new Uint8Array([i]) })),
  commitIndex: a.commit,
}));
const wellFormedSnapshot = fc.record({ term: safeNumber, index: fc.nat({ max: 12 }),
  size: fc.nat({ max: 8 }), totalExtra: fc.constantFrom(0, 0, 5, 2 ** 40),
  offset: fc.nat({ max: 3 }) }).map((a) => ({
  kind: 'snapshot', term: Math.max(1, a.term),
  meta: { index: a.index + 1, term: Math.max(1, Math.min(a.term, 3)),
    membership: { voters: ['n1', 'n2', 'n3'], learners: [] } },
  totalBytes: a.offset + a.size + a.totalExtra, checksum: 0, offsetBytes: a.offset,
  data: new Uint8Array(a.size),
}));

type Action =
  | { readonly t: 'deliver'; readonly k: number }
  | { readonly t: 'fire'; readonly node: number }
  | { readonly t: 'propose'; readonly node: number }
  | { readonly t: 'restart'; readonly node: number }
  | { readonly t: 'inject'; readonly node: number; readonly from: number; readonly value: unknown };

const node = fc.nat({ max: 2 });
const action = (senders: number): fc.Arbitrary<Action> => fc.oneof(
  { weight: 10, arbitrary: fc.nat({ max: 1000 }).map((k) => ({ t: 'deliver', k }) as const) },
  { weight: 3, arbitrary: node.map((n) => ({ t: 'fire', node: n }) as const) },
  { weight: 3, arbitrary: node.map((n) => ({ t: 'propose', node: n }) as const) },
  { weight: 1, arbitrary: node.map((n) => ({ t: 'restart', node: n }) as const) },
  { weight: 6, arbitrary: fc.record({ node, from: fc.nat({ max: senders - 1 }),
    value: fc.oneof(hostileValue, aligned, wellFormedAppend, wellFormedSnapshot) })
    .map((a) => ({ t: 'inject', ...a }) as const) },
);

const SENDERS: readonly NodeId[] = [nodeId('evil'), nodeId('n1'), nodeId('n2'), nodeId('n3')];

function apply(c: Cluster, a: Action, proposals: { n: number }): void {
  const id = (i: number): NodeId => c.ids[i] as NodeId;
  switch (a.t) {
    case 'deliver':
      if (c.inFlight.length > 0) c.deliver(a.k % c.inFlight.length);
      return;
    case 'fire':
      if (Number.isFinite(c.node(id(a.node)).nextDeadlineMs())) c.fire(id(a.node));
      return;
    case 'propose':
      c.propose(id(a.node), `p${proposals.n++}`);
      return;
    case 'restart':
      c.crash(id(a.node));
      c.restart(id(a.node));
      return;
    case 'inject': {
      const message = validateRaftMessage(a.value); // must answer, never throw
      if ('error' in message) return;
      c.node(id(a.node)).step(SENDERS[a.from]!, message, c.nowMs);
      c.process(id(a.node));
    }
  }
}

describe('raft: hostile input: properties', () => {
  test('from a non-member: no crash, every safety property holds, the cluster commits', () => {
    fc.assert(fc.property(fc.nat({ max: 1_000_000 }), fc.array(action(1), { minLength: 50,
      maxLength: 200 }), (seed, actions) => {
      const c = new Cluster({ seed });
      const proposals = { n: 0 };
      for (const a of actions) {
        apply(c, a, proposals);
        c.checkLogMatching();
        assert.deepEqual(c.violations, []);
      }
      c.runFor(3000);
      const leader = c.elect();
      assert.equal(c.propose(leader, 'final').kind, 'accepted');
      c.runFor(500);
      for (const id of c.ids) {
        assert.equal(c.node(id).status().commitIndex, c.node(leader).status().lastIndex);
        assert.ok(c.node(id).status().term < 2 ** 31);
      }
      assert.deepEqual(c.violations, []);
    }), { numRuns: 120, endOnFailure: true }); // no shrinking: a replay seed is enough
  });

  test('from any id, well-formed forgeries included: the node never crashes', () => {
    fc.assert(fc.property(fc.nat({ max: 1_000_000 }), fc.array(action(SENDERS.length),
      { minLength: 50, maxLength: 200 }), (seed, actions) => {
      const c = new Cluster({ seed });
      const proposals = { n: 0 };
      for (const a of actions) apply(c, a, proposals);
      c.runFor(1000);
    }), { numRuns: 120, endOnFailure: true }); // no shrinking: a replay seed is enough
  });
});
