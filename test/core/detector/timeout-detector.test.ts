/**
 * Goal: the fixed-timeout detector declares a peer exactly when its silence exceeds timeoutMs,
 * counts silence from watch() for a peer never heard from, and reports suspicion = silence /
 * timeout.
 * Method: examples at the edges (just before, exactly at, just after the timeout) with the LOCAL
 * profile (100 ms / 300 ms), and a fast-check property relating isAvailable and suspicionLevel.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  TIMEOUT_DETECTOR_DEFAULTS_LAN,
  TIMEOUT_DETECTOR_DEFAULTS_LOCAL,
  TimeoutDetector,
} from '../../../src/core/detector/index.js';
import { nodeId } from '../../../src/core/ids.js';

const n1 = nodeId('n1');
const n2 = nodeId('n2');

describe('detector: timeout', () => {
  test('a peer is available up to exactly timeoutMs of silence and unavailable after', () => {
    const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LOCAL);
    detector.heartbeat(n1, 1000);
    assert.equal(detector.isAvailable(n1, 1299), true);
    assert.equal(detector.isAvailable(n1, 1300), true);
    assert.equal(detector.suspicionLevel(n1, 1300), 1);
    assert.equal(detector.isAvailable(n1, 1300.001), false);
    assert.ok(detector.suspicionLevel(n1, 1300.001) > 1);
  });

  test('suspicionLevel is silence divided by timeoutMs', () => {
    const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LAN);
    detector.heartbeat(n1, 0);
    assert.equal(detector.suspicionLevel(n1, 0), 0);
    assert.equal(detector.suspicionLevel(n1, 1500), 0.5);
    assert.equal(detector.suspicionLevel(n1, 6000), 2);
    assert.equal(detector.silenceMs(n1, 6000), 6000);
  });

  test('each heartbeat restarts the silence', () => {
    const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LOCAL);
    for (let t = 0; t <= 10_000; t += 250) {
      detector.heartbeat(n1, t);
      assert.equal(detector.isAvailable(n1, t + 300), true);
    }
    assert.equal(detector.isAvailable(n1, 10_000 + 301), false);
  });

  test('a watched peer that never comes up is declared timeoutMs after the watch', () => {
    const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LOCAL);
    detector.watch(n1, 500);
    assert.deepEqual(detector.peers(), [n1]);
    assert.equal(detector.isAvailable(n1, 800), true);
    assert.equal(detector.isAvailable(n1, 801), false);
  });

  test('watch neither resets a known peer nor counts as a heartbeat', () => {
    const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LOCAL);
    detector.heartbeat(n1, 0);
    detector.watch(n1, 250);
    assert.equal(detector.isAvailable(n1, 301), false);
  });

  test('an unmonitored peer is available with suspicion 0', () => {
    const detector = new TimeoutDetector();
    assert.equal(detector.isAvailable(n2, 1e9), true);
    assert.equal(detector.suspicionLevel(n2, 1e9), 0);
    assert.deepEqual(detector.peers(), []);
  });

  test('a heartbeat older than the latest is ignored; silence is never negative', () => {
    const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LOCAL);
    detector.heartbeat(n1, 1000);
    detector.heartbeat(n1, 900);
    assert.equal(detector.isAvailable(n1, 1300), true);
    assert.equal(detector.isAvailable(n1, 1201 + 100), false);
    assert.equal(detector.suspicionLevel(n1, 0), 0);
  });

  test('peers are listed sorted and remove forgets a peer', () => {
    const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LOCAL);
    detector.heartbeat(n2, 0);
    detector.watch(n1, 0);
    assert.deepEqual(detector.peers(), [n1, n2]);
    detector.remove(n2);
    assert.deepEqual(detector.peers(), [n1]);
    assert.equal(detector.isAvailable(n2, 1e6), true);
  });

  test('an invalid config is refused, naming every problem', () => {
    assert.throws(() => new TimeoutDetector({ heartbeatIntervalMs: -1, timeoutMs: Number.NaN }),
      /heartbeatIntervalMs=-1[^]*timeoutMs=null/);
  });

  test('a non-finite time is a programmer error', () => {
    const detector = new TimeoutDetector();
    assert.throws(() => detector.heartbeat(n1, Number.NaN), /nowMs must be a finite number/);
  });

  test('isAvailable agrees with suspicionLevel <= 1 at every silence', () => {
    fc.assert(fc.property(
      fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      fc.double({ min: 0, max: 1e4, noNaN: true }),
      (heardAtMs, silenceMs) => {
        const detector = new TimeoutDetector(TIMEOUT_DETECTOR_DEFAULTS_LAN);
        detector.heartbeat(n1, heardAtMs);
        const nowMs = heardAtMs + silenceMs;
        const level = detector.suspicionLevel(n1, nowMs);
        return detector.isAvailable(n1, nowMs) === (nowMs - heardAtMs <= 3000)
          && (level <= 1) === detector.isAvailable(n1, nowMs);
      },
    ), { numRuns: 300 });
  });
});
