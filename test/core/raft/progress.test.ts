/**
 * Goal: the leader's per-follower flow control (probe/replicate, in-flight window, stale
 * refusals). Method: direct calls on Progress and Inflights.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex } from '../../../src/core/ids.js';
import { Inflights, Progress } from '../../../src/core/raft/progress.js';

describe('raft: progress', () => {
  test('inflights is a bounded window freed by acknowledgement', () => {
    const w = new Inflights(3);
    w.add(2);
    w.add(4);
    w.add(9);
    assert.equal(w.full(), true);
    w.freeTo(4);
    assert.equal(w.count(), 1);
    w.add(10);
    w.add(12);
    assert.equal(w.full(), true);
    w.freeTo(100);
    assert.equal(w.count(), 0);
  });

  test('probe sends one append, then waits', () => {
    const pr = new Progress(logIndex(5), 4, 0);
    assert.equal(pr.shouldSendAppend(10, 0), true);
    pr.sentAppend(3, 7, 0);
    assert.equal(pr.nextIndex, 5, 'probe does not advance optimistically');
    assert.equal(pr.shouldSendAppend(10, 0), false);
  });

  test('replicate pipelines until the window is full', () => {
    const pr = new Progress(logIndex(5), 2, 0);
    pr.maybeUpdate(4);
    pr.becomeReplicate();
    pr.sentAppend(2, 6, 0);
    assert.equal(pr.shouldSendAppend(10, 0), true);
    pr.sentAppend(2, 8, 0);
    assert.equal(pr.shouldSendAppend(10, 0), false);
    pr.maybeUpdate(6);
    pr.inflights.freeTo(6);
    assert.equal(pr.shouldSendAppend(10, 0), true);
  });

  test('a refusal older than the match, or not of the outstanding probe, is stale', () => {
    const pr = new Progress(logIndex(11), 4, 0);
    assert.equal(pr.maybeDecreaseTo(7, 3), false, 'probe expects a refusal of index 10');
    assert.equal(pr.maybeDecreaseTo(10, 3), true);
    assert.equal(pr.nextIndex, 4);
    pr.maybeUpdate(6);
    pr.becomeReplicate();
    assert.equal(pr.maybeDecreaseTo(5, 0), false, 'index 5 is below the match');
    assert.equal(pr.maybeDecreaseTo(8, 0), true);
    assert.equal(pr.nextIndex, 7);
  });
});
