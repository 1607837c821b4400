/**
 * Goal: automatic compaction keeps what etcd's two modes keep. Revision mode: every check
 * (5 minutes), compact to the current revision minus the retention. Periodic mode: the first
 * compaction once `retention` has passed, to the revision of `retention` ago, then one every
 * interval (the retention, or an hour when it is longer); nothing when off, nothing below
 * what is already compacted, nothing once stopped (a follower). Method: a virtual clock and a
 * store whose revision grows by 10 a second; compactions recorded with their virtual time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AutoCompactor, type AutoCompactionConfig } from '../../../src/runtime/core/auto-compaction.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimClock } from '../../../src/sim/sim-clock.js';
import { CoreCluster } from './core-cluster.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** A compactor over a store whose revision grows by `perSecond` a second from `startAt`. */
function harness(config: Partial<AutoCompactionConfig>, perSecond = 10) {
  const scheduler = new Scheduler();
  const clock = new SimClock(scheduler, { driftRate: 0, monotonicOffsetMs: 0, wallOffsetMs: 0 });
  let compactRevision = 0;
  const compactions: { atMs: number; revision: number }[] = [];
  const revision = (): number => 1 + Math.floor((scheduler.nowMs / 1000) * perSecond);
  const compactor = new AutoCompactor({ mode: 'periodic', retention: 0,
    revisionCheckIntervalMs: 5 * MINUTE_MS, ...config }, {
    clock, timer: clock, revision, compactRevision: () => compactRevision,
    compact: (target, done) => {
      compactions.push({ atMs: scheduler.nowMs, revision: target });
      compactRevision = target;
      done();
    },
  });
  return { scheduler, compactor, compactions, revision,
    runTo: (ms: number) => scheduler.runUntil(ms) };
}

describe('runtime: consistent core: automatic compaction', () => {
  test('revision mode: every 5 minutes, to the revision minus the retention', () => {
    const h = harness({ mode: 'revision', retention: 1000 });
    h.compactor.becomeLeader();
    h.runTo(16 * MINUTE_MS);
    // At 0 the store is younger than the retention: nothing; then 3000, 6000, 9000 revisions.
    assert.deepEqual(h.compactions, [5, 10, 15].map((m) => ({ atMs: m * MINUTE_MS,
      revision: 1 + m * 60 * 10 - 1000 })));
  });

  test('periodic mode, 10 minutes: first after 10 minutes, then every 10, each 10 behind', () => {
    const h = harness({ mode: 'periodic', retention: 10 * MINUTE_MS });
    h.compactor.becomeLeader();
    h.runTo(31 * MINUTE_MS);
    assert.deepEqual(h.compactions.map((c) => c.atMs), [10, 20, 30].map((m) => m * MINUTE_MS));
    for (const c of h.compactions) {
      // The revision sampled `retention` ago (samples a minute apart).
      assert.equal(c.revision, 1 + ((c.atMs - 10 * MINUTE_MS) / 1000) * 10, `at ${c.atMs}`);
    }
  });

  test('periodic mode, 3 hours: first after 3 hours, then hourly, each 3 hours behind', () => {
    const h = harness({ mode: 'periodic', retention: 3 * HOUR_MS });
    h.compactor.becomeLeader();
    h.runTo(5.5 * HOUR_MS);
    assert.deepEqual(h.compactions.map((c) => c.atMs), [3, 4, 5].map((x) => x * HOUR_MS));
    for (const c of h.compactions) {
      assert.equal(c.revision, 1 + ((c.atMs - 3 * HOUR_MS) / 1000) * 10, `at ${c.atMs}`);
    }
  });

  test('through the real consistent core: the leader compacts, every member follows', () => {
    const c = new CoreCluster(51, { autoCompaction: { mode: 'revision', retention: 5,
      revisionCheckIntervalMs: 200 } });
    const leader = c.elect();
    for (let i = 0; i < 30; i++) {
      assert.equal(c.write(leader, { kind: 'put', key: `k${i % 4}`, value: `v${i}` }).kind,
        'applied');
    }
    c.run(500);
    const revision = c.core(leader).store.revision;
    for (const id of c.ids) {
      const core = c.core(id);
      // After half a second without writes, the last check compacted to 5 below the revision.
      assert.equal(core.store.compactRevision, revision - 5, `${id} (revision ${revision})`);
    }
  });

  test('off, stopped, or no newer revision: no compaction', () => {
    const off = harness({ mode: 'periodic', retention: 0 });
    off.compactor.becomeLeader();
    off.runTo(2 * HOUR_MS);
    assert.deepEqual(off.compactions, []);
    const stopped = harness({ mode: 'revision', retention: 10 });
    stopped.compactor.becomeLeader();
    stopped.runTo(6 * MINUTE_MS);
    stopped.compactor.stop();
    stopped.runTo(60 * MINUTE_MS);
    assert.equal(stopped.compactions.length, 1, 'one check before the stop only');
    const idle = harness({ mode: 'revision', retention: 10 }, 0);
    idle.compactor.becomeLeader();
    idle.runTo(30 * MINUTE_MS);
    assert.deepEqual(idle.compactions, [], 'a store at revision 1 has nothing to compact');
  });
});
