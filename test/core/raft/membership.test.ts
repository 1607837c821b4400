/**
 * Goal: membership change one server at a time (Raft thesis §4): learners replicate without
 * voting or counting, are promoted once caught up, voters are removed (the leader too: it steps
 * down once its removal commits and hands over); config entries hold from their append and stop
 * holding when cut off; a leader changes nothing before it has committed an entry of its term,
 * and one change at a time. The mutant configChangeBeforeTermCommit replays the single-server
 * change bug: two configurations with disjoint majorities both commit. Method: in-process
 * clusters of the test harness (links cut, messages delivered one by one), virtual time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import type { NodeId } from '../../../src/core/ids.js';
import {
  changedMembership, clientUrlOfMember, clientUrlProblem, decodeMembership, encodeMembership,
} from '../../../src/core/raft/index.js';
import type { Entry, MembershipChange, RaftMutants } from '../../../src/core/raft/index.js';
import { ConfigLog } from '../../../src/core/raft/membership.js';
import { Cluster } from './harness.js';

const n = nodeId;

/** A cluster of voters n1..n3 and learners given, led by n1, settled. */
function ledBy1(options: { ids?: string[]; voters?: string[]; mutants?: Partial<RaftMutants> } = {}) {
  const c = new Cluster({ seed: 5, ids: options.ids ?? ['n1', 'n2', 'n3', 'n4'],
    voters: options.voters ?? ['n1', 'n2', 'n3'], mutants: options.mutants ?? {} });
  c.fire('n1');
  c.deliverAll();
  assert.equal(c.leader(), 'n1');
  c.runFor(100);
  return c;
}

function change(c: Cluster, leader: string, ch: MembershipChange) {
  const result = c.node(leader).proposeMembershipChange(ch, c.nowMs);
  c.process(n(leader));
  return result;
}

const voters = (c: Cluster, id: string): readonly NodeId[] => c.node(id).status().membership.voters;

describe('raft: membership', () => {
  test('a learner replicates the log but neither votes nor counts towards commit', () => {
    const c = ledBy1();
    c.propose(n('n1'), 'x');
    c.deliverAll();
    c.runFor(100);
    assert.equal(c.node('n4').status().lastIndex, c.node('n1').status().lastIndex);
    c.cut(n('n1'), n('n2'));
    c.cut(n('n1'), n('n3'));
    const commit = c.node('n1').status().commitIndex;
    c.propose(n('n1'), 'y');
    c.deliverAll();
    assert.equal(c.node('n1').status().commitIndex, commit, 'a learner\'s ack commits nothing');
    assert.ok(!c.sent.some((s) => /->n4 (pre-)?vote /.test(s)), 'nobody asks a learner to vote');
  });

  test('a learner is promoted only once it holds every committed entry', () => {
    const c = ledBy1();
    c.cut(n('n1'), n('n4'));
    for (let i = 0; i < 3; i++) c.propose(n('n1'), `w${i}`);
    c.deliverAll();
    assert.deepEqual(change(c, 'n1', { kind: 'promote', node: n('n4') }).kind, 'rejected');
    const refused = c.node('n1').proposeMembershipChange({ kind: 'promote', node: n('n4') }, c.nowMs);
    assert.ok(refused.kind === 'rejected' && refused.reason === 'learner-behind');
    c.heal();
    c.runFor(200);
    assert.equal(change(c, 'n1', { kind: 'promote', node: n('n4') }).kind, 'accepted');
    assert.deepEqual([...voters(c, 'n1')].sort(), ['n1', 'n2', 'n3', 'n4']);
    c.deliverAll();
    c.runFor(100);
    for (const id of c.ids) assert.deepEqual([...voters(c, id)].sort(), ['n1', 'n2', 'n3', 'n4']);
    // Four voters: a majority is three.
    c.cut(n('n1'), n('n2'));
    c.cut(n('n1'), n('n3'));
    const commit = c.node('n1').status().commitIndex;
    c.propose(n('n1'), 'needs-three');
    c.deliverAll();
    assert.equal(c.node('n1').status().commitIndex, commit);
  });

  test('a removed follower gets nothing more; the majority shrinks with it', () => {
    const c = ledBy1({ ids: ['n1', 'n2', 'n3'] });
    assert.equal(change(c, 'n1', { kind: 'remove', node: n('n3') }).kind, 'accepted');
    c.deliverAll();
    c.runFor(100);
    assert.deepEqual(voters(c, 'n1'), ['n1', 'n2']);
    const sentTo3 = c.sent.filter((s) => s.startsWith('n1->n3')).length;
    c.propose(n('n1'), 'after');
    c.deliverAll();
    c.runFor(200);
    assert.equal(c.sent.filter((s) => s.startsWith('n1->n3')).length, sentTo3);
  });

  test('removing the leader: it leads until the change commits, then steps down and hands over', () => {
    const c = ledBy1({ ids: ['n1', 'n2', 'n3'] });
    const before = c.nowMs;
    const sentBefore = c.sent.length;
    assert.equal(change(c, 'n1', { kind: 'remove', node: n('n1') }).kind, 'accepted');
    assert.equal(c.node('n1').status().role, 'leader', 'leads while the change is pending');
    c.deliverAll();
    assert.notEqual(c.node('n1').status().role, 'leader');
    const leader = c.leader();
    assert.ok(leader === 'n2' || leader === 'n3', `new leader ${leader}`);
    assert.equal(c.nowMs, before, 'handed over by timeout-now: no election timeout spent');
    c.runFor(3_000);
    assert.ok(!c.sent.slice(sentBefore).some((s) => /^n1->\S+ (pre-)?vote /.test(s)),
      'the removed node never campaigns');
    assert.deepEqual(c.violations, []);
  });

  test('no change before the leader commits in its term, and one change at a time', () => {
    const c = ledBy1({ ids: ['n1', 'n2', 'n3', 'n4'] });
    c.cut(n('n1'), n('n2'));
    c.cut(n('n1'), n('n3'));
    const first = change(c, 'n1', { kind: 'remove', node: n('n4') });
    assert.equal(first.kind, 'accepted');
    const second = c.node('n1').proposeMembershipChange({ kind: 'remove', node: n('n3') }, c.nowMs);
    assert.ok(second.kind === 'rejected' && second.reason === 'change-pending', JSON.stringify(second));
    c.heal();
    c.isolate(n('n1'));
    c.runFor(1_000); // n2 or n3 takes over in a new term
    const leader = c.leader()!;
    assert.notEqual(leader, 'n1');
    // At the moment of its election, before its no-op commits, it may not change anything.
    const fresh = new Cluster({ seed: 6, ids: ['n1', 'n2', 'n3'] });
    fresh.fire('n1');
    fresh.deliverFirst((m) => m.message.kind === 'pre-vote');
    fresh.deliverFirst((m) => m.message.kind === 'pre-vote-response');
    fresh.deliverFirst((m) => m.message.kind === 'vote');
    fresh.deliverFirst((m) => m.message.kind === 'vote-response');
    assert.equal(fresh.node('n1').status().role, 'leader');
    const early = fresh.node('n1').proposeMembershipChange({ kind: 'remove', node: n('n3') },
      fresh.nowMs);
    assert.ok(early.kind === 'rejected' && early.reason === 'no-commit-in-term', JSON.stringify(early));
  });

  test('a config entry holds from its append and stops holding when a new leader cuts it off', () => {
    const all = ['n1', 'n2', 'n3', 'n4', 'n5'];
    const c = ledBy1({ ids: all, voters: all });
    for (const other of ['n3', 'n4', 'n5']) c.cut(n('n1'), n(other));
    // Only n2 gets the change; it holds there before it commits.
    change(c, 'n1', { kind: 'remove', node: n('n5') });
    c.deliverFirst((m) => m.to === 'n2' && m.message.kind === 'append');
    assert.deepEqual(voters(c, 'n2'), ['n1', 'n2', 'n3', 'n4']);
    c.crash(n('n1'));
    c.heal();
    c.isolate(n('n2'));
    c.runFor(1_500); // n3, n4 or n5 leads with the old membership
    const leader = c.leader();
    assert.ok(leader !== undefined && leader !== 'n2');
    c.heal();
    c.runFor(300);
    assert.deepEqual([...voters(c, 'n2')].sort(), all, 'the cut-off change no longer holds on n2');
    assert.deepEqual(c.violations, []);
  });
});

describe('raft: membership: the single-server change bug', () => {
  /**
   * Voters n1..n4, learners n5, n6. n1 (term 1) promotes n5 (C1 = n1..n5) but only n5 hears it,
   * and n1 crashes. n2 wins term 2 with n3 and n4 and, at once, removes n4 (C2 = n1..n3): with
   * the fix it must wait for an entry of term 2 to commit, which needs n4 (cut off). Then n1
   * returns with n4 and n5: a majority of C1.
   */
  function replay(mutant: boolean): { c: Cluster; secondChange: string } {
    const c = new Cluster({ seed: 7, ids: ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'],
      voters: ['n1', 'n2', 'n3', 'n4'], mutants: { configChangeBeforeTermCommit: mutant } });
    c.fire('n1');
    c.deliverAll();
    c.runFor(100);
    for (const other of ['n2', 'n3', 'n4', 'n6']) c.cut(n('n1'), n(other));
    assert.equal(change(c, 'n1', { kind: 'promote', node: n('n5') }).kind, 'accepted');
    c.deliverAll();
    c.crash(n('n1'));
    c.isolate(n('n5'));
    c.nowMs += 400; // past leader stickiness
    c.fire('n2');
    while (c.node('n2').status().role !== 'leader') c.deliver();
    c.cut(n('n2'), n('n4')); // n4 voted for n2 but gets none of its entries
    const second = change(c, 'n2', { kind: 'remove', node: n('n4') });
    c.deliverAll();
    c.runFor(100);
    // n1 comes back with n4 and n5; n2, n3 and n6 are on the other side.
    c.restart(n('n1'));
    c.heal();
    for (const a of ['n1', 'n4', 'n5']) for (const b of ['n2', 'n3', 'n6']) c.cut(n(a), n(b));
    c.runFor(3_000);
    return { c, secondChange: second.kind === 'rejected' ? second.reason : second.kind };
  }

  test('with the fix: the second change waits, and only one side ever commits', () => {
    const { c, secondChange } = replay(false);
    assert.equal(secondChange, 'no-commit-in-term');
    assert.deepEqual(c.violations, []);
  });

  test('mutant configChangeBeforeTermCommit: both sides commit different entries', () => {
    const { c, secondChange } = replay(true);
    assert.equal(secondChange, 'accepted');
    assert.ok(c.violations.some((v) => v.includes('committed entry')), c.violations.join('\n'));
  });
});

describe('raft: membership: config entries', () => {
  const m = (voters: string[], learners: string[] = []) =>
    ({ voters: voters.map(n), learners: learners.map(n) });

  test('changes apply one server at a time and refuse what does not fit', () => {
    assert.deepEqual(changedMembership(m(['a', 'b']), { kind: 'add-learner', node: n('c') }),
      m(['a', 'b'], ['c']));
    assert.deepEqual(changedMembership(m(['a'], ['c']), { kind: 'promote', node: n('c') }),
      m(['a', 'c']));
    assert.deepEqual(changedMembership(m(['a', 'b'], ['c']), { kind: 'remove', node: n('c') }),
      m(['a', 'b']));
    assert.equal(typeof changedMembership(m(['a']), { kind: 'add-learner', node: n('a') }), 'string');
    assert.equal(typeof changedMembership(m(['a']), { kind: 'promote', node: n('b') }), 'string');
    assert.equal(typeof changedMembership(m(['a']), { kind: 'remove', node: n('a') }), 'string');
  });

  test('decoding is total: any bytes give a membership or a reason', () => {
    assert.deepEqual(decodeMembership(encodeMembership(m(['a', 'b'], ['c']))), m(['a', 'b'], ['c']));
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const decoded = decodeMembership(bytes);
      assert.ok(typeof decoded === 'string' || decoded.voters.length > 0);
    }), { numRuns: 500 });
    assert.equal(typeof decodeMembership(new TextEncoder().encode('{"voters":["a","a"],"learners":[]}')),
      'string');
  });

  test('peer addresses: recorded by add-learner, kept by promote, dropped by remove', () => {
    const added = changedMembership(m(['a', 'b']),
      { kind: 'add-learner', node: n('c'), peerAddr: '10.0.0.3:2380' });
    assert.deepEqual(added, { ...m(['a', 'b'], ['c']),
      peerAddrs: [{ id: 'c', addr: '10.0.0.3:2380' }] });
    assert.ok(typeof added !== 'string');
    const promoted = changedMembership(added, { kind: 'promote', node: n('c') });
    assert.deepEqual(promoted, { ...m(['a', 'b', 'c']),
      peerAddrs: [{ id: 'c', addr: '10.0.0.3:2380' }] });
    assert.ok(typeof promoted !== 'string');
    // Removed: its record goes with it; none left means no field at all (the old bytes).
    const removed = changedMembership(promoted, { kind: 'remove', node: n('c') });
    assert.deepEqual(removed, m(['a', 'b']));
    assert.equal(Object.hasOwn(removed as object, 'peerAddrs'), false);
    assert.ok(typeof removed !== 'string');
    assert.deepEqual(decodeMembership(encodeMembership(promoted)), promoted);
    for (const bad of ['nowhere', 'a b:1', 'h:0', 'h:65536', 'x'.repeat(300) + ':1', '[zz]:1']) {
      assert.match(String(changedMembership(m(['a']), { kind: 'add-learner', node: n('c'),
        peerAddr: bad })), /peer address/, bad);
    }
    for (const good of ['h:1', 'db-1.example.com:2380', '[::1]:7000', '127.0.0.1:65535']) {
      assert.equal(typeof changedMembership(m(['a']), { kind: 'add-learner', node: n('c'),
        peerAddr: good }), 'object', good);
    }
  });

  test('peer addresses: an entry without them (written before) decodes as before; '
    + 'hostile ones are refused', () => {
    const text = (s: string) => new TextEncoder().encode(s);
    // The exact bytes a member wrote before addresses were recorded.
    const old = text('{"voters":["a","b"],"learners":["c"]}');
    assert.deepEqual(decodeMembership(old), m(['a', 'b'], ['c']));
    assert.deepEqual(encodeMembership(m(['a', 'b'], ['c'])), old);
    const hostile = [
      '"peerAddrs":{"c":"h:1"}', // not an array
      '"peerAddrs":[{"id":"z","addr":"h:1"}]', // not a member
      '"peerAddrs":[{"id":"c","addr":"h:1"},{"id":"c","addr":"h:2"}]', // twice
      '"peerAddrs":[{"id":"c","addr":"h"}]', // no port
      `"peerAddrs":[{"id":"c","addr":"${'h'.repeat(300)}:1"}]`, // too long
      '"peerAddrs":[{"id":"c","addr":"h:1\\nx"}]', // not a host
      '"peerAddrs":[{"id":"c","addr":7}]', // not a string
      '"peerAddrs":[null]',
    ];
    for (const field of hostile) {
      const decoded = decodeMembership(text(`{"voters":["a","b"],"learners":["c"],${field}}`));
      assert.equal(typeof decoded, 'string', field);
      assert.match(String(decoded), /peerAddrs/, field);
    }
  });

  test('client URLs: member-attributes records a member\'s own, replaces it, keeps the '
    + 'voters; promote keeps it, remove drops it', () => {
    const base = m(['a', 'b'], ['c']);
    const published = changedMembership(base,
      { kind: 'member-attributes', node: n('c'), clientUrl: 'http://10.0.0.3:2379' });
    assert.deepEqual(published, { ...base, clientUrls: [{ id: 'c', url: 'http://10.0.0.3:2379' }] });
    assert.ok(typeof published !== 'string');
    assert.equal(clientUrlOfMember(published, n('c')), 'http://10.0.0.3:2379');
    assert.equal(clientUrlOfMember(published, n('a')), undefined);
    const moved = changedMembership(published,
      { kind: 'member-attributes', node: n('c'), clientUrl: 'https://[::1]:7001' });
    assert.ok(typeof moved !== 'string');
    assert.deepEqual(moved.clientUrls, [{ id: 'c', url: 'https://[::1]:7001' }]);
    const promoted = changedMembership(moved, { kind: 'promote', node: n('c') });
    assert.ok(typeof promoted !== 'string');
    assert.deepEqual(promoted, { ...m(['a', 'b', 'c']),
      clientUrls: [{ id: 'c', url: 'https://[::1]:7001' }] });
    assert.deepEqual(decodeMembership(encodeMembership(promoted)), promoted);
    const removed = changedMembership(promoted, { kind: 'remove', node: n('c') });
    assert.deepEqual(removed, m(['a', 'b']));
    assert.equal(Object.hasOwn(removed as object, 'clientUrls'), false);
    assert.match(String(changedMembership(base, { kind: 'member-attributes', node: n('z'),
      clientUrl: 'http://h:1' })), /not a member/);
    for (const bad of ['h:1', 'ftp://h:1', 'http://h', 'http://h:1/path', 'http://h:0',
      `http://${'x'.repeat(300)}:1`, 'http://a b:1', 'http://h:1?x']) {
      assert.equal(clientUrlProblem(bad) === undefined, false, bad);
      assert.equal(typeof changedMembership(base, { kind: 'member-attributes', node: n('c'),
        clientUrl: bad }), 'string', bad);
    }
    for (const good of ['http://h:1', 'https://db-1.example.com:2379', 'http://[::1]:7000']) {
      assert.equal(clientUrlProblem(good), undefined, good);
    }
  });

  test('client URLs: entries without them decode as before; hostile ones are refused', () => {
    const text = (s: string) => new TextEncoder().encode(s);
    const hostile = [
      '"clientUrls":{"c":"http://h:1"}',
      '"clientUrls":[{"id":"z","url":"http://h:1"}]',
      '"clientUrls":[{"id":"c","url":"http://h:1"},{"id":"c","url":"http://h:2"}]',
      '"clientUrls":[{"id":"c","url":"javascript:alert(1)"}]',
      '"clientUrls":[{"id":"c","url":7}]',
      '"clientUrls":[null]',
    ];
    for (const field of hostile) {
      const decoded = decodeMembership(text(`{"voters":["a","b"],"learners":["c"],${field}}`));
      assert.equal(typeof decoded, 'string', field);
      assert.match(String(decoded), /clientUrls/, field);
    }
    assert.deepEqual(encodeMembership(m(['a', 'b'], ['c'])),
      text('{"voters":["a","b"],"learners":["c"]}'));
  });

  test('ConfigLog follows appends, truncations, compaction and restores', () => {
    const entry = (index: number, membership: ReturnType<typeof m>): Entry =>
      ({ index: logIndex(index), term: term(1), kind: 'config', data: encodeMembership(membership) });
    const log = new ConfigLog(m(['a']), 0, [entry(3, m(['a'], ['b']))]);
    log.append([entry(5, m(['a', 'b']))]);
    assert.deepEqual(log.current(), m(['a', 'b']));
    assert.deepEqual(log.at(4), m(['a'], ['b']));
    assert.deepEqual(log.at(2), m(['a']));
    log.truncateFrom(5);
    assert.deepEqual(log.current(), m(['a'], ['b']));
    log.compact(4);
    assert.deepEqual(log.at(4), m(['a'], ['b']));
    assert.equal(log.latestIndex(), 0);
    log.restore(10, m(['x', 'y']));
    assert.deepEqual(log.current(), m(['x', 'y']));
  });
});
