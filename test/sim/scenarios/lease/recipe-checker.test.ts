/**
 * Goal: the election and lock checkers flag exactly what they claim: two holders believing at
 * one instant (a failure, or an expected and counted overlap under --timing-violated), a token
 * or term that does not grow, and a fence that accepts a token below one it accepted (or
 * refuses a current one); handovers and superseded writes are counted.
 * Method: synthetic timelines on a hand-moved clock; the fence decisions come from a real
 * FenceState, except where a broken fence is faked to prove the checker sees it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FenceState } from '../../../../src/core/election/index.js';
import { nodeId } from '../../../../src/core/ids.js';
import { RecipeChecker } from '../../../../src/sim/scenarios/lease/recipe-checker.js';

const A = nodeId('r1');
const B = nodeId('r2');
const E = 'election/leader';

function checker(expected = false): { c: RecipeChecker; at: (ms: number) => void } {
  let nowMs = 0;
  return { c: new RecipeChecker(() => nowMs, expected), at: (ms) => {
    nowMs = ms;
  } };
}

describe('sim: scenarios: lease: recipe checker', () => {
  test('successive leaderships with growing tokens and terms pass, and count as handovers', () => {
    const { c, at } = checker();
    const first = c.began(E, A, 5, 1);
    at(100);
    c.ended(first);
    c.began(E, B, 9, 2);
    c.began('lock/report', A, 3, 1); // another recipe: its own history
    assert.deepEqual(c.violations, []);
    assert.equal(c.counts.handovers, 1);
    assert.equal(c.counts.overlaps, 0);
  });

  test('a holder elected while another still believes is an overlap', () => {
    const { c, at } = checker();
    const first = c.began(E, A, 5, 1);
    at(50);
    c.began(E, B, 9, 2);
    at(80);
    c.ended(first);
    assert.deepEqual(c.violations.map((v) => v.checker), ['no-overlap']);
    assert.match(c.violations[0]!.message, /r2 \(token 9, term 2.*r1 \(token 5/);
    assert.equal(c.counts.overlaps, 1);
    assert.equal(c.counts.overlapMsMax, 30);
  });

  test('under --timing-violated an overlap is counted, not a failure', () => {
    const { c, at } = checker(true);
    c.began(E, A, 5, 1);
    at(50);
    c.began(E, B, 9, 2);
    assert.deepEqual(c.violations, []);
    assert.equal(c.counts.overlaps, 1);
  });

  test('a token or a term that does not grow is flagged', () => {
    const { c, at } = checker();
    c.ended(c.began(E, A, 9, 3));
    at(10);
    c.ended(c.began(E, B, 9, 4));
    c.ended(c.began(E, A, 12, 4));
    assert.deepEqual(c.violations.map((v) => v.checker), ['fencing-token', 'term']);
  });

  test('the fence: stale writes refused are counted; one accepted is a failure', () => {
    const { c, at } = checker(true);
    const fence = new FenceState();
    const old = c.began(E, A, 5, 1);
    at(10);
    const now = c.began(E, B, 9, 2);
    c.written(old, 5, fence.offer(5)); // before the successor wrote: accepted, superseded
    c.written(now, 9, fence.offer(9));
    c.written(old, 5, fence.offer(5)); // refused
    assert.equal(c.violations.length, 0);
    assert.equal(c.counts.writesAccepted, 2);
    assert.equal(c.counts.supersededAccepted, 1);
    assert.equal(c.counts.staleRefused, 1);
    c.written(old, 5, { kind: 'accepted', token: 5, highestBefore: 0 }); // a broken fence
    c.written(now, 9, { kind: 'stale', token: 9, highest: 12 }); // refuses the current token
    assert.deepEqual(c.violations.map((v) => v.checker), ['fence', 'fence']);
    assert.equal(c.counts.staleAccepted, 1);
  });
});
