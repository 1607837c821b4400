/**
 * membership: address sync — the transport's address book follows gossip: a joiner's address
 * is known before the admitter answers, unknown members are filled from updates before the
 * member steps, and after it the member's own record decides (a stale update never moves a
 * known address; a re-admission at a new address does).
 * Method: a fake transport with a map for a book; the member is a lookup table the test sets.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PeerAddress } from '../../src/adapters/peer-address.js';
import { incarnation, nodeId, type NodeId } from '../../src/core/ids.js';
import { memberAge, type GossipUpdate, type SwimMessage } from '../../src/core/swim/index.js';
import type { TransportHandler } from '../../src/ports/transport.js';
import {
  AddressSyncTransport, type AddressBookTransport,
} from '../../src/membership/address-sync.js';

class FakeTransport implements AddressBookTransport {
  readonly localId = nodeId('self');
  readonly book = new Map<NodeId, string>();
  /** Every write to the book, in order, as `id=host:port` (or `id=-` for a removal). */
  readonly writes: string[] = [];
  handler: TransportHandler<SwimMessage> | undefined;
  peerAddress(id: NodeId): PeerAddress | undefined {
    const text = this.book.get(id);
    if (text === undefined) return undefined;
    const [host, port] = text.split(':');
    return { host: host!, port: Number(port) };
  }
  setPeerAddress(id: NodeId, address: PeerAddress | undefined): void {
    this.writes.push(`${id}=${address === undefined ? '-' : `${address.host}:${address.port}`}`);
    if (address === undefined) this.book.delete(id);
    else this.book.set(id, `${address.host}:${address.port}`);
  }
  send(): void {}
  sendDatagram(): void {}
  setHandler(handler: TransportHandler<SwimMessage>): void {
    this.handler = handler;
  }
  close(): void {}
}

function alive(member: string, address: string, inc = 1): GossipUpdate {
  return {
    member: nodeId(member), state: 'alive', incarnation: incarnation(inc), age: memberAge(1),
    address,
  };
}

interface Setup {
  readonly fake: FakeTransport;
  readonly seen: string[];
  readonly deliver: (from: string, message: SwimMessage) => void;
}

function setup(records: Map<string, string>): Setup {
  const fake = new FakeTransport();
  const sync = new AddressSyncTransport(fake);
  const seen: string[] = [];
  sync.attach((id) => records.get(id));
  sync.setHandler({
    onMessage: (from, message) => {
      // What the member could reply to while it steps.
      seen.push(`${message.kind}:${fake.book.get(from) ?? 'unknown'}`);
    },
    onPeerReset: (peer) => seen.push(`reset:${peer}`),
  });
  return { fake, seen, deliver: (from, m) => fake.handler!.onMessage(nodeId(from), m) };
}

describe('membership: address sync', () => {
  test('a joiner\'s address is in the book before the admitter steps (its answer goes there)',
    () => {
      const { fake, seen, deliver } = setup(new Map());
      deliver('n2', { kind: 'join', address: '127.0.0.1:7002' });
      assert.deepEqual(seen, ['join:127.0.0.1:7002']);
      assert.equal(fake.book.get(nodeId('n2')), '127.0.0.1:7002');
    });

  test('unknown members are filled from updates before the step; known ones are not moved', () => {
    const records = new Map<string, string>();
    const { fake, deliver } = setup(records);
    fake.book.set(nodeId('n3'), '127.0.0.1:7003');
    records.set('n3', '127.0.0.1:7003');
    // A stale update names n3 at an old address: the member's record keeps the newer one.
    deliver('n2', {
      kind: 'gossip', updates: [alive('n4', '127.0.0.1:7004'), alive('n3', '127.0.0.1:6003')],
    });
    assert.deepEqual(fake.writes, ['n4=127.0.0.1:7004']);
    assert.equal(fake.book.get(nodeId('n3')), '127.0.0.1:7003');
  });

  test('after the step the member\'s record decides: a re-admission elsewhere moves it', () => {
    const records = new Map<string, string>([['n3', '127.0.0.1:7003']]);
    const { fake, deliver } = setup(records);
    deliver('n2', { kind: 'gossip', updates: [alive('n3', '127.0.0.1:7003')] });
    records.set('n3', '127.0.0.1:8003'); // the member accepted n3's restart elsewhere
    deliver('n2', { kind: 'gossip', updates: [alive('n3', '127.0.0.1:8003', 5)] });
    assert.deepEqual(fake.writes, ['n3=127.0.0.1:7003', 'n3=127.0.0.1:8003']);
  });

  test('own id, seed ids and bad addresses never enter the book; resets pass through', () => {
    const records = new Map<string, string>([['n5', 'not an address']]);
    const { fake, seen, deliver } = setup(records);
    deliver('n2', {
      kind: 'ack', seq: 1,
      updates: [alive('self', '127.0.0.1:9999'), alive('seed:127.0.0.1:7001', '127.0.0.1:7001'),
        alive('n5', 'not an address')],
    });
    assert.deepEqual(fake.writes, []);
    fake.handler!.onPeerReset!(nodeId('n2'));
    assert.deepEqual(seen, ['ack:unknown', 'reset:n2']);
  });
});
