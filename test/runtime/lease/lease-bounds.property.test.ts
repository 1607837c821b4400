/**
 * Goal: the two lease bounds of docs/leases.md hold across any sequence of leader changes:
 * a lease never ends earlier than TTL / (1 + ρ) after a keep-alive that was acknowledged (or
 * its grant), and it ends no later than (TTL + checkpointIntervalMs + 2 × electionTimeoutMsMax)
 * / (1 − ρ) after the last keep-alive a leader in office received (plus a few commit rounds) -
 * or, when no leader is in office then, as soon as the next one takes office. When a member
 * that was cut off (and caught up late) is elected, the documented weaker bound applies: one
 * more TTL.
 * Method: fast-check generates leader changes (offices, election gaps up to 2 ×
 * electionTimeoutMsMax, which uncommitted entries survive, deposed leaders that keep believing
 * they lead), clock drifts within ±ρ, keep-alives at random times to random members, and
 * keep-alives sharing confirmations (keepAliveLingerMs of 0 or a heartbeat); the
 * mini cluster (mini-cluster.ts) runs them in virtual time. The assumptions of the bound are
 * the generator's: a leader stays in office long enough to commit (3 commit delays and a
 * heartbeat), and elections finish within 2 × electionTimeoutMsMax.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { leaseEndBoundsMs } from '../../../src/core/kv/index.js';
import type { LeaseConfig } from '../../../src/runtime/lease/index.js';
import { MiniCluster } from './mini-cluster.js';

const RHO = 0.01;
const ELECTION_TIMEOUT_MS_MAX = 200;
const DELTA = 4;
const HEARTBEAT_MS = 10;
const CONFIG: LeaseConfig = { checkpointIntervalMs: 100, leasesPerEntryMax: 1000,
  retryDelayMs: 10 };
/** Commit rounds the bound leaves out: confirmation, commit, a retry, a heartbeat. */
const SLACK_MS = 4 * DELTA + HEARTBEAT_MS + CONFIG.retryDelayMs;
const RUNS = Number(process.env['CONCLAVE_PROPERTY_RUNS'] ?? 150);

interface Change {
  readonly officeMs: number;
  readonly gapMs: number;
  readonly next: number;
  readonly staleMs: number;
  readonly keepSeed: number;
}

interface KeepAlive {
  readonly atMs: number;
  readonly to: number | 'leader';
}

const change: fc.Arbitrary<Change> = fc.record({
  officeMs: fc.integer({ min: 3 * DELTA + HEARTBEAT_MS, max: 1500 }),
  gapMs: fc.integer({ min: 1, max: 2 * ELECTION_TIMEOUT_MS_MAX }),
  next: fc.integer({ min: 0, max: 2 }),
  staleMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 600 })),
  keepSeed: fc.integer({ min: 0, max: 7 }),
});

const keepAlive: fc.Arbitrary<KeepAlive> = fc.record({
  atMs: fc.integer({ min: 0, max: 4000 }),
  to: fc.oneof({ weight: 4, arbitrary: fc.constant('leader' as const) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 }) }),
});

interface Outcome {
  readonly grantedAtMs: number;
  readonly endedAtMs: number | undefined;
  readonly ackedAtMs: number[];
  readonly lastReceivedAtMs: number;
  readonly promotionsAtMs: readonly number[];
  readonly lateLeaders: number;
}

function runScenario(ttlMs: number, drifts: number[], changes: Change[],
  keepAlives: KeepAlive[], keepAliveLingerMs: number): Outcome {
  const cluster = new MiniCluster({ config: { ...CONFIG, keepAliveLingerMs }, drifts,
    commitDelayMs: DELTA, heartbeatMs: HEARTBEAT_MS });
  cluster.elect(0);
  cluster.run(20);
  const leaseId = cluster.grant(ttlMs);
  const grantedAtMs = cluster.nowMs - DELTA; // proposed then; applied at nowMs
  const startMs = cluster.nowMs;
  const ackedAtMs: number[] = [];
  let lastReceivedAtMs = grantedAtMs;
  for (const k of keepAlives) {
    cluster.scheduler.schedule(startMs + k.atMs - cluster.nowMs, () => {
      const leader = cluster.leader?.index;
      const to = k.to === 'leader' ? leader : k.to;
      if (to === undefined) return;
      if (to === leader) lastReceivedAtMs = Math.max(lastReceivedAtMs, cluster.nowMs);
      const sentAtMs = cluster.nowMs;
      cluster.node(to).tracker.keepAlive(leaseId, (answer) => {
        if (answer.kind === 'ok') ackedAtMs.push(sentAtMs);
      });
    });
  }
  let atMs = startMs;
  for (const c of changes) {
    atMs += c.officeMs;
    cluster.scheduler.schedule(atMs - cluster.nowMs, () => {
      const from = cluster.leader?.index ?? 0;
      // Any member but the one leaving and any still cut off (Raft would not elect them).
      const candidates = [0, 1, 2].filter((i) => i !== from && !cluster.isIsolated(i));
      const next = candidates.includes(c.next) ? c.next : candidates[0];
      if (next === undefined) return;
      cluster.changeLeader(next, c.gapMs, { staleMs: c.staleMs,
        keep: (index) => ((index * 7 + c.keepSeed) & 1) === 0 });
    });
    atMs += c.gapMs;
  }
  cluster.run(atMs - cluster.nowMs + 4000 + 3 * ttlMs);
  return { grantedAtMs, endedAtMs: cluster.endedAtMs.get(leaseId), ackedAtMs, lastReceivedAtMs,
    promotionsAtMs: cluster.promotionsAtMs, lateLeaders: cluster.lateLeaders };
}

describe('lease tracker: bounds across leader changes (property)', () => {
  test('never earlier than TTL after an acknowledged keep-alive, nor later than the bound', () => {
    fc.assert(fc.property(
      fc.integer({ min: 700, max: 2500 }),
      fc.array(fc.double({ min: -RHO, max: RHO, noNaN: true }), { minLength: 3, maxLength: 3 }),
      fc.array(change, { maxLength: 6 }),
      fc.array(keepAlive, { maxLength: 20 }),
      fc.constantFrom(0, HEARTBEAT_MS),
      (ttlMs, drifts, changes, keepAlives, keepAliveLingerMs) => {
        const outcome = runScenario(ttlMs, drifts, changes, keepAlives, keepAliveLingerMs);
        const { earliestMs, latestMs } = leaseEndBoundsMs(ttlMs, { clockRateErrorMax: RHO,
          electionTimeoutMsMax: ELECTION_TIMEOUT_MS_MAX,
          checkpointIntervalMs: CONFIG.checkpointIntervalMs });
        const endedAtMs = outcome.endedAtMs;
        assert.ok(endedAtMs !== undefined, 'the lease never ended');
        for (const sentAtMs of [outcome.grantedAtMs, ...outcome.ackedAtMs]) {
          assert.ok(endedAtMs >= sentAtMs + earliestMs - 1e-6,
            `ended ${endedAtMs - sentAtMs} ms after an acknowledged keep-alive (TTL ${ttlMs})`);
        }
        // Past the bound, only a leader that just took office (the one in office at the bound
        // left it first) may still be committing the revoke.
        const extraMs = outcome.lateLeaders > 0 ? ttlMs / (1 - RHO) : 0;
        const boundAtMs = outcome.lastReceivedAtMs + latestMs + extraMs + SLACK_MS;
        const late = outcome.promotionsAtMs.filter((p) => p >= boundAtMs - 2 * SLACK_MS);
        const limitMs = late.length > 0 ? Math.max(boundAtMs, (late[0] as number) + SLACK_MS)
          : boundAtMs;
        assert.ok(endedAtMs <= limitMs, `ended ${endedAtMs - outcome.lastReceivedAtMs} ms after `
          + `the last keep-alive; bound ${latestMs} + ${SLACK_MS}`);
      }), { numRuns: RUNS });
  });
});
