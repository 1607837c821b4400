/**
 * Goal: RaftMessage is plain data that survives msgpack, `validateRaftMessage` is total (never
 * throws) and strict about the relations the core relies on, and `describeRaftMessage` is
 * short and deterministic. Method: examples, a msgpackr round trip, and fast-check over
 * arbitrary values and over mutated valid messages.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { pack, unpack } from 'msgpackr';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import { describeRaftMessage, validateRaftMessage } from '../../../src/core/raft/index.js';
import type { Entry, RaftMessage } from '../../../src/core/raft/index.js';

const entry = (i: number, t: number, bytes: number[] = [i]): Entry =>
  ({ index: logIndex(i), term: term(t), kind: 'normal', data: new Uint8Array(bytes) });

const EXAMPLES: readonly RaftMessage[] = [
  { kind: 'pre-vote', term: term(3), lastLogIndex: logIndex(7), lastLogTerm: term(2) },
  { kind: 'pre-vote-response', term: term(3), granted: true },
  { kind: 'vote', term: term(3), lastLogIndex: logIndex(7), lastLogTerm: term(2) },
  { kind: 'vote-response', term: term(3), granted: false },
  { kind: 'append', term: term(3), prevLogIndex: logIndex(5), prevLogTerm: term(2),
    entries: [entry(6, 3, [1, 2]), { ...entry(7, 3), kind: 'noop', data: new Uint8Array() }],
    commitIndex: logIndex(5) },
  { kind: 'append-response', term: term(3), success: false, index: logIndex(5),
    hintIndex: logIndex(4), hintTerm: term(2) },
  { kind: 'heartbeat', term: term(3), commitIndex: logIndex(5) },
  { kind: 'heartbeat-response', term: term(3) },
  { kind: 'vote', term: term(4), lastLogIndex: logIndex(7), lastLogTerm: term(2), transfer: true },
  { kind: 'timeout-now', term: term(3) },
  { kind: 'heartbeat', term: term(3), commitIndex: logIndex(5), readRound: 7 },
  { kind: 'heartbeat-response', term: term(3), readRound: 7 },
  { kind: 'read-index', term: term(3), requestId: 'r1' },
  { kind: 'read-index-response', term: term(3), requestId: 'r1', success: true, index: logIndex(9) },
  { kind: 'snapshot', term: term(3), meta: { index: logIndex(40), term: term(2),
    membership: { voters: [nodeId('n1'), nodeId('n2')], learners: [nodeId('n3')] } },
  totalBytes: 10, checksum: 0xdeadbeef, offsetBytes: 4, data: new Uint8Array([1, 2, 3]) },
  { kind: 'snapshot-response', term: term(3), snapshotIndex: logIndex(40), nextOffsetBytes: 7 },
];

describe('raft: messages', () => {
  test('every kind survives a msgpack round trip and validation unchanged', () => {
    for (const m of EXAMPLES) {
      const back = validateRaftMessage(unpack(pack(m)));
      assert.ok(!('error' in back), JSON.stringify(back));
      assert.equal(describeRaftMessage(back), describeRaftMessage(m));
      assert.deepEqual(plain(back), plain(m));
    }
  });

  test('describeRaftMessage is short and deterministic', () => {
    assert.deepEqual(EXAMPLES.map(describeRaftMessage), [
      'pre-vote t=3 last=7/2',
      'pre-vote-response t=3 granted',
      'vote t=3 last=7/2',
      'vote-response t=3 refused',
      'append t=3 prev=5/2 ents=[6/3,7/3:noop] commit=5',
      'append-response t=3 refused index=5 hint=4/2',
      'heartbeat t=3 commit=5',
      'heartbeat-response t=3',
      'vote t=4 last=7/2 transfer',
      'timeout-now t=3',
      'heartbeat t=3 commit=5 round=7',
      'heartbeat-response t=3 round=7',
      'read-index t=3 id=r1',
      'read-index-response t=3 id=r1 index=9',
      'snapshot t=3 at=40/2 bytes=4+3/10',
      'snapshot-response t=3 at=40 next=7',
    ]);
    const many = { kind: 'append', term: term(4), prevLogIndex: logIndex(0),
      prevLogTerm: term(0), entries: [1, 2, 3, 4, 5, 6].map((i) => entry(i, 4)),
      commitIndex: logIndex(0) } as const;
    assert.equal(describeRaftMessage(many), 'append t=4 prev=0/0 ents=[1/4..6/4 n=6] commit=0');
  });

  test('validation refuses broken shapes and broken relations, naming the problem', () => {
    const cases: [unknown, RegExp][] = [
      [null, /must be an object/],
      [{ kind: 'gossip', term: 1 }, /unknown message kind/],
      [{ kind: 'heartbeat', term: -1, commitIndex: 0 }, /term must be/],
      [{ kind: 'heartbeat', term: 1.5, commitIndex: 0 }, /term must be/],
      [{ kind: 'vote', term: 2, lastLogIndex: 3, lastLogTerm: 5 }, /lastLogTerm exceeds term/],
      [{ kind: 'vote-response', term: 2, granted: 'yes' }, /granted must be a boolean/],
      [{ ...EXAMPLES[4], entries: [entry(7, 3)] }, /not consecutive/],
      [{ ...EXAMPLES[4], entries: [entry(6, 1)] }, /term decreases/],
      [{ ...EXAMPLES[4], entries: [entry(6, 9)] }, /exceeds the message term/],
      [{ ...EXAMPLES[4], entries: [{ ...entry(6, 3), data: [1] }] }, /data must be bytes/],
      [{ ...EXAMPLES[4], entries: [{ ...entry(6, 3), kind: 'weird' }] }, /kind is unknown/],
      [{ ...EXAMPLES[4], prevLogIndex: 0 }, /index 0 must have term 0/],
      [{ ...EXAMPLES[5], hintIndex: 9 }, /hintIndex exceeds index/],
      [{ ...EXAMPLES[8], transfer: 'yes' }, /transfer must be true/],
      [{ ...EXAMPLES[13], requestId: '' }, /requestId must be a string/],
      [{ ...EXAMPLES[13], success: false, index: 4 }, /refusal carries index 0/],
      [{ ...EXAMPLES[14], offsetBytes: 8 }, /chunk ends past totalBytes/],
      [{ ...EXAMPLES[14], meta: { index: 40, term: 2, membership: { voters: [], learners: [] } } },
        /voters must not be empty/],
      [{ ...EXAMPLES[14], meta: { index: 40, term: 9, membership: { voters: ['n1'], learners: [] } } },
        /not above the message term/],
      [{ ...EXAMPLES[4], entries: [{ ...entry(6, 3), kind: 'config' }] }, /config entry/],
      // Recorded peer addresses are hostile input too: host:port, bounded, one per member.
      [{ ...EXAMPLES[14], meta: { index: 40, term: 2, membership: { voters: ['n1'],
        learners: ['n3'], peerAddrs: [{ id: 'n3', addr: `${'h'.repeat(300)}:1` }] } } },
      /longer than 262/],
      [{ ...EXAMPLES[14], meta: { index: 40, term: 2, membership: { voters: ['n1'],
        learners: ['n3'], peerAddrs: [{ id: 'n9', addr: 'h:1' }] } } }, /not a member/],
      [{ ...EXAMPLES[14], meta: { index: 40, term: 2, membership: { voters: ['n1'],
        learners: [], peerAddrs: [{ id: 'n1', addr: 'h:1' }, { id: 'n1', addr: 'h:2' }] } } },
        /at most one record per member/],
      [{ ...EXAMPLES[4], entries: [{ ...entry(6, 3), kind: 'config', data: new TextEncoder()
        .encode('{"voters":["n1"],"learners":[],"peerAddrs":[{"id":"n1","addr":"h:x"}]}') }] },
        /peerAddrs of n1: not a host:port/],
      // Published client URLs likewise: http(s)://host:port, one per member.
      [{ ...EXAMPLES[14], meta: { index: 40, term: 2, membership: { voters: ['n1'],
        learners: ['n3'], clientUrls: [{ id: 'n3', url: 'file:///etc/passwd' }] } } },
      /clientUrls of n3: not an http/],
      [{ ...EXAMPLES[14], meta: { index: 40, term: 2, membership: { voters: ['n1'],
        learners: [], clientUrls: [{ id: 'n9', url: 'http://h:1' }] } } }, /not a member/],
    ];
    for (const [value, pattern] of cases) {
      const result = validateRaftMessage(value);
      assert.ok('error' in result, `accepted: ${JSON.stringify(value)}`);
      assert.match(result.error, pattern);
    }
  });

  test('validation copies only the known fields', () => {
    const result = validateRaftMessage({ ...EXAMPLES[7], extra: 'x' });
    assert.deepEqual(result, { kind: 'heartbeat-response', term: 3 });
  });

  test('validation never throws on arbitrary values', () => {
    fc.assert(fc.property(fc.anything({ withTypedArray: true, withBigInt: true }), (value) => {
      const result = validateRaftMessage(value);
      assert.ok('error' in result || typeof result.kind === 'string');
    }), { numRuns: 2000 });
  });

  test('validation never throws on valid messages with one field replaced', () => {
    const field = fc.constantFrom('kind', 'term', 'entries', 'granted', 'prevLogIndex',
      'commitIndex', 'lastLogTerm', 'index', 'success', 'transfer', 'readRound', 'requestId',
      'meta', 'data', 'offsetBytes', 'totalBytes', 'nextOffsetBytes');
    fc.assert(fc.property(fc.constantFrom(...EXAMPLES), field, fc.anything(), (m, key, value) => {
      const result = validateRaftMessage({ ...m, [key]: value });
      if (!('error' in result)) assert.equal(typeof describeRaftMessage(result), 'string');
    }), { numRuns: 2000 });
  });

  test('validation survives a hostile getter', () => {
    const hostile = Object.defineProperty({ kind: 'heartbeat' }, 'term', {
      get() { throw new Error('boom'); },
    });
    assert.match((validateRaftMessage(hostile) as { error: string }).error, /boom/);
  });
});

/** The message with entry bytes as number arrays (msgpackr decodes bytes as a Buffer). */
function plain(m: RaftMessage): unknown {
  if (m.kind === 'snapshot') return { ...m, data: [...m.data] };
  if (m.kind !== 'append') return { ...m };
  return { ...m, entries: m.entries.map((e) => ({ ...e, data: [...e.data] })) };
}
