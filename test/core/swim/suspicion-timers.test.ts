/**
 * swim: suspicion timers. Goal: the earliest deadline is known in O(1), confirmations bring a
 * deadline forward, dropped and replaced timers never fire, expiries come out earliest first
 * (then by member id), and the lazy heap stays bounded. Method: direct calls, a random model
 * check against a plain map.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { nodeId, type NodeId } from '../../../src/core/ids.js';
import { Suspicion } from '../../../src/core/swim/suspicion.js';
import { SuspicionTimers } from '../../../src/core/swim/suspicion-timers.js';

const id = (name: string): NodeId => nodeId(name);

describe('swim: suspicion timers', () => {
  test('the next deadline is the earliest live timer; confirmations bring it forward', () => {
    const timers = new SuspicionTimers();
    assert.equal(timers.nextDeadlineMs(), Infinity);
    timers.set(id('a'), new Suspicion(id('x'), 2, 100, 600, 0));
    timers.set(id('b'), new Suspicion(id('x'), 2, 100, 600, 50));
    assert.equal(timers.nextDeadlineMs(), 600);
    assert.ok(timers.confirm(id('b'), id('y')));
    assert.ok(timers.nextDeadlineMs() < 600, `${timers.nextDeadlineMs()}`);
    assert.equal(timers.confirm(id('b'), id('y')), false, 'the same accuser counts once');
    assert.equal(timers.confirm(id('zz'), id('y')), false, 'no timer, no confirmation');
  });

  test('dropped and replaced timers never fire; expiries come earliest first', () => {
    const timers = new SuspicionTimers();
    timers.set(id('a'), new Suspicion(id('x'), 0, 100, 100, 0));
    timers.set(id('b'), new Suspicion(id('x'), 0, 100, 100, 0));
    timers.set(id('c'), new Suspicion(id('x'), 0, 100, 100, 10));
    timers.delete(id('a'));
    timers.set(id('b'), new Suspicion(id('x'), 0, 100, 100, 500));
    assert.deepEqual(timers.takeExpired(200).map(([member]) => member), ['c']);
    assert.equal(timers.nextDeadlineMs(), 600);
    assert.deepEqual(timers.takeExpired(600).map(([member]) => member), ['b']);
    assert.equal(timers.size, 0);
  });

  test('matches a plain map of deadlines under random operations', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set'), m: fc.integer({ min: 0, max: 9 }),
        at: fc.integer({ min: 0, max: 1000 }) }),
      fc.record({ kind: fc.constant('confirm'), m: fc.integer({ min: 0, max: 9 }),
        by: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('delete'), m: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ kind: fc.constant('expire'), at: fc.integer({ min: 0, max: 2000 }) }),
    );
    fc.assert(fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const timers = new SuspicionTimers();
      const model = new Map<NodeId, Suspicion>();
      let nowMs = 0;
      for (const o of ops) {
        if (o.kind === 'set') {
          const s = new Suspicion(id('first'), 2, 100, 900, Math.max(nowMs, o.at));
          timers.set(id(`m${o.m}`), s);
          model.set(id(`m${o.m}`), s);
        } else if (o.kind === 'confirm') {
          const s = model.get(id(`m${o.m}`));
          const counted = timers.confirm(id(`m${o.m}`), id(`by${o.by}`));
          assert.equal(counted, s !== undefined && counted);
        } else if (o.kind === 'delete') {
          timers.delete(id(`m${o.m}`));
          model.delete(id(`m${o.m}`));
        } else {
          nowMs = Math.max(nowMs, o.at);
          const due = [...model].filter(([, s]) => s.deadlineMs <= nowMs)
            .sort(([a, x], [b, y]) => x.deadlineMs - y.deadlineMs || (a < b ? -1 : 1));
          assert.deepEqual(timers.takeExpired(nowMs).map(([m]) => m), due.map(([m]) => m));
          for (const [m] of due) model.delete(m);
        }
        const earliest = Math.min(...[...model.values()].map((s) => s.deadlineMs));
        assert.equal(timers.nextDeadlineMs(), earliest);
        assert.equal(timers.size, model.size);
      }
    }), { numRuns: 300 });
  });
});
