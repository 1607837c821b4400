/**
 * Goal: the lease scenario's checkers bite on exactly what they claim, and stay quiet inside
 * the bounds. Method: a real KvStore whose entries are applied by hand at chosen virtual times,
 * member events fed to a LeaseChecker directly (no network, no Raft), and the documented bounds
 * (TTL 2000 ms, ρ 0.01, checkpoint 500 ms, election timeout max 600 ms) computed by hand.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../../src/core/ids.js';
import { KV_STORE_DEFAULTS, KvStore } from '../../../../src/core/kv/index.js';
import {
  LeaseChecker, type HolderView,
} from '../../../../src/sim/scenarios/lease/lease-checker.js';

const N1 = nodeId('n1');
const TTL_MS = 2000;
const TIMING = {
  electionTimeoutMsMax: 600, clockRateErrorMax: 0.01, checkpointIntervalMs: 500,
  allowanceMs: 200, settleMs: 1800,
};
/** TTL / (1 + ρ). */
const EARLIEST_MS = TTL_MS / 1.01;
/** (TTL + checkpoint + 2 × election timeout max) / (1 − ρ) + allowance. */
const LATEST_MS = (TTL_MS + 500 + 1200) / 0.99 + 200;

class Bench {
  nowMs = 0;
  quietSinceMs = -Infinity;
  readonly store = new KvStore(KV_STORE_DEFAULTS);
  readonly checker = new LeaseChecker(() => this.nowMs, TIMING, () => this.quietSinceMs);
  private index = 0;

  /** Grants lease `index` at `atMs` (applied on n1) and returns its id. */
  grant(atMs: number): number {
    this.nowMs = atMs;
    const id = ++this.index;
    this.store.apply(id, { kind: 'lease-grant', ttlMs: TTL_MS, clientId: 'c1', sequence: id,
      nowMs: Math.floor(atMs) });
    this.checker.memberApplied(N1, this.store);
    return id;
  }

  /** n1 received a keep-alive at `receivedAtMs` and acknowledged it at `nowMs`. */
  ack(leaseId: number, receivedAtMs: number, answeredAtMs = receivedAtMs + 5): void {
    this.nowMs = answeredAtMs;
    this.checker.answered(N1, { kind: 'lease-keepalive', leaseId },
      { kind: 'ok', body: { leaseId, ttlMs: TTL_MS, remainingMs: TTL_MS } }, receivedAtMs);
  }

  /** The leader's expiry of `leaseId` applies on n1 at `atMs`. */
  expire(leaseId: number, atMs: number): void {
    this.nowMs = atMs;
    // The store takes whole milliseconds; the checker reads the exact virtual time.
    this.store.apply(++this.index, { kind: 'lease-expire', nowMs: Math.floor(atMs),
      leases: [{ leaseId, renewals: 0 }] });
    this.checker.memberApplied(N1, this.store);
  }

  sweepAt(atMs: number): string[] {
    this.nowMs = atMs;
    this.checker.sweep();
    return this.checker.violations.map((v) => v.checker);
  }
}

function holder(holds: boolean, keeping = false): HolderView {
  return { client: nodeId('c1'), keeping: () => keeping, holds: () => holds,
    pastDeadlineMs: () => (holds ? -50 : 50) };
}

describe('sim: scenarios: lease: checker', () => {
  test('never-earlier: an end before TTL/(1+ρ) after the acknowledged receipt is flagged', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    bench.ack(id, 1500);
    bench.expire(id, 1500 + EARLIEST_MS - 1);
    assert.deepEqual(bench.checker.violations.map((v) => v.checker), ['never-earlier']);
  });

  test('never-earlier: an end just after the bound passes, with its slack recorded', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    bench.ack(id, 1500);
    bench.expire(id, 1500 + EARLIEST_MS + 1);
    assert.deepEqual(bench.checker.violations, []);
    const slack = bench.checker.slacks();
    assert.equal(slack.neverEarlierChecked, 1);
    assert.ok(Math.abs((slack.neverEarlierMsMin ?? NaN) - 1) < 1e-9);
  });

  test('never-earlier: a lease its holder asked to revoke may end at once', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    bench.ack(id, 1500);
    bench.checker.handled(N1, { kind: 'lease-revoke', leaseId: id, clientId: 'c1',
      sequence: 99 });
    bench.expire(id, 1600);
    assert.deepEqual(bench.checker.violations, []);
    assert.equal(bench.checker.counts.revoked, 1);
  });

  test('holder-safety: a holder still counting on an ended lease is flagged', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    bench.checker.registerHolder(id, holder(true));
    bench.expire(id, 1000 + 3 * TTL_MS);
    assert.deepEqual(bench.checker.violations.map((v) => v.checker), ['holder-safety']);
    const other = new Bench();
    const next = other.grant(1000);
    other.checker.registerHolder(next, holder(false));
    other.expire(next, 1000 + 3 * TTL_MS);
    assert.deepEqual(other.checker.violations, []);
  });

  test('not-much-later: in a fault-free window a lease past the bound is flagged', () => {
    const bench = new Bench();
    bench.grant(1000);
    assert.deepEqual(bench.sweepAt(1000 + LATEST_MS - 1), []);
    assert.deepEqual(bench.sweepAt(1000 + LATEST_MS + 1), ['not-much-later']);
    assert.deepEqual(bench.sweepAt(1000 + LATEST_MS + 50), ['not-much-later'], 'flagged once');
  });

  test('not-much-later: a lease still kept alive is never flagged', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    bench.checker.registerHolder(id, holder(true, true));
    assert.deepEqual(bench.sweepAt(1000 + 10 * LATEST_MS), []);
  });

  test('not-much-later: with a fault in the window, the bound counts from the heal', () => {
    const bench = new Bench();
    bench.grant(1000);
    bench.quietSinceMs = 900; // a fault ended less than settleMs before t0
    assert.deepEqual(bench.sweepAt(1000 + LATEST_MS + 1), []);
    bench.checker.healed(6000);
    assert.deepEqual(bench.sweepAt(6000 + LATEST_MS - 1), []);
    assert.deepEqual(bench.sweepAt(6000 + LATEST_MS + 1), ['not-much-later-after-heal']);
  });

  test('not-much-later: a keep-alive received later moves t0', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    bench.checker.handled(N1, { kind: 'lease-keepalive', leaseId: id });
    bench.nowMs = 2000;
    bench.checker.handled(N1, { kind: 'lease-keepalive', leaseId: id });
    assert.deepEqual(bench.sweepAt(1000 + LATEST_MS + 1), []);
    assert.deepEqual(bench.sweepAt(2000 + LATEST_MS + 1), ['not-much-later']);
  });

  test('lease-keys: a key still attached to a removed lease is flagged', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    bench.checker.handled(N1, { kind: 'put', key: 'svc/a', value: 'up', lease: id,
      clientId: 'c1', sequence: 50 });
    // A store that lost the lease but kept its key (the real one deletes both at once).
    const broken = { leaseCount: 0, leases: () => [], lease: () => undefined,
      get: (key: string) => (key === 'svc/a' ? { lease: id } : undefined) } as unknown as KvStore;
    bench.nowMs = 1000 + 3 * TTL_MS;
    bench.checker.memberApplied(N1, broken);
    assert.deepEqual(bench.checker.violations.map((v) => v.checker), ['lease-keys']);
  });

  test('its assumptions are asserted: one lease swapped for another in one entry, a TTL '
    + 'that changed', () => {
    const bench = new Bench();
    const id = bench.grant(1000);
    const store = (leases: { id: number; ttlMs: number }[]): KvStore => ({
      leaseCount: leases.length, leases: () => leases,
      lease: (leaseId: number) => leases.find((l) => l.id === leaseId),
      get: () => undefined,
    }) as unknown as KvStore;
    // Same count, different set: the count alone would hide it.
    assert.throws(() => bench.checker.memberApplied(N1, store([{ id: id + 7, ttlMs: TTL_MS }])),
      /removed lease 1 and added another/);
    assert.throws(() => bench.checker.memberApplied(nodeId('n2'), store([{ id, ttlMs: 999 }])),
      /lease 1 appeared with TTL 999 ms, but was granted with 2000 ms/);
  });
});
