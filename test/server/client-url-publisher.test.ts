/**
 * Members publish their client URL through the log: a follower asks its leader over the peer
 * transport, the leader proposes a member-attributes change for the sender as authenticated,
 * at most one at a time and one per interval per member; the message is validated as hostile.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import {
  changedMembership, type Membership, type MembershipChange,
} from '../../src/core/raft/index.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import type { MembershipOutcome } from '../../src/runtime/raft/raft-runtime.js';
import {
  ClientUrlPublisher, PEER_MESSAGE_VALIDATOR, publishableClientUrl, type ClientUrlMessage,
} from '../../src/server/client-url-publisher.js';

class FakeCore {
  role = 'follower';
  leaderId: NodeId | undefined = nodeId('n1');
  membership: Membership = { voters: [nodeId('n1'), nodeId('n2')], learners: [nodeId('n4')] };
  readonly proposed: MembershipChange[] = [];
  private pending: ((outcome: MembershipOutcome) => void)[] = [];

  status() {
    return { role: this.role, leaderId: this.leaderId, membership: this.membership };
  }

  changeMembership(change: MembershipChange, done: (outcome: MembershipOutcome) => void): void {
    this.proposed.push(change);
    this.pending.push((outcome) => {
      if (outcome.kind === 'applied') {
        const next = changedMembership(this.membership, change);
        assert.ok(typeof next !== 'string', String(next));
        this.membership = next;
      }
      done(outcome);
    });
  }

  decide(kind: 'applied' | 'failed'): void {
    const done = this.pending.shift();
    assert.ok(done !== undefined, 'nothing pending');
    done(kind === 'applied' ? { kind, index: 9, term: 2, result: undefined } as never
      : { kind, reason: 'change-pending' } as never);
  }
}

function publisher(self: string, core: FakeCore, url: string | undefined) {
  const sent: [NodeId, ClientUrlMessage][] = [];
  let nowMs = 0;
  const p = new ClientUrlPublisher({ selfId: nodeId(self), clientUrl: url, core,
    send: (to, message) => sent.push([to, message]),
    clock: { monotonicMs: () => nowMs, wallMs: () => nowMs }, intervalMs: 100,
    logger: SILENT_LOGGER });
  return { p, sent, advance: (ms: number) => { nowMs += ms; } };
}

describe('server: client URL publishing', () => {
  test('a learner asks its leader until the log records its URL, then stops', () => {
    const core = new FakeCore();
    const { p, sent } = publisher('n4', core, 'http://h4:2379');
    p.tick();
    assert.deepEqual(sent, [['n1', { kind: 'client-url', clientUrl: 'http://h4:2379' }]]);
    p.tick();
    assert.equal(sent.length, 2, 'asked again: the first may have been lost');
    core.membership = { ...core.membership,
      clientUrls: [{ id: nodeId('n4'), url: 'http://h4:2379' }] };
    p.tick();
    assert.equal(sent.length, 2);
    assert.deepEqual(core.proposed, [], 'a follower proposes nothing itself');
  });

  test('the leader proposes for the sender, one at a time and once per interval', () => {
    const core = new FakeCore();
    core.role = 'leader';
    const { p, advance } = publisher('n1', core, 'http://h1:2379');
    p.onClientUrl(nodeId('n4'), 'http://h4:2379');
    p.onClientUrl(nodeId('n4'), 'http://h4:2379');
    assert.deepEqual(core.proposed, [{ kind: 'member-attributes', node: 'n4',
      clientUrl: 'http://h4:2379' }]);
    core.decide('failed');
    p.onClientUrl(nodeId('n4'), 'http://h4:2379');
    assert.equal(core.proposed.length, 1, 'not again within the interval');
    advance(100);
    p.onClientUrl(nodeId('n4'), 'http://h4:2379');
    assert.equal(core.proposed.length, 2);
    core.decide('applied');
    advance(100);
    p.onClientUrl(nodeId('n4'), 'http://h4:2379');
    assert.equal(core.proposed.length, 2, 'recorded already: nothing to propose');
    // Not a member, a hostile URL, or this member not leading: nothing proposed.
    advance(100);
    p.onClientUrl(nodeId('n9'), 'http://h9:2379');
    p.onClientUrl(nodeId('n2'), 'http://h2:2379/../x');
    core.role = 'follower';
    p.onClientUrl(nodeId('n2'), 'http://h2:2379');
    assert.equal(core.proposed.length, 2);
  });

  test('a leader publishes its own URL; a wildcard listener publishes nothing', () => {
    const core = new FakeCore();
    core.role = 'leader';
    const { p, sent } = publisher('n1', core, 'http://h1:2379');
    p.tick();
    assert.deepEqual(core.proposed, [{ kind: 'member-attributes', node: 'n1',
      clientUrl: 'http://h1:2379' }]);
    assert.deepEqual(sent, []);
    const other = new FakeCore();
    const wildcard = publisher('n4', other, publishableClientUrl('http', '0.0.0.0', '0.0.0.0:1'));
    wildcard.p.tick();
    assert.deepEqual([wildcard.sent, other.proposed], [[], []]);
    assert.equal(publishableClientUrl('https', '::', '[::]:1'), undefined);
    assert.equal(publishableClientUrl('https', '10.0.0.4', '10.0.0.4:1'), 'https://10.0.0.4:1');
  });

  test('the peer validator: client-url exactly, with a valid URL; Raft messages as before', () => {
    const ok = PEER_MESSAGE_VALIDATOR({ kind: 'client-url', clientUrl: 'http://h:1' });
    assert.deepEqual(ok, { ok: true, message: { kind: 'client-url', clientUrl: 'http://h:1' } });
    for (const bad of [{ kind: 'client-url' }, { kind: 'client-url', clientUrl: 'h:1' },
      { kind: 'client-url', clientUrl: 'http://h:1', extra: 1 },
      { kind: 'client-url', clientUrl: `http://${'h'.repeat(400)}:1` }]) {
      assert.equal(PEER_MESSAGE_VALIDATOR(bad).ok, false, JSON.stringify(bad).slice(0, 80));
    }
    assert.equal(PEER_MESSAGE_VALIDATOR({ kind: 'nonsense' }).ok, false);
    assert.equal(PEER_MESSAGE_VALIDATOR(null).ok, false);
  });
});
