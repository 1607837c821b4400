/**
 * swim: the generation ratchet. Goal: a claim that went past the generation bound of some
 * members (a forged claim within the leader's bound, which the leader then claims one above)
 * does not leave them refusing the leader for good: a member that refuses its candidate's
 * claim as beyond the bound asks the candidate for its full state with a nonce and takes the
 * claim of the reply that echoes it, and only of that reply (a forger sends under any id, but
 * cannot see a request made to the candidate's address). Method: the deterministic harness;
 * forged messages are stepped into members directly (docs/gossip.md, "The generation ratchet").
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId, type Generation } from '../../../src/core/ids.js';
import type { Incarnation } from '../../../src/core/ids.js';
import {
  SWIM_GENERATION_STEP_MAX, SWIM_INCARNATION_STEP_MAX, type PushPullMessage, type SwimMember,
} from '../../../src/core/swim/index.js';
import { SwimHarness } from './harness.js';

function stableCluster(seed: number): SwimHarness {
  const h = new SwimHarness({ seed });
  h.startCluster(5);
  assert.ok(h.runUntil(h.nowMs + 20_000, () => h.liveMembers().every((m) =>
    m.status().stableMembers === 5 && m.leader()?.id === 'n1')));
  return h;
}

function leaders(h: SwimHarness): string[] {
  return h.liveMembers().map((m) => `${m.leader()?.id ?? 'none'}@${m.leader()?.generation}`);
}

/** The push-pull requests `m` has queued to `to` (drained: the harness does not send them). */
function pushPullsTo(m: SwimMember, to: string): PushPullMessage[] {
  return m.drain().messages.flatMap((out) => out.to === to && out.message.kind === 'push-pull'
    && !out.message.reply ? [out.message] : []);
}

describe('swim: the generation ratchet', () => {
  test('a forged claim at the edge of the leader\'s bound: every member follows the leader', () => {
    const h = stableCluster(31);
    const n1 = h.member('n1');
    const generation = n1.status().generationMax;
    // News about the leader itself at the edge of its bound: it takes the claim and claims
    // one above it, one past the bound of every other member (they hold `generation`).
    n1.step(nodeId('n3'), { kind: 'gossip', updates: [{
      member: nodeId('n1'), state: 'alive', incarnation: n1.status().incarnation,
      age: n1.members().find((r) => r.id === 'n1')?.age ?? (0 as never),
      generation: (generation + SWIM_GENERATION_STEP_MAX) as Generation,
    }] }, h.nowMs);
    h.flush(n1);
    const claimed = generation + SWIM_GENERATION_STEP_MAX + 1;
    assert.equal(n1.status().generationMax, claimed);
    // Before the catch-up, the others refused n1's claims for good: no leader at all.
    assert.ok(h.runUntil(h.nowMs + 10_000, () => h.liveMembers().every((m) =>
      m.leader()?.id === 'n1' && m.leader()?.generation === claimed)), leaders(h).join(' '));
    for (const name of ['n2', 'n3', 'n4', 'n5']) {
      assert.equal(h.member(name).status().counters.claimsCaughtUp, 1, name);
    }
  });

  test('only the reply that echoes the nonce is taken beyond the bound', () => {
    const h = stableCluster(32);
    const n2 = h.member('n2');
    h.flush(n2);
    const generation = n2.status().generationMax;
    const beyond = (generation + SWIM_GENERATION_STEP_MAX + 1) as Generation;
    const n1 = nodeId('n1');
    const record = n2.members().find((r) => r.id === n1);
    assert.ok(record !== undefined);
    // The candidate's record with a claim beyond the bound: refused, and n2 asks n1.
    n2.step(nodeId('n3'), { kind: 'gossip', updates: [{ member: n1, state: 'alive',
      incarnation: record.incarnation, age: record.age, generation: beyond }] }, h.nowMs);
    assert.equal(n2.status().generationMax, generation);
    const asked = pushPullsTo(n2, 'n1');
    assert.equal(asked.length, 1);
    const nonce = asked[0]?.nonce;
    assert.ok(nonce !== undefined);
    const reply = (claimed: number, echoed: number | undefined): PushPullMessage => ({
      kind: 'push-pull', reply: true, acting: true, members: [],
      claim: { generation: claimed as Generation, by: n1 },
      ...(echoed === undefined ? {} : { nonce: echoed }),
    });
    // A forger under n1's id: without the nonce, or with another, the bound holds.
    n2.step(n1, reply(beyond + 5000, undefined), h.nowMs);
    n2.step(n1, reply(beyond + 5000, nonce + 1), h.nowMs);
    n2.step(nodeId('n3'), reply(beyond + 5000, nonce), h.nowMs);
    assert.equal(n2.status().generationMax, generation);
    assert.equal(n2.status().counters.claimsCaughtUp, 0);
    // n1's own answer: taken whatever the step, once.
    n2.step(n1, reply(beyond, nonce), h.nowMs);
    assert.equal(n2.status().generationMax, beyond);
    assert.equal(n2.status().counters.claimsCaughtUp, 1);
    n2.step(n1, reply(beyond + 5000, nonce), h.nowMs);
    assert.equal(n2.status().generationMax, beyond);
    // Within a join timeout, a second refusal asks nobody (one forged datagram, one request).
    h.flush(n2);
    n2.step(nodeId('n3'), { kind: 'gossip', updates: [{ member: n1, state: 'alive',
      incarnation: record.incarnation, age: record.age,
      generation: (beyond + SWIM_GENERATION_STEP_MAX + 1) as Generation }] }, h.nowMs);
    assert.equal(pushPullsTo(n2, 'n1').filter((m) => m.nonce !== undefined).length, 0);
  });

  test('a refutation past the incarnation step of a member that holds it dead', () => {
    // Seed 37 --hostile at 100 members: a member two forged accusations away refuted twice;
    // one that held it dead at its first incarnation refused every later refutation for good.
    const h = stableCluster(33);
    const n2 = h.member('n2');
    h.flush(n2);
    const n3 = nodeId('n3');
    const record = n2.members().find((r) => r.id === n3);
    assert.ok(record !== undefined);
    n2.step(nodeId('n4'), { kind: 'gossip', updates: [{ member: n3, state: 'dead',
      incarnation: record.incarnation, age: record.age, by: nodeId('n4') }] }, h.nowMs);
    assert.equal(n2.members().find((r) => r.id === n3)?.state, 'dead');
    h.flush(n2);
    const far = (record.incarnation + SWIM_INCARNATION_STEP_MAX + 5) as Incarnation;
    const alive = { member: n3, state: 'alive' as const, incarnation: far, age: record.age,
      address: 'n3' };
    n2.step(nodeId('n4'), { kind: 'gossip', updates: [alive] }, h.nowMs);
    const asked = pushPullsTo(n2, 'n3');
    assert.equal(asked.length, 1);
    const nonce = asked[0]?.nonce;
    assert.ok(nonce !== undefined);
    const reply = (echoed: number | undefined): PushPullMessage => ({
      kind: 'push-pull', reply: true, acting: true, members: [alive],
      claim: n2.status().generationMax === 0 ? { generation: 0 as Generation }
        : { generation: n2.status().generationMax, by: nodeId('n1') },
      ...(echoed === undefined ? {} : { nonce: echoed }),
    });
    n2.step(n3, reply(nonce + 1), h.nowMs);
    assert.equal(n2.members().find((r) => r.id === n3)?.state, 'dead', 'a forged answer');
    n2.step(n3, reply(nonce), h.nowMs);
    const after = n2.members().find((r) => r.id === n3);
    assert.equal(after?.state, 'alive');
    assert.equal(after?.incarnation, far);
  });
});
