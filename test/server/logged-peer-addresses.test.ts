/**
 * server: peer addresses learned from the log. Goal: the transport's book takes each address
 * the membership in force records (not this member's own), when it first appears or changes;
 * an address set by hand afterwards holds until the log records another one for that member;
 * a member the log records nothing for keeps its flag's address; the wrapper syncs before each
 * send. Method: a fake address book, memberships built by `changedMembership`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PeerAddress } from '../../src/adapters/peer-address.js';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import { changedMembership, type Membership, type RaftMessage } from '../../src/core/raft/index.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import type { Transport } from '../../src/ports/transport.js';
import {
  learningPeerAddresses, LoggedPeerAddresses,
} from '../../src/server/logged-peer-addresses.js';

const n = nodeId;

class Book {
  readonly entries = new Map<NodeId, PeerAddress>();
  sets = 0;
  peerAddress(id: NodeId): PeerAddress | undefined {
    return this.entries.get(id);
  }
  setPeerAddress(id: NodeId, address: PeerAddress): void {
    this.sets++;
    this.entries.set(id, address);
  }
  text(id: string): string | undefined {
    const a = this.entries.get(n(id));
    return a === undefined ? undefined : `${a.host}:${a.port}`;
  }
}

function changed(m: Membership, change: Parameters<typeof changedMembership>[1]): Membership {
  const next = changedMembership(m, change);
  assert.ok(typeof next !== 'string', String(next));
  return next;
}

describe('server: peer addresses from the log', () => {
  test('learned when recorded or changed; a hand-set one holds until the log changes it', () => {
    const book = new Book();
    book.entries.set(n('n2'), { host: '10.0.0.2', port: 2380 }); // from --cluster
    const addresses = new LoggedPeerAddresses(n('n1'), book, SILENT_LOGGER);
    const base: Membership = { voters: [n('n1'), n('n2')], learners: [] };
    addresses.sync(base);
    assert.deepEqual([book.sets, book.text('n2')], [0, '10.0.0.2:2380']);
    const withN3 = changed(base, { kind: 'add-learner', node: n('n3'), peerAddr: '10.0.0.3:2380' });
    addresses.sync(withN3);
    assert.equal(book.text('n3'), '10.0.0.3:2380');
    // An operator's override, then a change that records nothing new for n3: the override holds.
    book.entries.set(n('n3'), { host: '10.9.9.9', port: 1 });
    addresses.sync(changed(withN3, { kind: 'promote', node: n('n3') }));
    assert.equal(book.text('n3'), '10.9.9.9:1');
    // n3 removed and re-added elsewhere (its disk died): the log's new address wins.
    const gone = changed(changed(withN3, { kind: 'promote', node: n('n3') }),
      { kind: 'remove', node: n('n3') });
    addresses.sync(gone);
    addresses.sync(changed(gone, { kind: 'add-learner', node: n('n3'), peerAddr: 'h3:7000' }));
    assert.equal(book.text('n3'), 'h3:7000');
  });

  test('its own address is never put in the book; the wrapper syncs before it sends', () => {
    const book = new Book();
    const addresses = new LoggedPeerAddresses(n('n4'), book, SILENT_LOGGER);
    let membership: Membership | undefined;
    const sent: string[] = [];
    const inner: Transport<RaftMessage> = { localId: n('n4'),
      send: (to) => sent.push(`${to} knows ${book.text(to) ?? 'nothing'}`),
      sendDatagram: () => undefined, setHandler: () => undefined, close: () => undefined };
    const transport = learningPeerAddresses(inner, addresses, () => membership);
    transport.send(n('n5'), { kind: 'heartbeat-response', term: 1 } as never);
    const base: Membership = { voters: [n('n1')], learners: [] };
    membership = changed(changed(base, { kind: 'add-learner', node: n('n4'),
      peerAddr: '127.0.0.1:4' }), { kind: 'promote', node: n('n4') });
    membership = changed(membership, { kind: 'add-learner', node: n('n5'), peerAddr: '[::1]:5' });
    transport.send(n('n5'), { kind: 'heartbeat-response', term: 1 } as never);
    assert.deepEqual(sent, ['n5 knows nothing', 'n5 knows ::1:5']);
    assert.equal(book.text('n4'), undefined);
  });
});
