/**
 * sim: scenarios: heartbeat — the detectors under the nemesis.
 * Method: run short seeds; check determinism (same seed, same trace hash), the no-suspicion
 * checker holding with loss 0 and biting with a too-tight timeout, and phi accrual's advantage
 * in an imperfect environment.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { heartbeatScenario, PHI, runHeartbeatSeed, TIMEOUT } from '../../../src/sim/scenarios/heartbeat.js';

const SHORT = { nodes: 5, loss: 0, 'duration-s': 60, 'interval-ms': 100 };

describe('sim: scenarios: heartbeat', () => {
  test('the same seed gives the same trace hash and figures', () => {
    const a = runHeartbeatSeed(12, SHORT);
    const b = runHeartbeatSeed(12, SHORT);
    assert.equal(a.traceHash, b.traceHash);
    assert.deepEqual(a.figures, b.figures);
    assert.notEqual(runHeartbeatSeed(13, SHORT).traceHash, a.traceHash);
  });

  test('with loss 0 no healthy node is ever suspected (20 seeds under the nemesis)', () => {
    for (let seed = 100; seed < 120; seed++) {
      const result = runHeartbeatSeed(seed, SHORT);
      assert.deepEqual(result.violations, [], `seed ${seed}`);
      assert.ok(result.events > 10_000, `seed ${seed} ran only ${result.events} events`);
    }
  });

  test('the checker bites: a timeout shorter than the heartbeat interval suspects healthy nodes', () => {
    const result = runHeartbeatSeed(100, SHORT, { timeoutMs: 90 });
    assert.ok(result.violations.length > 0);
    assert.equal(result.violations[0]!.checker, 'no-suspicion-when-healthy');
  });

  test('every seed crashes a node and both detectors measure its detection', () => {
    const result = runHeartbeatSeed(7, { ...SHORT, 'duration-s': 120 });
    assert.ok(result.figures.detectors[TIMEOUT]!.detectionMs.length > 0);
    assert.ok(result.figures.detectors[PHI]!.detectionMs.length > 0);
    // Timeout 300 ms with 100 ms heartbeats and 25 ms checks: detection within (200, 325] ms.
    for (const ms of result.figures.detectors[TIMEOUT]!.detectionMs) assert.ok(ms > 190 && ms <= 330, `${ms}`);
  });

  test('with loss, jitter and GC stalls, phi accrual suspects live nodes less than the default timeout', () => {
    const options = { ...SHORT, loss: 0.05, 'duration-s': 300 };
    const results = [1, 2].map((seed) => runHeartbeatSeed(seed, options));
    const summary = heartbeatScenario.summarize(results, options);
    const data = summary.data as { timeout: { falseSuspicions: number }; phi: { falseSuspicions: number } };
    assert.ok(data.phi.falseSuspicions < data.timeout.falseSuspicions, JSON.stringify(summary.lines));
  });
});
