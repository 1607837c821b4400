/**
 * swim: plausibility. Goal: one message can move an incarnation, age or generation only by a
 * plausible step; no stranger can claim to be older than the leader; admissions of strangers
 * are rate-bounded. Method: the pure judge and the token bucket, on a fake clock (numbers).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../src/core/ids.js';
import {
  AdmissionBudget, judgeUpdate, plausibleGeneration, SWIM_ACCUSATION_STEP_MAX,
  SWIM_AGE_STEP_MAX, SWIM_GENERATION_STEP_MAX, SWIM_INCARNATION_STEP_MAX, SWIM_VALUE_MAX,
  type GossipUpdate, type PlausibilityContext,
} from '../../../src/core/swim/index.js';

const context: PlausibilityContext = {
  ageSeenMax: 10, generationMax: 3, known: { incarnation: 5, age: 4 }, aboutSelf: false,
  oldestLive: { age: 1, id: 'n1' },
};
const update = (fields: Partial<Record<keyof GossipUpdate, unknown>>): GossipUpdate =>
  ({ member: nodeId('n4'), state: 'alive', incarnation: 6, age: 4, ...fields }) as GossipUpdate;

describe('swim: plausibility', () => {
  test('ordinary news passes', () => {
    assert.equal(judgeUpdate(update({}), context), undefined);
    assert.equal(judgeUpdate(update({ state: 'dead', incarnation: 5 }), context), undefined);
    assert.equal(judgeUpdate(update({ generation: 4 }), context), undefined);
  });

  test('2^53 − 1 in one step is refused for incarnation, age and generation', () => {
    assert.equal(judgeUpdate(update({ incarnation: 2 ** 53 - 1 }), context), 'out-of-range');
    assert.equal(judgeUpdate(update({ age: 2 ** 53 - 1 }), context), 'out-of-range');
    assert.equal(judgeUpdate(update({ generation: 2 ** 53 - 1 }), context), 'out-of-range');
    assert.equal(judgeUpdate(update({ incarnation: SWIM_VALUE_MAX + 1 }),
      { ...context, known: undefined }), 'out-of-range');
  });

  test('an alive raises a known incarnation by at most the step', () => {
    const top = 5 + SWIM_INCARNATION_STEP_MAX;
    assert.equal(judgeUpdate(update({ incarnation: top }), context), undefined);
    assert.equal(judgeUpdate(update({ incarnation: top + 1 }), context), 'incarnation-jump');
  });

  test('accusations, and news about oneself, rise by at most half the step', () => {
    const top = 5 + SWIM_ACCUSATION_STEP_MAX;
    for (const state of ['suspect', 'dead', 'left']) {
      assert.equal(judgeUpdate(update({ state, incarnation: top }), context), undefined);
      assert.equal(judgeUpdate(update({ state, incarnation: top + 1 }), context),
        'incarnation-jump', state);
    }
    const self = { ...context, aboutSelf: true };
    assert.equal(judgeUpdate(update({ state: 'suspect', incarnation: top }), self), undefined);
    assert.equal(judgeUpdate(update({ state: 'suspect', incarnation: top + 1 }), self),
      'incarnation-jump');
    assert.equal(judgeUpdate(update({ incarnation: top + 1 }), self), 'incarnation-jump');
  });

  test('a refutation of the largest accepted accusation is accepted by a peer behind it', () => {
    // The accused refutes one above the accusation; a peer whose record of it is older by
    // up to half the step still takes that refutation (the seed-11 failure: it did not).
    const own = 40_000;
    const refutation = own + SWIM_ACCUSATION_STEP_MAX + 1;
    const peerRecordBehind = own - (SWIM_INCARNATION_STEP_MAX - SWIM_ACCUSATION_STEP_MAX - 1);
    assert.equal(judgeUpdate(update({ incarnation: refutation }),
      { ...context, known: { incarnation: peerRecordBehind, age: 4 } }), undefined);
  });

  test('ages and generations grow by at most their steps', () => {
    assert.equal(judgeUpdate(update({ age: 10 + SWIM_AGE_STEP_MAX + 1, incarnation: 6 }),
      { ...context, known: undefined }), 'age-jump');
    assert.equal(judgeUpdate(update({ generation: 3 + SWIM_GENERATION_STEP_MAX + 1 }), context),
      'generation-jump');
    assert.ok(plausibleGeneration(3 + SWIM_GENERATION_STEP_MAX, 3));
    assert.ok(!plausibleGeneration(3 + SWIM_GENERATION_STEP_MAX + 1, 3));
    assert.ok(!plausibleGeneration(2 ** 53 - 1, 2 ** 53 - 2));
  });

  test('a known member never gets older; a stranger is never older than the leader', () => {
    assert.equal(judgeUpdate(update({ age: 3 }), context), 'age-decrease');
    assert.equal(judgeUpdate(update({ age: 7 }), context), undefined); // re-admitted, younger
    const stranger = { ...context, known: undefined };
    assert.equal(judgeUpdate(update({ member: 'evil', age: 0 }), stranger), 'older-than-leader');
    assert.equal(judgeUpdate(update({ member: 'a0', age: 1 }), stranger), 'older-than-leader');
    assert.equal(judgeUpdate(update({ member: 'n9', age: 1 }), stranger), undefined);
    assert.equal(judgeUpdate(update({ member: 'evil', age: 11 }), stranger), undefined);
  });

  test('admissions: the burst at once, then the rate', () => {
    const budget = new AdmissionBudget(10, 5);
    let admitted = 0;
    for (let i = 0; i < 100; i++) if (budget.take(0)) admitted++;
    assert.equal(admitted, 5);
    for (let t = 1; t <= 1000; t++) if (budget.take(t)) admitted++;
    assert.equal(admitted, 15); // 10 more over one second
    assert.ok(budget.take(10_000));
  });
});
