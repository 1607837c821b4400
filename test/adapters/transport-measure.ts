/**
 * Ad hoc measurements of the peer transport (not a test, nothing asserted; numbers vary with
 * the machine): loopback round-trip latency of small frames, one-way frame throughput, and
 * the cost of msgpackr against JSON for a typical Raft append (64 entries of 256 bytes).
 * Run: node --import tsx test/adapters/transport-measure.ts
 */
import { Packr } from 'msgpackr';
import { TcpTransport } from '../../src/adapters/tcp-transport.js';
import { RAFT_MESSAGE_VALIDATOR } from '../../src/adapters/message-validators.js';
import { nodeId, logIndex, term } from '../../src/core/ids.js';
import type { AppendRequest } from '../../src/core/raft/messages.js';
import { Prng } from '../../src/sim/prng.js';
import {
  testMessage, validateTestMessage, type TestMessage,
} from '../compliance/transport.suite.js';
import { waitFor } from './real-net-helpers.js';

const BIG_QUEUE = { queueMessagesMax: 2_000_000, queueBytesMax: 1 << 30, idleCloseMs: 0 };

async function pair(): Promise<[TcpTransport<TestMessage>, TcpTransport<TestMessage>]> {
  const make = (id: string, seed: number): Promise<TcpTransport<TestMessage>> =>
    TcpTransport.listen({
      localId: nodeId(id), validate: validateTestMessage, random: new Prng(seed), config: BIG_QUEUE,
    });
  const a = await make('a', 1);
  const b = await make('b', 2);
  a.setPeerAddress(b.localId, b.address);
  b.setPeerAddress(a.localId, a.address);
  return [a, b];
}

async function roundTrips(count: number): Promise<void> {
  const [a, b] = await pair();
  b.setHandler({ onMessage: (from, m) => b.send(from, m) });
  const samplesUs: number[] = [];
  let pending: (() => void) | undefined;
  a.setHandler({ onMessage: () => pending?.() });
  const ping = testMessage(1, 16);
  for (let i = 0; i < count + 200; i++) {
    const start = process.hrtime.bigint();
    await new Promise<void>((resolve) => {
      pending = resolve;
      a.send(b.localId, ping);
    });
    if (i >= 200) samplesUs.push(Number(process.hrtime.bigint() - start) / 1000); // 200 warm-up
  }
  samplesUs.sort((x, y) => x - y);
  const at = (q: number): string => samplesUs[Math.floor(q * (samplesUs.length - 1))]!.toFixed(0);
  console.log(`round trip, ${count} x 16-byte body: p50 ${at(0.5)} us, p99 ${at(0.99)} us`);
  a.close();
  b.close();
}

async function throughput(count: number, bodyBytes: number): Promise<void> {
  const [a, b] = await pair();
  let received = 0;
  b.setHandler({ onMessage: () => received++ });
  a.send(b.localId, testMessage(0, 1));
  await waitFor(() => received === 1, 'warm-up', 10_000);
  const message = testMessage(1, bodyBytes);
  const start = performance.now();
  for (let sent = 0; sent < count; sent += 1000) {
    for (let i = 0; i < 1000; i++) a.send(b.localId, message);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await waitFor(() => received === count + 1, 'all frames', 120_000);
  const seconds = (performance.now() - start) / 1000;
  const frameBytes = a.metrics().bytesSent / (count + 1);
  console.log(`one way, ${count} frames of ${frameBytes.toFixed(0)} B: ` +
    `${(count / seconds).toFixed(0)} frames/s, ` +
    `${(count * frameBytes / seconds / 1e6).toFixed(1)} MB/s`);
  a.close();
  b.close();
}

function append(): AppendRequest {
  const entries = Array.from({ length: 64 }, (_, i) => ({
    index: logIndex(1001 + i), term: term(7), kind: 'normal' as const,
    data: Uint8Array.from({ length: 256 }, (_, j) => (i * 31 + j) & 0xff),
  }));
  return {
    kind: 'append', term: term(7), prevLogIndex: logIndex(1000), prevLogTerm: term(7),
    entries, commitIndex: logIndex(998),
  };
}

/** JSON cannot carry bytes: entries' data go as base64 (the usual choice), back to bytes. */
function toJson(m: AppendRequest): string {
  return JSON.stringify({
    ...m, entries: m.entries.map((e) => ({ ...e, data: Buffer.from(e.data).toString('base64') })),
  });
}

function fromJson(text: string): unknown {
  const v = JSON.parse(text) as { entries: { data: string }[] };
  return { ...v, entries: v.entries.map((e) => ({ ...e, data: Buffer.from(e.data, 'base64') })) };
}

function codecCost(iterations: number): void {
  const message = append();
  const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
  const time = (label: string, run: () => unknown): number => {
    for (let i = 0; i < 500; i++) run();
    const start = performance.now();
    for (let i = 0; i < iterations; i++) run();
    const us = ((performance.now() - start) * 1000) / iterations;
    console.log(`  ${label}: ${us.toFixed(1)} us`);
    return us;
  };
  const packed = packr.pack(message);
  const json = toJson(message);
  console.log(`raft append, 64 entries x 256 B: msgpack ${packed.length} B, ` +
    `JSON+base64 ${Buffer.byteLength(json)} B`);
  const m1 = time('msgpackr encode', () => packr.pack(message));
  const m2 = time('msgpackr decode', () => packr.unpack(packed));
  time('msgpackr decode + validateRaftMessage', () => RAFT_MESSAGE_VALIDATOR(packr.unpack(packed)));
  const j1 = time('JSON encode (base64 data)', () => Buffer.from(toJson(message)));
  const j2 = time('JSON decode (base64 data)', () => fromJson(json));
  console.log(`  encode+decode: msgpackr ${(m1 + m2).toFixed(1)} us, ` +
    `JSON ${(j1 + j2).toFixed(1)} us`);
}

codecCost(20_000);
await roundTrips(5000);
await throughput(200_000, 32);
await throughput(20_000, 4096);
