/**
 * sim: scheduler — virtual time and the event queue.
 * Method: schedule events in shuffled orders and check they run in (time, insertion) order.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Scheduler } from '../../src/sim/scheduler.js';

describe('sim: scheduler', () => {
  test('events run in time order, ties in insertion order', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 200 }), (delays) => {
      const scheduler = new Scheduler();
      const ran: { at: number; i: number }[] = [];
      delays.forEach((d, i) => scheduler.schedule(d, () => ran.push({ at: scheduler.nowMs, i })));
      while (scheduler.step());
      const expected = delays.map((d, i) => ({ at: d, i })).sort((a, b) => a.at - b.at || a.i - b.i);
      assert.deepEqual(ran, expected);
    }));
  });

  test('cancelled events never run and do not count', () => {
    const scheduler = new Scheduler();
    let ran = 0;
    const event = scheduler.schedule(5, () => ran++);
    scheduler.schedule(6, () => ran++);
    event.cancelled = true;
    scheduler.runUntil(10);
    assert.equal(ran, 1);
    assert.equal(scheduler.eventsRun, 1);
  });

  test('runUntil stops at the bound, advances time to it, and honours stop()', () => {
    const scheduler = new Scheduler();
    const seen: number[] = [];
    for (const d of [1, 2, 3, 20]) scheduler.schedule(d, () => seen.push(d));
    assert.equal(scheduler.runUntil(10), false);
    assert.deepEqual(seen, [1, 2, 3]);
    assert.equal(scheduler.nowMs, 10);
    scheduler.schedule(1, () => seen.push(11));
    assert.equal(scheduler.runUntil(100, () => seen.length === 4), true);
    assert.equal(scheduler.nowMs, 11);
  });

  test('events scheduled from events run at their own time', () => {
    const scheduler = new Scheduler();
    const times: number[] = [];
    scheduler.schedule(1, () => {
      times.push(scheduler.nowMs);
      scheduler.schedule(0, () => times.push(scheduler.nowMs));
      scheduler.schedule(-5, () => times.push(scheduler.nowMs));
    });
    scheduler.runUntil(5);
    assert.deepEqual(times, [1, 1, 1]);
  });
});
