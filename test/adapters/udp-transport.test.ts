/**
 * adapters: udp transport. Goal: datagrams carry valid messages with their sender's id, and
 * every bad datagram (garbage, oversized, another cluster or version, invalid shape) is dropped
 * and counted while the socket keeps serving.
 * Method: a live UdpTransport on 127.0.0.1 and a raw dgram socket sending crafted datagrams;
 * waits are conditions with deadlines, read from metrics and the handler.
 */
import assert from 'node:assert/strict';
import * as dgram from 'node:dgram';
import { afterEach, describe, test } from 'node:test';
import { MessageCodec } from '../../src/adapters/frame-codec.js';
import {
  UDP_TRANSPORT_DEFAULTS, UdpTransport, validateUdpTransportConfig,
} from '../../src/adapters/udp-transport.js';
import { nodeId } from '../../src/core/ids.js';
import {
  Recorder, testMessage, validateTestMessage, type TestMessage,
} from '../compliance/transport.suite.js';
import { waitFor } from './real-net-helpers.js';

const codec = new MessageCodec();
const open: { close(): void }[] = [];
afterEach(() => {
  for (const t of open.splice(0)) t.close();
});

async function bound(
  id: string, config = {},
): Promise<{ t: UdpTransport<TestMessage>; r: Recorder }> {
  const t = await UdpTransport.bind({ localId: nodeId(id), validate: validateTestMessage, config });
  open.push(t);
  const r = new Recorder();
  t.setHandler(r);
  return { t, r };
}

async function rawSender(): Promise<(bytes: Uint8Array, port: number) => void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  open.push({ close: () => socket.close() });
  return (bytes, port) => socket.send(bytes, port, '127.0.0.1');
}

function envelope(value: unknown): Uint8Array {
  const encoded = codec.encodePayload(value, 1 << 16);
  assert.ok(encoded.ok);
  return Buffer.from(encoded.bytes);
}

describe('adapters: udp transport', () => {
  test('a datagram arrives with its sender id; unknown peer and oversize are drops', async () => {
    const { t: a } = await bound('a');
    const { t: b, r: rb } = await bound('b');
    a.setPeerAddress(b.localId, b.address);
    a.sendDatagram(b.localId, testMessage(1, 100));
    await waitFor(() => rb.messages.length === 1, 'the datagram at b');
    assert.equal(rb.messages[0]?.from, 'a');
    assert.doesNotThrow(() => a.sendDatagram(nodeId('nobody'), testMessage(2)));
    assert.doesNotThrow(() => a.sendDatagram(b.localId, testMessage(3, 9000)));
    assert.equal(a.metrics().droppedUnknownPeer, 1);
    assert.equal(a.metrics().droppedTooLarge, 1);
  });

  test('bad datagrams are dropped and counted, and the socket keeps serving', async () => {
    const { t: b, r: rb } = await bound('b');
    const send = await rawSender();
    const port = b.address.port;
    const valid = testMessage(7);
    const cases: [Uint8Array, keyof ReturnType<typeof b.metrics>][] = [
      [Uint8Array.from([0xc1, 0xff, 0x00, 0x12]), 'decodeErrors'],
      [envelope({ not: 'an envelope' }), 'decodeErrors'],
      [new Uint8Array(9000), 'receivedTooLarge'],
      [envelope([1, 'other-cluster', 'x', valid]), 'droppedOtherCluster'],
      [envelope([99, 'conclave', 'x', valid]), 'droppedOtherVersion'],
      [envelope([1, 'conclave', 'x', { kind: 'bogus' }]), 'invalidMessages'],
    ];
    for (const [bytes, counter] of cases) {
      const before = b.metrics()[counter];
      send(bytes, port);
      await waitFor(() => b.metrics()[counter] === before + 1, `${counter} counted`);
    }
    assert.equal(rb.messages.length, 0);
    send(envelope([1, 'conclave', 'x', valid]), port);
    await waitFor(() => rb.messages.length === 1, 'a valid datagram after the bad ones');
    assert.equal(rb.messages[0]?.from, 'x');
    assert.equal(rb.messages[0]?.message.seq, 7);
  });

  test('binding a taken port rejects (UNAVAILABLE); a bad config lists its problems', async () => {
    const { t: a } = await bound('a');
    await assert.rejects(
      UdpTransport.bind({
        localId: nodeId('b'), validate: validateTestMessage, listen: { port: a.address.port },
      }),
      { code: 'CONCLAVE_UNAVAILABLE' });
    assert.deepEqual(validateUdpTransportConfig(UDP_TRANSPORT_DEFAULTS), []);
    const problems = validateUdpTransportConfig({ clusterName: '', datagramBytesMax: 70_000 });
    assert.deepEqual(problems.map((p) => p.field), ['clusterName', 'datagramBytesMax']);
  });
});
