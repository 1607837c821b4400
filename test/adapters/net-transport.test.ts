/**
 * adapters: net transport. Goal: the gossip transport sends streams over TCP and datagrams
 * over UDP on one port number, into one handler, with one address book.
 * Method: two live NetTransports on 127.0.0.1; outcomes read from the handler and the
 * per-channel metrics; waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { GossipKeyring, generateGossipKey } from '../../src/adapters/gossip-keyring.js';
import { NetTransport } from '../../src/adapters/net-transport.js';
import { nodeId } from '../../src/core/ids.js';
import { Recorder, testMessage, type TestMessage } from '../compliance/transport.suite.js';
import { netPair, tcpOptions, waitFor } from './real-net-helpers.js';

const open: { close(): void }[] = [];
afterEach(() => {
  for (const t of open.splice(0)) t.close();
});

describe('adapters: net transport', () => {
  test('send goes over TCP and sendDatagram over UDP, on the same port, into one handler',
    async () => {
      const { a, b } = await netPair();
      open.push(a, b);
      assert.equal(a.tcp.address.port, a.udp.address.port);
      const rb = new Recorder();
      b.setHandler(rb);
      a.send(b.localId, testMessage(1));
      a.sendDatagram(b.localId, testMessage(2));
      await waitFor(() => rb.messages.length === 2, 'both messages at b');
      assert.deepEqual(rb.seqs().sort(), [1, 2]);
      const m = a.metrics();
      assert.equal(m.tcp.messagesSent, 1);
      assert.equal(m.udp.datagramsSent, 1);
    });

  test('one address book feeds both channels; removing a peer stops both', async () => {
    const { a, b } = await netPair();
    open.push(a, b);
    b.setHandler(new Recorder());
    assert.deepEqual(a.peerAddress(b.localId), b.address);
    a.setPeerAddress(b.localId, undefined);
    a.send(b.localId, testMessage(1));
    a.sendDatagram(b.localId, testMessage(2));
    const m = a.metrics();
    assert.equal(m.tcp.droppedUnknownPeer, 1);
    assert.equal(m.udp.droppedUnknownPeer, 1);
    assert.equal(a.peerAddress(nodeId('b')), undefined);
  });
});

describe('adapters: net transport with a gossip keyring', () => {
  const keyA = Buffer.from(generateGossipKey(), 'base64');

  async function sealedPair(ringA: GossipKeyring | undefined, ringB: GossipKeyring | undefined):
    Promise<{ a: NetTransport<TestMessage>; b: NetTransport<TestMessage> }> {
    const a = await NetTransport.listen({ ...tcpOptions('a', 1),
      ...(ringA === undefined ? {} : { keyring: ringA }) });
    const b = await NetTransport.listen({ ...tcpOptions('b', 2),
      ...(ringB === undefined ? {} : { keyring: ringB }) });
    a.setPeerAddress(b.localId, b.address);
    b.setPeerAddress(a.localId, a.address);
    open.push(a, b);
    return { a, b };
  }

  test('both channels are sealed: the same key delivers, and the datagram is not plain text',
    async () => {
      const ring = new GossipKeyring([keyA]);
      const { a, b } = await sealedPair(ring, ring);
      const rb = new Recorder();
      b.setHandler(rb);
      a.send(b.localId, testMessage(1));
      a.sendDatagram(b.localId, testMessage(2));
      await waitFor(() => rb.messages.length === 2, 'both sealed messages at b');
      assert.deepEqual(rb.seqs().sort(), [1, 2]);
      assert.ok(a.metrics().udp.bytesSent > 33);
    });

  test('another key, or none, is dropped and counted by reason on both channels', async () => {
    const ring = new GossipKeyring([keyA]);
    const other = new GossipKeyring([Buffer.from(generateGossipKey(), 'base64')]);
    const { a, b } = await sealedPair(other, ring);
    const rb = new Recorder();
    b.setHandler(rb);
    a.send(b.localId, testMessage(1));
    a.sendDatagram(b.localId, testMessage(2));
    await waitFor(() => b.metrics().udp.droppedDecryptUnknownKey === 1
      && b.metrics().stream.droppedDecryptUnknownKey === 1, 'unknown-key drops at b');
    const { c, d } = await (async () => {
      const pair = await sealedPair(undefined, ring);
      return { c: pair.a, d: pair.b };
    })();
    const rd = new Recorder();
    d.setHandler(rd);
    c.send(d.localId, testMessage(3));
    c.sendDatagram(d.localId, testMessage(4));
    await waitFor(() => d.metrics().udp.droppedDecryptUnencrypted === 1
      && d.metrics().stream.droppedDecryptUnencrypted === 1, 'unencrypted drops at d');
    assert.equal(rb.messages.length + rd.messages.length, 0);
  });
});
