/**
 * The Transport port's compliance suite: what every implementation (the simulator's network,
 * TcpTransport, NetTransport) must do, from the port's delivery contract in
 * src/ports/transport.ts. Method: each test gets a fresh pair of connected transports `a` and
 * `b` from the caller's factory, sends through them, and waits through the caller's `runUntil`
 * (sim: scheduler steps; real sockets: event-loop turns until the condition, with a deadline).
 * Nothing waits a fixed time: "nothing more arrives" is checked after an event that proves the
 * other side noticed (a reset report), never after a sleep.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { NodeId } from '../../src/core/ids.js';
import type { Transport, TransportHandler } from '../../src/ports/transport.js';

/** The message type the suite sends: plain data with bytes, like the protocols' messages. */
export interface TestMessage {
  readonly kind: 'test';
  readonly seq: number;
  readonly body: Uint8Array;
  readonly note: string;
}

/** A total validator of TestMessage, in the shape the real adapters take. */
export function validateTestMessage(value: unknown):
  { ok: true; message: TestMessage } | { ok: false; problem: string } {
  if (typeof value !== 'object' || value === null) return { ok: false, problem: 'not an object' };
  const v = value as Record<string, unknown>;
  const { kind, seq, body, note } = v;
  if (kind !== 'test') return { ok: false, problem: 'kind must be "test"' };
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq)) return { ok: false, problem: 'seq' };
  if (!(body instanceof Uint8Array)) return { ok: false, problem: 'body must be bytes' };
  if (typeof note !== 'string') return { ok: false, problem: 'note must be a string' };
  return { ok: true, message: { kind, seq, body: new Uint8Array(body), note } };
}

export function testMessage(seq: number, bodyBytes = 8): TestMessage {
  const body = new Uint8Array(bodyBytes);
  for (let i = 0; i < bodyBytes; i++) body[i] = (seq * 7 + i) & 0xff;
  return { kind: 'test', seq, body, note: `m${seq}` };
}

export interface TransportPair {
  readonly a: Transport<TestMessage>;
  readonly b: Transport<TestMessage>;
  /** An id that neither transport can reach. */
  readonly unknownPeer: NodeId;
  /** Lets time pass until `done()` holds; rejects naming `what` when it never does. */
  readonly runUntil: (done: () => boolean, what: string) => Promise<void>;
  readonly dispose: () => void | Promise<void>;
}

/** Records what a transport's handler receives. */
export class Recorder implements TransportHandler<TestMessage> {
  readonly messages: { from: NodeId; message: TestMessage }[] = [];
  readonly resets: NodeId[] = [];
  /** Set by the suite around its own `send` calls: a delivery inside one is re-entrant. */
  static sending = false;
  reentrantCalls = 0;

  onMessage(from: NodeId, message: TestMessage): void {
    if (Recorder.sending) this.reentrantCalls++;
    this.messages.push({ from, message });
  }

  onPeerReset(peer: NodeId): void {
    if (Recorder.sending) this.reentrantCalls++;
    this.resets.push(peer);
  }

  seqs(): number[] {
    return this.messages.map((m) => m.message.seq);
  }
}

function sendAll(
  transport: Transport<TestMessage>, to: NodeId, messages: readonly TestMessage[], datagram = false,
): void {
  Recorder.sending = true;
  try {
    for (const m of messages) {
      if (datagram) transport.sendDatagram(to, m);
      else transport.send(to, m);
    }
  } finally {
    Recorder.sending = false;
  }
}

function sameMessage(x: TestMessage, y: TestMessage): boolean {
  return x.kind === y.kind && x.seq === y.seq && x.note === y.note &&
    Buffer.from(x.body).equals(Buffer.from(y.body));
}

const range = (from: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => from + i);

export function runTransportCompliance(name: string, makePair: () => Promise<TransportPair>): void {
  describe(`transport compliance: ${name}`, () => {
    let pair: TransportPair | undefined;
    const fresh = async (): Promise<{ pair: TransportPair; ra: Recorder; rb: Recorder }> => {
      pair = await makePair();
      const ra = new Recorder();
      const rb = new Recorder();
      pair.a.setHandler(ra);
      pair.b.setHandler(rb);
      return { pair, ra, rb };
    };
    afterEach(async () => {
      await pair?.dispose();
      pair = undefined;
    });

    test('stream messages arrive once each, in the order sent, with their content', async () => {
      const { pair: p, rb } = await fresh();
      // Sizes from empty to well above a socket's write buffer, to cross backpressure.
      const sent = range(0, 300).map((seq) => testMessage(seq, (seq * 397) % 40_000));
      sendAll(p.a, p.b.localId, sent);
      await p.runUntil(() => rb.messages.length >= sent.length, 'all 300 messages at b');
      assert.deepEqual(rb.seqs(), range(0, 300));
      for (const [i, got] of rb.messages.entries()) {
        assert.equal(got.from, p.a.localId);
        assert.ok(sameMessage(got.message, sent[i]!), `message ${i} differs from the one sent`);
      }
    });

    test('both directions carry messages at once, each in its own order', async () => {
      const { pair: p, ra, rb } = await fresh();
      for (const seq of range(0, 100)) {
        sendAll(p.a, p.b.localId, [testMessage(seq)]);
        sendAll(p.b, p.a.localId, [testMessage(1000 + seq)]);
      }
      await p.runUntil(() => ra.messages.length >= 100 && rb.messages.length >= 100,
        '100 each way');
      assert.deepEqual(rb.seqs(), range(0, 100));
      assert.deepEqual(ra.seqs(), range(1000, 100));
      assert.ok(ra.messages.every((m) => m.from === p.b.localId));
    });

    test('messages sent in a later turn follow those of an earlier turn', async () => {
      const { pair: p, rb } = await fresh();
      sendAll(p.a, p.b.localId, range(0, 10).map((seq) => testMessage(seq)));
      await p.runUntil(() => rb.messages.length >= 1, 'the first message');
      sendAll(p.a, p.b.localId, range(10, 10).map((seq) => testMessage(seq)));
      await p.runUntil(() => rb.messages.length >= 20, 'all 20 messages');
      assert.deepEqual(rb.seqs(), range(0, 20));
    });

    test('datagrams that arrive are ones that were sent, intact, and some arrive', async () => {
      const { pair: p, rb } = await fresh();
      const sent = range(0, 40).map((seq) => testMessage(seq, 100));
      sendAll(p.a, p.b.localId, sent, true);
      await p.runUntil(() => rb.messages.length >= 1, 'a datagram at b');
      for (const got of rb.messages) {
        assert.equal(got.from, p.a.localId);
        const original = sent[got.message.seq];
        assert.ok(original !== undefined, `unexpected seq ${got.message.seq}`);
        assert.ok(sameMessage(got.message, original), `datagram ${got.message.seq} differs`);
      }
    });

    test('a send to an unknown peer is dropped without throwing; known peers still work',
      async () => {
        const { pair: p, ra, rb } = await fresh();
        assert.doesNotThrow(() => sendAll(p.a, p.unknownPeer, [testMessage(1)]));
        assert.doesNotThrow(() => sendAll(p.a, p.unknownPeer, [testMessage(2)], true));
        sendAll(p.a, p.b.localId, [testMessage(3)]);
        await p.runUntil(() => rb.messages.length >= 1, 'the message to the known peer');
        assert.deepEqual(rb.seqs(), [3]);
        assert.deepEqual(ra.resets.filter((id) => id !== p.unknownPeer), []);
      });

    test('the peer going away is reported to the other side through onPeerReset', async () => {
      const { pair: p, ra, rb } = await fresh();
      sendAll(p.a, p.b.localId, [testMessage(1)]);
      sendAll(p.b, p.a.localId, [testMessage(2)]);
      await p.runUntil(() => ra.messages.length >= 1 && rb.messages.length >= 1, 'links up');
      assert.deepEqual(ra.resets, []);
      p.b.close();
      await p.runUntil(() => ra.resets.includes(p.b.localId), 'a reset report for b at a');
      assert.ok(ra.resets.every((id) => id === p.b.localId), `resets: ${ra.resets.join()}`);
    });

    test('a closed transport delivers nothing more, and sending through it does not throw',
      async () => {
        const { pair: p, ra, rb } = await fresh();
        sendAll(p.a, p.b.localId, [testMessage(1)]);
        await p.runUntil(() => rb.messages.length >= 1, 'the first message');
        p.b.close();
        assert.doesNotThrow(() => sendAll(p.b, p.a.localId, [testMessage(2)]));
        assert.doesNotThrow(() => sendAll(p.b, p.a.localId, [testMessage(3)], true));
        const more = range(4, 5).map((s) => testMessage(s));
        assert.doesNotThrow(() => sendAll(p.a, p.b.localId, more));
        assert.doesNotThrow(() => sendAll(p.a, p.b.localId, [testMessage(9)], true));
        await p.runUntil(() => ra.resets.includes(p.b.localId), 'a reset report for b at a');
        sendAll(p.a, p.b.localId, [testMessage(10)]);
        assert.deepEqual(rb.seqs(), [1]);
        assert.deepEqual(ra.seqs(), []);
        assert.doesNotThrow(() => p.b.close(), 'a second close is harmless');
      });

    test('setHandler replaces the handler: later messages reach only the new one', async () => {
      const { pair: p, rb } = await fresh();
      sendAll(p.a, p.b.localId, [testMessage(1)]);
      await p.runUntil(() => rb.messages.length >= 1, 'the first message');
      const second = new Recorder();
      p.b.setHandler(second);
      sendAll(p.a, p.b.localId, [testMessage(2), testMessage(3)]);
      await p.runUntil(() => second.messages.length >= 2, 'two messages at the new handler');
      assert.deepEqual(rb.seqs(), [1]);
      assert.deepEqual(second.seqs(), [2, 3]);
    });

    test('handlers are never called from inside send, even when they send', async () => {
      const { pair: p, ra } = await fresh();
      // b echoes every message back from inside its handler.
      const echo = new Recorder();
      p.b.setHandler({
        onMessage: (from, message) => {
          echo.onMessage(from, message);
          sendAll(p.b, from, [{ ...message, seq: message.seq + 1000 }]);
        },
      });
      sendAll(p.a, p.b.localId, range(0, 20).map((seq) => testMessage(seq)));
      await p.runUntil(() => ra.messages.length >= 20, '20 echoes at a');
      assert.deepEqual(ra.seqs(), range(1000, 20));
      assert.equal(ra.reentrantCalls + echo.reentrantCalls, 0);
    });
  });
}
