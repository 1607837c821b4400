/**
 * adapters: tcp transport. Goal: the TCP peer transport survives bad input (garbage, oversized
 * length prefixes, HTTP requests, invalid message shapes, strangers from another cluster) by
 * closing only the offending connection and serving everyone else; keeps its bounds under
 * backpressure; reconnects with back-off; and reports resets as the port promises.
 * Method: live transports and raw sockets on 127.0.0.1 ephemeral ports; every wait is a
 * condition with a deadline; outcomes are read from handlers, raw sockets and metrics.
 */
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { afterEach, describe, test } from 'node:test';
import { FrameDecoder, MessageCodec } from '../../src/adapters/frame-codec.js';
import { parsePeerAddress, formatPeerAddress } from '../../src/adapters/peer-address.js';
import { WIRE_VERSION } from '../../src/adapters/tcp-handshake.js';
import { TcpTransport, reconnectDelayMs } from '../../src/adapters/tcp-transport.js';
import {
  TCP_TRANSPORT_DEFAULTS, validateTcpTransportConfig,
} from '../../src/adapters/tcp-transport-config.js';
import { nodeId } from '../../src/core/ids.js';
import { Prng } from '../../src/sim/prng.js';
import { Recorder, testMessage, type TestMessage } from '../compliance/transport.suite.js';
import {
  freePort, rawClient, tcpOptions, tcpPair, waitFor, type RawClient,
} from './real-net-helpers.js';

const codec = new MessageCodec();
const open: { close(): void }[] = [];
const sockets: net.Socket[] = [];
afterEach(() => {
  for (const t of open.splice(0)) t.close();
  for (const s of sockets.splice(0)) s.destroy();
});

function frame(value: unknown): Buffer {
  const encoded = codec.encodeFrame(value, 1 << 20);
  assert.ok(encoded.ok);
  return encoded.bytes;
}

function hello(from: string, extra: Record<string, unknown> = {}): Buffer {
  return frame({
    kind: 'conclave-hello', version: WIRE_VERSION, cluster: 'conclave', from, ...extra,
  });
}

async function pair(config = {}): Promise<{
  a: TcpTransport<TestMessage>; b: TcpTransport<TestMessage>; ra: Recorder; rb: Recorder;
}> {
  const { a, b } = await tcpPair(config);
  open.push(a, b);
  const ra = new Recorder();
  const rb = new Recorder();
  a.setHandler(ra);
  b.setHandler(rb);
  return { a, b, ra, rb };
}

async function raw(port: number): Promise<RawClient> {
  const client = await rawClient(port);
  sockets.push(client.socket);
  return client;
}

/** A raw client that completed the handshake as `from`. */
async function greeted(port: number, from = 'x'): Promise<RawClient> {
  const client = await raw(port);
  client.socket.write(hello(from));
  await waitFor(() => client.received().length > 4, 'a welcome');
  const out = new FrameDecoder(4096).push(client.received());
  assert.deepEqual(codec.decodePayload(out.payloads[0]!), {
    ok: true, value: { kind: 'conclave-welcome', from: 'b' },
  });
  return client;
}

/** Proves that b still serves a: a fresh message from a arrives. */
async function stillServes(
  a: TcpTransport<TestMessage>, b: TcpTransport<TestMessage>, rb: Recorder, seq: number,
): Promise<void> {
  a.send(b.localId, testMessage(seq));
  await waitFor(() => rb.seqs().includes(seq), `message ${seq} from a at b`);
}

describe('adapters: tcp transport: bad input', () => {
  test('garbage bytes close that connection, are counted, and b keeps serving a', async () => {
    const { a, b, rb } = await pair();
    await stillServes(a, b, rb, 1);
    const client = await raw(b.address.port);
    client.socket.write(Buffer.from([0x00, 0x00, 0x00, 0x05, 0xc1, 0xff, 0x00, 0x13, 0x37]));
    await waitFor(client.closed, 'b closes the garbage connection');
    const m = b.metrics();
    assert.equal(m.decodeErrors + m.handshakesRefused, 1);
    await stillServes(a, b, rb, 2);
    assert.deepEqual(rb.resets, []);
  });

  test('garbage after a valid handshake closes the connection without a reset report', async () => {
    const { a, b, rb } = await pair();
    const client = await greeted(b.address.port);
    client.socket.write(Buffer.from([0x00, 0x00, 0x00, 0x03, 0xc1, 0xc1, 0xc1]));
    await waitFor(client.closed, 'b closes the connection');
    assert.equal(b.metrics().decodeErrors, 1);
    await stillServes(a, b, rb, 1);
    assert.deepEqual(rb.resets, []);
    assert.deepEqual(rb.messages.map((m) => m.from), ['a']);
  });

  test('a 0xFFFFFFFF length prefix closes the connection before anything is buffered', async () => {
    const { a, b, rb } = await pair();
    const before = process.memoryUsage().arrayBuffers;
    const client = await greeted(b.address.port);
    // Only 7 bytes follow: a decoder that waited to buffer the frame would never close.
    client.socket.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3]));
    await waitFor(client.closed, 'b closes on the length prefix alone');
    assert.equal(b.metrics().framesTooLarge, 1);
    assert.ok(process.memoryUsage().arrayBuffers - before < 64 * 1024 * 1024, 'no 4 GiB buffer');
    await stillServes(a, b, rb, 1);
  });

  test('a length prefix above frameBytesMax is refused; a frame at the limit passes', async () => {
    const frameBytesMax = 64 * 1024;
    const { a, b, rb } = await pair({ frameBytesMax, queueBytesMax: 1 << 20 });
    const client = await greeted(b.address.port);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(frameBytesMax + 1);
    client.socket.write(Buffer.concat([header, Buffer.alloc(10)]));
    await waitFor(client.closed, 'b closes on the length prefix');
    assert.equal(b.metrics().framesTooLarge, 1);
    // The largest message that fits is delivered; one that does not is dropped by the sender.
    const big = testMessage(7, frameBytesMax - 64);
    const tooBig = testMessage(8, frameBytesMax);
    a.send(b.localId, tooBig);
    a.send(b.localId, big);
    await waitFor(() => rb.messages.length >= 1, 'the message at the limit');
    assert.deepEqual(rb.seqs(), [7]);
    assert.equal(a.metrics().droppedTooLarge, 1);
  });

  test('a length prefix above the handshake limit is refused before the hello', async () => {
    const { b } = await pair();
    const client = await raw(b.address.port);
    client.socket.write(Buffer.from([0x00, 0x01, 0x00, 0x00, 0x01]));
    await waitFor(client.closed, 'b closes an unidentified client announcing 64 KiB');
    assert.equal(b.metrics().framesTooLarge, 1);
  });

  const requests = ['GET / HTTP/1.1\r\nHost: x\r\n\r\n', 'POST /kv HTTP/1.1\r\nHost: x\r\n\r\n'];
  for (const request of requests) {
    test(`an HTTP ${request.split(' ')[0]} gets a 400 naming the peer port, and a close`,
      async () => {
        const { a, b, rb } = await pair();
        const client = await raw(b.address.port);
        client.socket.write(request);
        await waitFor(client.closed, 'b closes the HTTP connection');
        const response = client.received().toString('utf8');
        assert.match(response, /^HTTP\/1\.1 400 Bad Request\r\n/);
        assert.match(response, /This is a Conclave peer port/);
        assert.equal(b.metrics().httpRequestsRefused, 1);
        await stillServes(a, b, rb, 1);
      });
  }

  test('a frame with an invalid message shape is dropped, its connection closed', async () => {
    const { a, b, rb } = await pair();
    const client = await greeted(b.address.port);
    client.socket.write(frame({ kind: 'test', seq: 'not a number', body: 1 }));
    await waitFor(client.closed, 'b closes the connection');
    assert.equal(b.metrics().invalidMessages, 1);
    assert.deepEqual(rb.messages, []);
    await stillServes(a, b, rb, 1);
  });

  test('a client that never says hello is closed after handshakeTimeoutMs', async () => {
    const { b } = await pair({ handshakeTimeoutMs: 100 });
    const client = await raw(b.address.port);
    await waitFor(client.closed, 'b closes the silent client');
    assert.equal(b.metrics().handshakesRefused, 1);
  });

  test('inbound connections beyond inboundConnectionsMax are closed at accept', async () => {
    const { b } = await pair({ inboundConnectionsMax: 2 });
    const clients = [await raw(b.address.port), await raw(b.address.port)];
    await waitFor(() => b.metrics().inboundConnections === 2, 'two connections held');
    const third = await raw(b.address.port);
    await waitFor(third.closed, 'the third is closed');
    assert.equal(b.metrics().inboundRefusedAtLimit, 1);
    assert.ok(clients.every((c) => !c.closed()));
  });
});

describe('adapters: tcp transport: handshake', () => {
  test('a node of another cluster is refused, both names logged, ours not told; nothing delivered',
    async () => {
    const a = await TcpTransport.listen(tcpOptions('a', 1, { clusterName: 'blue' }));
    const b = await TcpTransport.listen(tcpOptions('b', 2, { clusterName: 'green' }));
    open.push(a, b);
    const ra = new Recorder();
    const rb = new Recorder();
    a.setHandler(ra);
    b.setHandler(rb);
    a.setPeerAddress(b.localId, b.address);
    a.send(b.localId, testMessage(1));
    await waitFor(() => a.metrics().handshakesRejectedByPeer === 1, 'a learns it was refused');
    assert.equal(b.metrics().handshakesRefused, 1);
    assert.deepEqual(rb.messages, []);
    await waitFor(() => ra.resets.length === 1, 'the refusal reported at a');
    assert.deepEqual(ra.resets, ['b']);

    const client = await raw(b.address.port);
    client.socket.write(hello('x', { cluster: 'blue' }));
    await waitFor(client.closed, 'b closes the raw client');
    const reply = codec.decodePayload(new FrameDecoder(4096).push(client.received()).payloads[0]!);
    assert.ok(reply.ok);
    const reason = (reply.value as { reason: string }).reason;
    assert.match(reason, /cluster name mismatch/);
    assert.ok(!reason.includes('green'), `our cluster name told to a stranger: ${reason}`);
  });

  test('a hello meant for another id is refused (address book out of date)', async () => {
    const { a, b, rb } = await pair();
    a.setPeerAddress(nodeId('c'), b.address);
    a.send(nodeId('c'), testMessage(1));
    await waitFor(() => a.metrics().handshakesRejectedByPeer === 1, 'the refusal at a');
    assert.deepEqual(rb.messages, []);
    await stillServes(a, b, rb, 2);
  });

  test('a seed known only by address (anyId) is reached and hears the real sender', async () => {
    const { a, b, rb } = await pair();
    a.setPeerAddress(nodeId('seed:1'), b.address, { anyId: true });
    a.send(nodeId('seed:1'), testMessage(1));
    await waitFor(() => rb.messages.length === 1, 'the message at b');
    assert.equal(rb.messages[0]?.from, 'a');
  });

  test('a peer that reconnects replaces its old inbound connection without a reset', async () => {
    const { b, rb } = await pair();
    const first = await greeted(b.address.port, 'x');
    const second = await greeted(b.address.port, 'x');
    await waitFor(first.closed, 'the old connection closed by b');
    assert.ok(!second.closed());
    second.socket.write(frame(testMessage(5)));
    await waitFor(() => rb.messages.length === 1, 'a message on the new connection');
    assert.deepEqual(rb.resets, []);
  });

  test('with learnPeerAddresses, a hello teaches the address of an unknown peer', async () => {
    const a = await TcpTransport.listen(tcpOptions('a', 1));
    const b = await TcpTransport.listen(tcpOptions('b', 2, { learnPeerAddresses: true }));
    open.push(a, b);
    const ra = new Recorder();
    a.setHandler(ra);
    b.setHandler(new Recorder());
    a.setPeerAddress(b.localId, b.address);
    a.send(b.localId, testMessage(1));
    await waitFor(() => b.peerAddress(a.localId) !== undefined, 'b learns where a listens');
    b.send(a.localId, testMessage(2));
    await waitFor(() => ra.messages.length === 1, 'the answer at a');
  });
});

describe('adapters: tcp transport: links', () => {
  test('an unreachable peer is reported once, backed off, reached once it listens', async () => {
    const port = await freePort();
    const a = await TcpTransport.listen(tcpOptions('a', 1));
    open.push(a);
    const ra = new Recorder();
    a.setHandler(ra);
    a.setPeerAddress(nodeId('b'), { host: '127.0.0.1', port });
    // Sends keep coming (as Raft heartbeats would): each back-off ends in another attempt.
    await waitFor(() => {
      a.send(nodeId('b'), testMessage(0));
      return a.metrics().connectsFailed >= 3;
    }, 'three failed connects');
    assert.deepEqual(ra.resets, ['b'], 'one report per outage, not one per attempt');
    assert.ok(a.metrics().droppedUnreachable >= 1);

    const b = await TcpTransport.listen({ ...tcpOptions('b', 2), listen: { port } });
    open.push(b);
    const rb = new Recorder();
    b.setHandler(rb);
    let seq = 1;
    await waitFor(() => {
      a.send(b.localId, testMessage(seq++));
      return rb.messages.length > 0;
    }, 'a reaches b after it starts');
    assert.ok(a.metrics().reconnects >= 1);
    const seqs = rb.seqs();
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), 'in order');
  });

  test('after the peer restarts on its address, the link comes back in order', async () => {
    const { a, b, ra, rb } = await pair();
    await stillServes(a, b, rb, 1);
    const port = b.address.port;
    b.close();
    await waitFor(() => ra.resets.includes(b.localId), 'the reset at a');
    const b2 = await TcpTransport.listen({ ...tcpOptions('b', 3), listen: { port } });
    open.push(b2);
    const rb2 = new Recorder();
    b2.setHandler(rb2);
    let seq = 100;
    await waitFor(() => {
      a.send(b2.localId, testMessage(seq++));
      return rb2.messages.length >= 3;
    }, 'three messages at the restarted b');
    const seqs = rb2.seqs();
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y));
    assert.equal(new Set(seqs).size, seqs.length, 'no duplicates');
  });

  test('an idle link closes with a goodbye, unreported, and reopens on the next send', async () => {
    const { a, b, rb } = await pair({ idleCloseMs: 30 });
    await stillServes(a, b, rb, 1);
    await waitFor(() => a.metrics().idleCloses === 1, 'the idle close');
    await waitFor(() => b.metrics().inboundConnections === 0, 'b sees the connection end');
    assert.deepEqual(rb.resets, []);
    await stillServes(a, b, rb, 2);
    assert.equal(a.metrics().connectsSucceeded, 2);
  });

  test('a changed address closes the old link; the next send goes to the new address', async () => {
    const { a, b, rb } = await pair();
    await stillServes(a, b, rb, 1);
    const b2 = await TcpTransport.listen(tcpOptions('b', 3));
    open.push(b2);
    const rb2 = new Recorder();
    b2.setHandler(rb2);
    a.setPeerAddress(b.localId, b2.address);
    a.send(b.localId, testMessage(2));
    await waitFor(() => rb2.messages.length === 1, 'the message at the new address');
    a.setPeerAddress(b.localId, undefined);
    a.send(b.localId, testMessage(3));
    assert.equal(a.metrics().droppedUnknownPeer, 1);
    assert.deepEqual(rb.seqs(), [1]);
    assert.deepEqual(rb.resets, [], 'a deliberate close is not a reset');
  });
});

describe('adapters: tcp transport: backpressure', () => {
  test('a peer that stops reading fills a bounded queue; drops counted; order holds', async () => {
    const config = { queueBytesMax: 1 << 20, queueMessagesMax: 1000, frameBytesMax: 128 * 1024 };
    const { port, received, resume } = await stalledPeer();
    const a = await TcpTransport.listen(tcpOptions('a', 1, config));
    open.push(a);
    a.setHandler(new Recorder());
    a.setPeerAddress(nodeId('b'), { host: '127.0.0.1', port });
    a.send(nodeId('b'), testMessage(0, 10));
    await waitFor(() => a.metrics().connectsSucceeded === 1, 'the link open');
    const sent = 400;
    let maxQueued = 0;
    // Batches of 10 (600 KB) fit the 1 MiB queue: only a queue that stops moving because the
    // socket refuses more (write() returned false) can fill up and drop.
    for (let seq = 1; seq < sent; seq++) {
      a.send(nodeId('b'), testMessage(seq, 60_000));
      if (seq % 10 === 9) {
        await new Promise((resolve) => setImmediate(resolve));
        maxQueued = Math.max(maxQueued, a.metrics().queuedBytes);
      }
    }
    const m = a.metrics();
    assert.ok(m.droppedQueueFull > 0, 'some messages dropped at the full queue');
    assert.ok(maxQueued > 0 && maxQueued <= config.queueBytesMax, `queued ${maxQueued}`);
    resume();
    await waitFor(() => received().length === sent - a.metrics().droppedQueueFull, 'the rest');
    const seqs = received();
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), 'in order, gaps only');
  });
});

describe('adapters: tcp transport: config and helpers', () => {
  test('the defaults are valid, and every broken rule is listed at once', () => {
    assert.deepEqual(validateTcpTransportConfig(TCP_TRANSPORT_DEFAULTS), []);
    const problems = validateTcpTransportConfig({
      ...TCP_TRANSPORT_DEFAULTS, clusterName: '', handshakeTimeoutMs: 0, reconnectDelayMsMin: 500,
      reconnectDelayMsMax: 100, frameBytesMax: 8192, queueBytesMax: 1000,
    });
    assert.deepEqual(problems.map((p) => p.field).sort(), [
      'clusterName', 'handshakeTimeoutMs', 'queueBytesMax,frameBytesMax',
      'reconnectDelayMsMin,reconnectDelayMsMax',
    ]);
    const small = validateTcpTransportConfig({ ...TCP_TRANSPORT_DEFAULTS, frameBytesMax: 10 });
    assert.equal(small[0]?.field, 'frameBytesMax');
  });

  test('listen rejects a bad config with CONCLAVE_CONFIG_INVALID, a taken port with UNAVAILABLE',
    async () => {
      await assert.rejects(TcpTransport.listen(tcpOptions('a', 1, { queueMessagesMax: 0 })),
        { code: 'CONCLAVE_CONFIG_INVALID' });
      const a = await TcpTransport.listen(tcpOptions('a', 1));
      open.push(a);
      const taken = { ...tcpOptions('b', 2), listen: { port: a.address.port } };
      await assert.rejects(TcpTransport.listen(taken),
        (error: { code: string; message: string }) =>
          error.code === 'CONCLAVE_UNAVAILABLE' && /EADDRINUSE/.test(error.message));
    });

  test('reconnect delays double from the minimum to the cap, jittered in [d/2, d)', () => {
    const random = new Prng(5);
    for (let attempt = 0; attempt < 12; attempt++) {
      const d = Math.min(1000, 10 * 2 ** attempt);
      for (let i = 0; i < 50; i++) {
        const delay = reconnectDelayMs(attempt, 10, 1000, random);
        assert.ok(delay >= d / 2 && delay < d,
          `attempt ${attempt}: ${delay} not in [${d / 2}, ${d})`);
      }
    }
  });

  test('peer addresses parse and format both ways, and bad ones are errors', () => {
    assert.deepEqual(parsePeerAddress('10.0.0.1:7000'), { host: '10.0.0.1', port: 7000 });
    assert.deepEqual(parsePeerAddress('[::1]:7000'), { host: '::1', port: 7000 });
    assert.deepEqual(parsePeerAddress('node-1.example:80'), { host: 'node-1.example', port: 80 });
    assert.equal(formatPeerAddress({ host: '::1', port: 7000 }), '[::1]:7000');
    for (const bad of ['', 'host', 'host:0', 'host:70000', '::1:7000', '[zz]:1', 'a b:1']) {
      assert.ok('error' in parsePeerAddress(bad), bad);
    }
  });
});

/** A peer that welcomes, then reads nothing until `resume()`; records the seqs it decodes. */
async function stalledPeer(): Promise<{
  port: number; received: () => number[]; resume: () => void;
}> {
  const seqs: number[] = [];
  let socket: net.Socket | undefined;
  const server = net.createServer((s) => {
    socket = s;
    sockets.push(s);
    const decoder = new FrameDecoder(1 << 20);
    let greeted = false;
    s.on('data', (chunk: Buffer) => {
      for (const payload of decoder.push(chunk).payloads) {
        if (!greeted) {
          greeted = true;
          s.write(frame({ kind: 'conclave-welcome', from: 'b' }));
          s.pause();
          continue;
        }
        const decoded = codec.decodePayload(payload);
        if (decoded.ok) seqs.push((decoded.value as TestMessage).seq);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({ close: () => server.close() });
  return {
    port: (server.address() as net.AddressInfo).port,
    received: () => seqs,
    resume: () => socket?.resume(),
  };
}
