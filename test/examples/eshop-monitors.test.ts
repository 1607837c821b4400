/**
 * examples/eshop-monitors: the seeds' e-shop example does what its README says.
 * Goal: in both coordination modes, a failed service is restarted exactly once by the new
 * leader after the old one died (failover), and a leader paused with an order in flight has
 * that order refused by the supervisor's Fence once it resumes (paused-leader).
 * Method: each scenario runs once per mode through the example's own runScenario (real
 * processes on loopback: supervisor, services, three monitors, and in core mode three
 * `conclave server`s; etcd mode: three etcd members, paused-leader only), then its event lines
 * are checked; waits are on events with deadlines.
 * A synthetic history proves the checker catches a stale order that was obeyed.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  checkRun, runScenario, type EshopEvent, type ScenarioResult,
} from '../../examples/eshop-monitors/index.js';
import { ensureEtcdInstalled } from '../support/real-etcd.js';

const ETCD_MISSING = ensureEtcdInstalled();
const BUILT = existsSync(fileURLToPath(new URL('../../dist/src/index.js', import.meta.url)));

/** One run takes 10–20 s on a loaded 2-core machine; a lease TTL is 3 s of it. */
const RUN_TIMEOUT_MS = 90_000;

function explain(result: ScenarioResult): string {
  return `${result.violations.join('; ')}\n${result.events.slice(-40)
    .map((e) => JSON.stringify(e)).join('\n')}`;
}

/** The token of each monitor's leadership, from its 'became-leader' lines. */
function leaderships(result: ScenarioResult): { monitor: string; token: number }[] {
  return result.events.flatMap((e) => (e.kind === 'became-leader'
    ? [{ monitor: e.source, token: e.token }] : []));
}

describe('examples: eshop-monitors: checks', () => {
  test('an order obeyed after a newer leadership began is counted as stale', () => {
    const at = (atMs: number, body: object): EshopEvent =>
      ({ atMs, source: 'x', ...body }) as EshopEvent;
    const events = [
      at(10, { kind: 'became-leader', source: 'monitor-1', token: 1, term: 1 }),
      at(20, { kind: 'became-leader', source: 'monitor-2', token: 2, term: 2 }),
      at(30, { kind: 'restarted', service: 'cart', monitor: 'monitor-2', token: 2,
        incarnation: 2, pid: 1 }),
      at(40, { kind: 'duplicate', service: 'cart', monitor: 'monitor-1', token: 1,
        incarnation: 1, current: 2 }),
    ];
    const checks = checkRun({ events, startAtMs: 15, failedService: 'cart' });
    assert.equal(checks.staleAccepted, 1);
    assert.equal(checks.restartsOfFailed, 1);
  });
});

describe('examples: eshop-monitors: scenarios',
  { skip: BUILT ? false : 'dist/ not built (npm ci builds it)' }, () => {
    for (const coordination of ['gossip', 'core'] as const) {
      test(`failover (${coordination}): the new leader restarts the killed service once`,
        { timeout: RUN_TIMEOUT_MS }, async () => {
          const result = await runScenario({ scenario: 'failover', coordination });
          assert.deepEqual(result.violations, [], explain(result));
          const restart = result.events.find((e) => e.kind === 'restarted');
          assert.ok(restart?.kind === 'restarted', explain(result));
          // The killed leader could not order it; a newer leadership, with a higher token, did.
          const killed = result.oldLeader!;
          assert.notEqual(restart.monitor, killed.monitor);
          assert.ok(restart.token > killed.token, explain(result));
          assert.ok(leaderships(result).some((l) => l.monitor === restart.monitor
            && l.token === restart.token), explain(result));
        });

      test(`paused-leader (${coordination}): the resumed leader's order is refused (409)`,
        { timeout: RUN_TIMEOUT_MS }, async () => {
          const result = await runScenario({ scenario: 'paused-leader', coordination });
          assert.deepEqual(result.violations, [], explain(result));
          const checks = result.checks!;
          assert.ok(checks.staleOrderArrived && checks.staleRejected >= 1, explain(result));
          assert.equal(checks.staleAccepted, 0);
          const rejected = result.events.find((e) => e.kind === 'rejected');
          assert.ok(rejected?.kind === 'rejected', explain(result));
          assert.equal(rejected.code, 'CONCLAVE_FENCING_TOKEN_STALE');
          assert.ok(rejected.token < rejected.highest);
        });
    }

    // etcd mode: the same monitors on etcd (installed by the project's script when missing).
    test('paused-leader (etcd): the resumed leader\'s order is refused (409), the restart is '
      + 'done once through runOnce', { timeout: RUN_TIMEOUT_MS, skip: ETCD_MISSING ?? false },
    async () => {
      const result = await runScenario({ scenario: 'paused-leader', coordination: 'etcd' });
      assert.deepEqual(result.violations, [], explain(result));
      const checks = result.checks!;
      assert.ok(checks.staleOrderArrived && checks.staleRejected >= 1, explain(result));
      assert.equal(checks.staleAccepted, 0);
      assert.equal(result.events.filter((e) => e.kind === 'restarted').length, 1,
        explain(result));
    });
  });
