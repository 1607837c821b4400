/**
 * sim: network — latency, loss, duplication, order, partitions and resets.
 * Method: two or three endpoints on one scheduler; count and order what arrives.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import type { Transport } from '../../src/ports/transport.js';
import { Prng } from '../../src/sim/prng.js';
import { Scheduler } from '../../src/sim/scheduler.js';
import {
  NETWORK_FAULTS_NONE, SimNetwork, STREAM_RETRANSMIT_MS, type NetworkFaults,
} from '../../src/sim/sim-network.js';
import { TraceHash } from '../../src/sim/trace-hash.js';

const A = nodeId('a');
const B = nodeId('b');
const C = nodeId('c');

function setup(faults: Partial<NetworkFaults> = {}, seed = 1,
  streamLoss: 'drop' | 'retransmit' = 'drop') {
  const scheduler = new Scheduler();
  const trace = new TraceHash();
  const network = new SimNetwork<number>(scheduler, new Prng(seed), trace, {
    faults: { ...NETWORK_FAULTS_NONE, ...faults },
    describe: (m) => String(m),
    sizeBytes: () => 8,
    streamLoss,
  });
  const received = new Map<NodeId, number[]>();
  const resets: string[] = [];
  const transports = new Map<NodeId, Transport<number>>();
  for (const id of [A, B, C]) {
    const transport = network.attach(id);
    received.set(id, []);
    transport.setHandler({
      onMessage: (_from, m) => received.get(id)!.push(m),
      onPeerReset: (peer) => resets.push(`${id}<-${peer}`),
    });
    transports.set(id, transport);
  }
  return { scheduler, network, received, resets, transports, trace };
}

describe('sim: network', () => {
  test('stream messages arrive once each and in order without faults', () => {
    const { scheduler, received, transports } = setup({ latencyMsMeanExtra: 5, latencyMsMax: 50 });
    for (let i = 0; i < 100; i++) transports.get(A)!.send(B, i);
    scheduler.runUntil(1000);
    assert.deepEqual(received.get(B), Array.from({ length: 100 }, (_, i) => i));
  });

  test('datagrams with jitter may reorder; reorderStreams lets streams reorder too', () => {
    const { scheduler, received, transports } = setup({ latencyMsMeanExtra: 5, latencyMsMax: 50 });
    for (let i = 0; i < 200; i++) transports.get(A)!.sendDatagram(B, i);
    scheduler.runUntil(1000);
    const got = received.get(B)!;
    assert.equal(got.length, 200);
    assert.notDeepEqual(got, [...got].sort((x, y) => x - y));
  });

  test('loss and duplication happen at about their configured rates', () => {
    const { scheduler, received, transports, network } = setup({ lossRate: 0.2, duplicateRate: 0.1 });
    const n = 20_000;
    for (let i = 0; i < n; i++) transports.get(A)!.sendDatagram(B, i);
    scheduler.runUntil(10_000);
    const got = received.get(B)!.length;
    const expected = n * 0.8 * 1.1;
    assert.ok(Math.abs(got - expected) < n * 0.02, `got ${got}, expected about ${expected}`);
    assert.equal(network.stats.sent, n);
  });

  test('with streamLoss retransmit, loss delays stream messages by retransmits, in order', () => {
    const { scheduler, received, transports } = setup({ lossRate: 0.3 }, 1, 'retransmit');
    const n = 2_000;
    for (let i = 0; i < n; i++) transports.get(A)!.send(B, i);
    scheduler.runUntil(STREAM_RETRANSMIT_MS - 1);
    assert.ok(received.get(B)!.length < n * 0.8, 'the lost ones wait for their retransmit');
    scheduler.runUntil(10_000);
    // 0.3^8 of them may still be lost; order holds for what arrives.
    assert.ok(received.get(B)!.length >= n - 2, `got ${received.get(B)!.length} of ${n}`);
    assert.deepEqual(received.get(B), [...received.get(B)!].sort((a, b) => a - b));
  });

  test('a partition blocks both directions until heal; a one-way block only one', () => {
    const { scheduler, network, received, transports } = setup();
    network.partition([[A], [B, C]]);
    transports.get(A)!.send(B, 1);
    transports.get(B)!.send(A, 2);
    transports.get(B)!.send(C, 3);
    scheduler.runUntil(10);
    assert.deepEqual([received.get(A), received.get(B), received.get(C)], [[], [], [3]]);
    network.heal();
    network.blockLink(A, B);
    transports.get(A)!.send(B, 4);
    transports.get(B)!.send(A, 5);
    scheduler.runUntil(20);
    assert.deepEqual([received.get(A), received.get(B)], [[5], []]);
  });

  test('a crashed node receives nothing and its peers see a reset', () => {
    const { scheduler, network, received, resets, transports } = setup();
    transports.get(A)!.send(B, 1);
    network.setUp(B, false);
    scheduler.runUntil(10);
    assert.deepEqual(received.get(B), []);
    assert.deepEqual(resets.sort(), ['a<-b', 'c<-b']);
  });

  test('stream messages of a crashed node already on the wire arrive before its reset', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { scheduler, network, transports } = setup({ latencyMsMeanExtra: 5, latencyMsMax: 50 },
        seed);
      const seen: string[] = [];
      transports.get(A)!.setHandler({
        onMessage: (_from, m) => seen.push(String(m)),
        onPeerReset: (peer) => seen.push(`reset ${peer}`),
      });
      for (let i = 0; i < 5; i++) transports.get(B)!.send(A, i);
      network.setUp(B, false);
      scheduler.runUntil(1000);
      assert.deepEqual(seen, ['0', '1', '2', '3', '4', 'reset b'], `seed ${seed}`);
    }
  });

  test('the trace hash depends on what was delivered, and repeats for the same seed', () => {
    const run = (seed: number): string => {
      const { scheduler, transports, trace } = setup({ lossRate: 0.3, latencyMsMeanExtra: 3 }, seed);
      for (let i = 0; i < 50; i++) transports.get(A)!.sendDatagram(B, i);
      scheduler.runUntil(100);
      return trace.digest();
    };
    assert.equal(run(5), run(5));
    assert.notEqual(run(5), run(6));
  });

  test('invalid faults are reported all at once', () => {
    assert.throws(
      () => setup({ lossRate: 1.5, latencyMsMin: 5, latencyMsMax: 1 }),
      /lossRate 1.5 not in \[0, 1\); latencyMsMax 1 < latencyMsMin 5/,
    );
  });
});
