/**
 * Goal: keep-alives that arrive a few at a time share leadership confirmations
 * (LeaseConfig.keepAliveLingerMs) without breaking the rule behind "never earlier": every
 * answered keep-alive had a confirmation begun after it arrived, and the sharing delays an
 * answer by at most the linger. A lone keep-alive and a large batch start a round at once;
 * leaving office answers lingering callers at once.
 * Method: the mini cluster (mini-cluster.ts: real KvStores and LeaseTrackers on simulated
 * clocks, a 4 ms confirmation and commit) in virtual time; it records every confirmation the
 * trackers ask for. Exact schedules, then fast-check over arrival times and lingers.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { LeaseAnswer, LeaseConfig } from '../../../src/runtime/lease/index.js';
import { KEEP_ALIVE_BATCH_AT_ONCE } from '../../../src/runtime/lease/leader-office.js';
import { MiniCluster } from './mini-cluster.js';

const DELTA = 4; // the mini cluster's confirmation and commit delay
const HEARTBEAT_MS = 20;
/** No checkpoint during a test's keep-alives (besides the one at promotion). */
const CONFIG: LeaseConfig = { checkpointIntervalMs: 10_000, leasesPerEntryMax: 1000,
  retryDelayMs: 10 };

interface Call {
  readonly leaseId: number;
  readonly arrivedAtMs: number;
  answeredAtMs?: number;
  answer?: LeaseAnswer;
}

function started(lingerMs: number): { cluster: MiniCluster; leaseIds: number[] } {
  const cluster = new MiniCluster({ config: { ...CONFIG, keepAliveLingerMs: lingerMs },
    commitDelayMs: DELTA, heartbeatMs: HEARTBEAT_MS });
  cluster.elect(0);
  cluster.run(20);
  const leaseIds = Array.from({ length: 10 }, () => cluster.grant(60_000));
  cluster.run(100); // quiet: no confirmation begun lately
  return { cluster, leaseIds };
}

/** A keep-alive to the leader (node 0) `inMs` from now; the call records its answer. */
function keepAliveIn(cluster: MiniCluster, calls: Call[], leaseId: number, inMs: number): void {
  const send = (): void => {
    const call: Call = { leaseId, arrivedAtMs: cluster.nowMs };
    calls.push(call);
    cluster.node(0).tracker.keepAlive(leaseId, (answer) => {
      call.answer = answer;
      call.answeredAtMs = cluster.nowMs;
    });
  };
  if (inMs === 0) send();
  else cluster.scheduler.schedule(inMs, send);
}

const confirmationsSince = (cluster: MiniCluster, fromMs: number): number[] =>
  cluster.confirmations.filter((c) => c.node === 0 && c.atMs >= fromMs).map((c) => c.atMs);

const renewalsSince = (cluster: MiniCluster, fromMs: number): number =>
  cluster.proposals.filter((p) => p.command.kind === 'lease-renew' && p.atMs >= fromMs).length;

/** 40 keep-alives, one every 3 ms over 10 leases; the rounds and renewal entries they cost. */
function spread(lingerMs: number): { rounds: number; renewals: number; calls: Call[] } {
  const { cluster, leaseIds } = started(lingerMs);
  const fromMs = cluster.nowMs;
  const calls: Call[] = [];
  for (let i = 0; i < 40; i++) {
    keepAliveIn(cluster, calls, leaseIds[i % leaseIds.length] as number, 1 + 3 * i);
  }
  cluster.run(200);
  return { rounds: confirmationsSince(cluster, fromMs).length,
    renewals: renewalsSince(cluster, fromMs), calls };
}

describe('lease tracker: shared confirmations (keepAliveLingerMs)', () => {
  test('keep-alives a few at a time share one round per linger, and a renewal entry', () => {
    const lingering = spread(HEARTBEAT_MS);
    assert.deepEqual(new Set(lingering.calls.map((c) => c.answer?.kind)), new Set(['ok']));
    // 120 ms of arrivals: a round at the first, then one every 20 ms.
    assert.ok(lingering.rounds <= 120 / HEARTBEAT_MS + 1, `${lingering.rounds} rounds`);
    assert.ok(lingering.renewals <= lingering.rounds, `${lingering.renewals} renewal entries`);
    const eager = spread(0);
    assert.deepEqual(new Set(eager.calls.map((c) => c.answer?.kind)), new Set(['ok']));
    assert.ok(eager.rounds >= 3 * lingering.rounds,
      `without lingering ${eager.rounds} rounds, with ${lingering.rounds}`);
  });

  test('a lone keep-alive after a quiet spell starts its round at once', () => {
    const { cluster, leaseIds } = started(HEARTBEAT_MS);
    const calls: Call[] = [];
    keepAliveIn(cluster, calls, leaseIds[0] as number, 0);
    const arrivedAtMs = cluster.nowMs;
    cluster.run(3 * DELTA);
    assert.deepEqual(confirmationsSince(cluster, arrivedAtMs), [arrivedAtMs]);
    assert.equal(calls[0]?.answer?.kind, 'ok');
  });

  test(`${KEEP_ALIVE_BATCH_AT_ONCE} waiting keep-alives start a round without lingering`, () => {
    for (const count of [KEEP_ALIVE_BATCH_AT_ONCE - 1, KEEP_ALIVE_BATCH_AT_ONCE]) {
      const { cluster, leaseIds } = started(HEARTBEAT_MS);
      const calls: Call[] = [];
      const firstAtMs = cluster.nowMs;
      keepAliveIn(cluster, calls, leaseIds[0] as number, 0); // its round ends 4 ms later
      cluster.run(2 * DELTA);
      const batchAtMs = cluster.nowMs;
      for (let i = 0; i < count; i++) keepAliveIn(cluster, calls, leaseIds[i % 10] as number, 0);
      cluster.run(HEARTBEAT_MS + 3 * DELTA);
      const expectedAtMs = count >= KEEP_ALIVE_BATCH_AT_ONCE ? batchAtMs : firstAtMs + HEARTBEAT_MS;
      assert.deepEqual(confirmationsSince(cluster, firstAtMs), [firstAtMs, expectedAtMs],
        `${count} waiting`);
      assert.equal(calls.filter((c) => c.answer?.kind === 'ok').length, count + 1);
    }
  });

  test('leaving office answers lingering keep-alives not-leader at once, asking nothing', () => {
    const { cluster, leaseIds } = started(HEARTBEAT_MS);
    const calls: Call[] = [];
    keepAliveIn(cluster, calls, leaseIds[0] as number, 0);
    cluster.run(2 * DELTA);
    keepAliveIn(cluster, calls, leaseIds[1] as number, 0); // lingers until the next round
    const leftAtMs = cluster.nowMs;
    cluster.changeLeader(1, 100);
    assert.deepEqual(calls[1]?.answer, { kind: 'not-leader' });
    assert.equal(calls[1]?.answeredAtMs, leftAtMs);
    cluster.run(HEARTBEAT_MS);
    assert.deepEqual(confirmationsSince(cluster, leftAtMs), []);
  });

  test('every answer follows a round begun after its keep-alive, and waits at most the linger '
    + 'longer', () => {
    fc.assert(fc.property(
      fc.constantFrom(0, 5, 10, HEARTBEAT_MS),
      fc.array(fc.record({ inMs: fc.integer({ min: 0, max: 300 }),
        lease: fc.integer({ min: 0, max: 9 }) }), { minLength: 1, maxLength: 60 }),
      (lingerMs, arrivals) => {
        const { cluster, leaseIds } = started(lingerMs);
        const calls: Call[] = [];
        for (const { inMs, lease } of arrivals) {
          keepAliveIn(cluster, calls, leaseIds[lease] as number, inMs);
        }
        cluster.run(400);
        const rounds = cluster.confirmations.filter((c) => c.node === 0).map((c) => c.atMs);
        for (const call of calls) {
          assert.equal(call.answer?.kind, 'ok', JSON.stringify(call));
          const answeredAtMs = call.answeredAtMs as number;
          assert.ok(rounds.some((atMs) => atMs >= call.arrivedAtMs
            && atMs + DELTA <= answeredAtMs), `no round for ${JSON.stringify(call)}`);
          // The round may wait for the one in flight, or for the linger; then a round and at
          // most one renewal commit.
          const waitMsMax = Math.max(lingerMs, DELTA) + 2 * DELTA;
          assert.ok(answeredAtMs - call.arrivedAtMs <= waitMsMax,
            `answered ${answeredAtMs - call.arrivedAtMs} ms after it arrived`);
        }
      }), { numRuns: 60 });
  });
});

describe('lease tracker: bounds and leaving office', () => {
  test('waitersMax callers wait at most; one more is refused overloaded at once', () => {
    const cluster = new MiniCluster({ config: { ...CONFIG, waitersMax: 3 },
      commitDelayMs: DELTA, heartbeatMs: HEARTBEAT_MS });
    cluster.elect(0);
    cluster.run(20);
    const leaseId = cluster.grant(60_000);
    // Node 1 takes office; until its first confirmation, callers wait for it.
    cluster.changeLeader(1, 0);
    cluster.run(0);
    const calls = [1, 2, 3, 4].map(() => cluster.keepAlive(leaseId, 1));
    assert.deepEqual(calls.map((c) => c.answer?.kind),
      [undefined, undefined, undefined, 'overloaded']);
    assert.match((calls[3]!.answer as { reason: string }).reason, /waitersMax 3/);
    cluster.run(10 * DELTA);
    assert.deepEqual(calls.map((c) => c.answer?.kind), ['ok', 'ok', 'ok', 'overloaded']);
    // Once answered, they no longer count: there is room again.
    const later = cluster.keepAlive(leaseId, 1);
    cluster.run(10 * DELTA);
    assert.equal(later.answer?.kind, 'ok');
  });

  test('a caller told not-leader on leaving office who calls again is answered, not stranded',
    () => {
      const { cluster, leaseIds } = started(0);
      const leaseId = leaseIds[0] as number;
      const answers: LeaseAnswer[] = [];
      cluster.node(0).tracker.keepAlive(leaseId, (first) => {
        answers.push(first);
        // Called back from inside close(): the office leaving must not take this call.
        cluster.node(0).tracker.keepAlive(leaseId, (second) => answers.push(second));
      });
      cluster.changeLeader(1, 50);
      cluster.run(200);
      assert.deepEqual(answers.map((a) => a.kind), ['not-leader', 'not-leader']);
    });
});

