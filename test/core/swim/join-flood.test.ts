/**
 * swim: a join flood and the stable membership. Goal: forged joins within the admission budget
 * (ids nobody answers at) cannot leave a keep-majority cluster leaderless: a stranger's join is
 * answered, but the stranger enters the admitter's view (and so anyone's stable membership)
 * only once it speaks again, which an admitted joiner does at once and a forged one never does.
 * Nothing ever shrinks a stable set, so a minority stays a minority. Method: the deterministic
 * harness; the forged joins are stepped into members directly, their replies go nowhere.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../src/core/ids.js';
import type { SwimMember } from '../../../src/core/swim/index.js';
import { SwimHarness } from './harness.js';

const NAMES = ['n1', 'n2', 'n3', 'n4', 'n5'];

function stableCluster(seed: number): SwimHarness {
  const h = new SwimHarness({ seed });
  h.startCluster(5);
  assert.ok(h.runUntil(h.nowMs + 20_000,
    () => h.liveMembers().every((m) => m.status().stableMembers === 5)));
  return h;
}

/** `count` forged joins, spread over `into`. */
function flood(h: SwimHarness, into: readonly string[], count: number): void {
  for (let i = 0; i < count; i++) {
    const admitter = h.member(into[i % into.length] as string);
    admitter.step(nodeId(`forged-${i}`), { kind: 'join', address: `nowhere-${i}` }, h.nowMs);
    h.flush(admitter);
  }
}

function leaderOf(m: SwimMember): string | undefined {
  return m.leader()?.id;
}

function knowsForged(m: SwimMember): boolean {
  return m.members().some((r) => r.id.startsWith('forged-'));
}

describe('swim: a join flood and the stable membership', () => {
  test('ten forged joins into five members: answered, never in a view, the leader stays', () => {
    const h = stableCluster(21);
    flood(h, NAMES, 10);
    h.runFor(30_000);
    for (const m of h.liveMembers()) {
      assert.equal(knowsForged(m), false, `${m.id} took a forged joiner into its view`);
      assert.equal(m.status().stableMembers, 5);
      assert.equal(leaderOf(m), 'n1');
      // Two forged joins each, answered and forgotten after two join timeouts.
      assert.equal(m.status().counters.joinsUnconfirmed, 2);
      assert.equal(m.status().counters.rejectedAdmissionRate, 0);
    }
  });

  test('a flood into a partitioned minority: it stays a minority', () => {
    const h = stableCluster(22);
    h.partition(['n1', 'n2', 'n3'], ['n4', 'n5']);
    flood(h, ['n4', 'n5'], 4);
    // Long past every death and several stable-after times.
    h.runFor(60_000);
    for (const name of ['n4', 'n5']) {
      const m = h.member(name);
      assert.equal(m.leader(), undefined, `${name} must not act in the minority`);
      assert.equal(m.status().acting, false);
      assert.equal(m.status().stableMembers, 5, `${name}: its stable set changed`);
      assert.equal(knowsForged(m), false);
    }
    for (const name of ['n1', 'n2', 'n3']) assert.equal(leaderOf(h.member(name)), 'n1');
  });

  test('a genuine joiner speaks at once and counts as before', () => {
    const h = stableCluster(23);
    h.start('n6', ['n1']);
    assert.ok(h.runUntil(h.nowMs + 1_000, () => h.liveMembers().every((m) =>
      m.members().find((r) => r.id === 'n6')?.state === 'alive'
      && m.status().stableMembers === 6)), 'n6 was not taken into every stable set at once');
    // Six members, then two crash at once: 4 of 6 live is a majority, and n1 stays leader.
    h.runFor(10_000);
    h.crash('n4');
    h.crash('n5');
    h.runFor(30_000);
    for (const name of ['n1', 'n2', 'n3', 'n6']) {
      assert.equal(leaderOf(h.member(name)), 'n1');
      assert.equal(h.member(name).status().stableMembers, 4, `${name}: the dead are dropped`);
    }
    assert.equal(h.member('n1').status().counters.joinsUnconfirmed, 0);
  });

  test('a joiner whose first word to the admitter is lost still enters every view', () => {
    const h = stableCluster(25);
    h.start('n6', ['n1']);
    assert.ok(h.runUntil(h.nowMs + 1_000, () => h.member('n6').status().phase === 'member'));
    // Its record on the way back to n1 (and everything else it says to n1) is dropped.
    h.block('n6', 'n1');
    assert.ok(h.runUntil(h.nowMs + 20_000, () => h.liveMembers().every((m) =>
      m.members().find((r) => r.id === 'n6')?.state === 'alive')),
    'n1 did not learn n6 from the others');
    h.heal();
    h.runFor(10_000);
    for (const m of h.liveMembers()) assert.equal(leaderOf(m), 'n1');
    // It paid its admission with the join: learning it by gossip took no second token.
    assert.equal(h.member('n1').status().counters.joinsUnconfirmed, 0);
  });

  test('half of a stable set crashing together still leaves no leader', () => {
    const h = stableCluster(24);
    h.start('n6', ['n1']);
    h.runFor(20_000);
    for (const name of ['n1', 'n2', 'n3']) h.crash(name);
    h.runFor(60_000);
    for (const name of ['n4', 'n5', 'n6']) {
      assert.equal(h.member(name).leader(), undefined, `${name} must not act`);
      assert.equal(h.member(name).status().stableMembers, 6);
    }
  });
});
