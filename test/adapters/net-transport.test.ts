/**
 * adapters: net transport. Goal: the gossip transport sends streams over TCP and datagrams
 * over UDP on one port number, into one handler, with one address book.
 * Method: two live NetTransports on 127.0.0.1; outcomes read from the handler and the
 * per-channel metrics; waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { nodeId } from '../../src/core/ids.js';
import { Recorder, testMessage } from '../compliance/transport.suite.js';
import { netPair, waitFor } from './real-net-helpers.js';

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
