/**
 * swim: messages. Goal: every message kind has a channel, a short description and a size
 * estimate that grows with its content; validation accepts every well-formed message, copies
 * only known fields, rejects malformed ones with a reason, and never throws on any input.
 * Method: examples plus fast-check properties over arbitrary values and mutated messages.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { generation, incarnation, nodeId } from '../../../src/core/ids.js';
import {
  describeSwimMessage, estimateSwimMessageBytes, memberAge, swimMessageChannel,
  validateSwimMessage, type GossipUpdate, type SwimMessage,
} from '../../../src/core/swim/index.js';

const update: GossipUpdate = {
  member: nodeId('n2'), state: 'suspect', incarnation: incarnation(3), age: memberAge(2),
  by: nodeId('n1'),
};
const claim = { generation: generation(4), by: nodeId('n1') };

const EXAMPLES: SwimMessage[] = [
  { kind: 'ping', seq: 1, target: nodeId('n2'), updates: [update] },
  { kind: 'ack', seq: 1, updates: [] },
  { kind: 'ping-req', seq: 2, target: nodeId('n3'), updates: [] },
  { kind: 'nack', seq: 2, updates: [] },
  {
    kind: 'gossip',
    updates: [update, { ...update, state: 'dead', readmit: true, generation: generation(2) }],
  },
  { kind: 'join', address: '10.0.0.1:7946' },
  {
    kind: 'join-ack', age: memberAge(5), incarnation: incarnation(1), claim,
    members: [update], stable: [nodeId('n1')],
  },
  { kind: 'push-pull', reply: false, acting: true, claim, members: [update] },
];

describe('swim: messages', () => {
  test('probes and gossip are datagrams; join and push-pull use the stream', () => {
    assert.deepEqual(EXAMPLES.map(swimMessageChannel), [
      'datagram', 'datagram', 'datagram', 'datagram', 'datagram', 'stream', 'stream', 'stream',
    ]);
  });

  test('descriptions are short and name the kind', () => {
    assert.equal(describeSwimMessage(EXAMPLES[0]!), 'ping#1 n2 [n2:s3]');
    assert.equal(describeSwimMessage(EXAMPLES[7]!), 'push-pull gen=4 members=1');
    for (const m of EXAMPLES) assert.ok(describeSwimMessage(m).startsWith(m.kind));
  });

  test('size estimates grow with the updates carried', () => {
    const small = estimateSwimMessageBytes({ kind: 'gossip', updates: [update] });
    const large = estimateSwimMessageBytes({ kind: 'gossip', updates: [update, update, update] });
    assert.ok(small > 20 && large > small, `${small} ${large}`);
  });
});

describe('swim: message validation', () => {
  test('well-formed messages pass and come back as equal copies', () => {
    for (const m of EXAMPLES) {
      const checked = validateSwimMessage(structuredClone(m));
      assert.ok(checked.ok, JSON.stringify(checked));
      assert.deepEqual(checked.message, m);
    }
  });

  test('unknown fields are dropped', () => {
    const checked = validateSwimMessage({ kind: 'ack', seq: 1, updates: [], evil: true });
    assert.ok(checked.ok);
    assert.deepEqual(checked.message, { kind: 'ack', seq: 1, updates: [] });
  });

  test('a push-pull keeps its nonce (the catch-up of the generation ratchet)', () => {
    const message = { kind: 'push-pull', reply: true, acting: true, claim, members: [update],
      nonce: 2 ** 32 - 1 };
    const checked = validateSwimMessage(structuredClone(message));
    assert.ok(checked.ok);
    assert.deepEqual(checked.message, message);
  });

  test('malformed messages are rejected with the reason', () => {
    const cases: [unknown, RegExp][] = [
      [null, /message must be an object/],
      [{ kind: 'hello' }, /unknown kind/],
      [{ kind: 'ack', seq: -1, updates: [] }, /seq/],
      [{ kind: 'ack', seq: 1.5, updates: [] }, /seq/],
      [{ kind: 'ping', seq: 1, target: '', updates: [] }, /target must not be empty/],
      [{ kind: 'gossip', updates: [{ ...update, state: 'zombie' }] }, /state/],
      [{ kind: 'gossip', updates: new Array(300).fill(update) }, /max 256/],
      [{ kind: 'push-pull', reply: 'yes', acting: true, claim, members: [] }, /reply/],
      [{ kind: 'push-pull', reply: true, acting: true, claim, members: [], nonce: -1 }, /nonce/],
      [{ kind: 'join', address: 'x'.repeat(300) }, /address/],
    ];
    for (const [value, problem] of cases) {
      const checked = validateSwimMessage(value);
      assert.ok(!checked.ok, JSON.stringify(value));
      assert.match(checked.problem, problem);
    }
  });

  test('never throws, whatever arrives', () => {
    const hostile = new Proxy({}, { get: () => { throw new Error('boom'); } });
    assert.deepEqual(validateSwimMessage(hostile),
      { ok: false, problem: 'message could not be read' });
    fc.assert(fc.property(fc.anything(), (value) => {
      const checked = validateSwimMessage(value);
      assert.equal(typeof checked.ok, 'boolean');
    }), { numRuns: 2000 });
  });

  test('mutated valid messages are either accepted as valid or rejected, never thrown', () => {
    const mutation = fc.tuple(
      fc.integer({ min: 0, max: EXAMPLES.length - 1 }),
      fc.constantFrom('kind', 'seq', 'target', 'updates', 'members', 'claim', 'age', 'reply'),
      fc.anything(),
    );
    fc.assert(fc.property(mutation, ([index, field, value]) => {
      const message = { ...(EXAMPLES[index] as object), [field]: value };
      const checked = validateSwimMessage(message);
      if (checked.ok) assert.ok(validateSwimMessage(checked.message).ok);
    }), { numRuns: 2000 });
  });
});
