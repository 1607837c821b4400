/**
 * Goal: the phi accrual detector computes Akka's phi exactly, adapts per peer, and keeps its
 * guarantees (phi never NaN, non-decreasing in silence, bounded window, watch detects a peer
 * that never comes up).
 * Method: hand-computed phi values (arithmetic in the comments, checked with `bc -l`) at chosen
 * silences; fast-check properties over random heartbeat histories.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  PHI_ACCRUAL_DEFAULTS_LAN,
  PHI_ACCRUAL_DEFAULTS_LOCAL,
  PhiAccrualDetector,
  phiOf,
  type PhiAccrualDetectorConfig,
} from '../../../src/core/detector/index.js';
import { nodeId } from '../../../src/core/ids.js';

const n1 = nodeId('n1');
const n2 = nodeId('n2');
const TOLERANCE = 1e-9;

function assertClose(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= TOLERANCE,
    `${what}: expected ${expected}, got ${actual} (diff ${actual - expected})`);
}

/** Akka's two-branch formula, written out literally, to compare the stable form against. */
function akkaPhi(elapsedMs: number, meanMs: number, stdDeviationMs: number): number {
  const y = (elapsedMs - meanMs) / stdDeviationMs;
  const e = Math.exp(-y * (1.5976 + 0.070566 * y * y));
  return elapsedMs > meanMs ? -Math.log10(e / (1 + e)) : -Math.log10(1 - 1 / (1 + e));
}

// Hand-computed phi at y standard deviations from the mean, z = y·(1.5976 + 0.070566·y²):
//   y = -2: z = -2·(1.5976 + 0.282264) = -3.759728; e = exp(3.759728) = 42.9367456;
//           phi = -log10(1 - 1/43.9367456) = 0.00999876162996
//   y = -1: z = -1.668166; e = exp(1.668166) = 5.30243421; phi = -log10(1 - 1/6.30243421)
//           = 0.0750330321409
//   y =  0: z = 0; e = 1; phi = -log10(1 - 1/2) = log10(2) = 0.301029995664
//   y =  1: z = 1.668166; e = exp(-1.668166) = 0.188592628; phi = -log10(e/(1+e))
//           = 0.799508320840
//   y =  2: z = 3.759728; e = 0.0232900744; phi = 1.64282788549
//   y =  3: z = 3·(1.5976 + 0.635094) = 6.698082; e = 0.00123327506; phi = 2.90947532648
//   y =  4: z = 4·(1.5976 + 1.129056) = 10.906624; e = 1.83363707e-5; phi = 4.73669458271
const PHI_AT_Y: readonly (readonly [number, number])[] = [
  [-2, 0.00999876162996],
  [-1, 0.0750330321409],
  [0, 0.301029995664],
  [1, 0.79950832084],
  [2, 1.64282788549],
  [3, 2.90947532648],
  [4, 4.73669458271],
];

describe('detector: phi accrual: formula', () => {
  test('phiOf matches the hand-computed values at -2..4 standard deviations', () => {
    for (const [y, expected] of PHI_AT_Y) {
      assertClose(phiOf(1000 + y * 100, 1000, 100), expected, `y=${y}`);
    }
  });

  test('phiOf equals Akka\'s two-branch formula wherever that one is finite', () => {
    fc.assert(fc.property(
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      fc.double({ min: 0, max: 1e5, noNaN: true }),
      fc.double({ min: 1, max: 1e4, noNaN: true }),
      (elapsedMs, meanMs, stdDeviationMs) => {
        const akka = akkaPhi(elapsedMs, meanMs, stdDeviationMs);
        fc.pre(Number.isFinite(akka) && akka < 300);
        const ours = phiOf(elapsedMs, meanMs, stdDeviationMs);
        return Math.abs(ours - akka) <= 1e-9 * Math.max(1, akka);
      },
    ), { numRuns: 500 });
  });

  test('phiOf is never NaN and stays finite far beyond where Akka\'s overflows', () => {
    // y = 1000: Akka's e = exp(-z) underflows to 0 and its phi is Infinity.
    assert.equal(akkaPhi(100_000, 0, 100), Infinity);
    const far = phiOf(100_000, 0, 100);
    assert.ok(Number.isFinite(far) && far > 1e7, String(far));
    assert.equal(phiOf(-1e300, 0, 1e-300 + 1), 0);
    assert.equal(phiOf(Number.MAX_VALUE, -Number.MAX_VALUE, 1), Infinity);
  });
});

describe('detector: phi accrual: hand-computed phi', () => {
  test('after one heartbeat, phi follows the seeded window (mean 1000, std dev 250)', () => {
    // LAN defaults. The first heartbeat seeds intervals 750 and 1250: mean 1000, population
    // variance ((-250)² + 250²)/2 = 62500, std dev 250 (above the 100 minimum). Mean used:
    // 1000 + pause 3000 = 4000. Silence 4000 + y·250 gives the phi of y standard deviations.
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
    detector.heartbeat(n1, 10_000);
    for (const [y, expected] of PHI_AT_Y) {
      assertClose(detector.phi(n1, 10_000 + 4000 + y * 250), expected, `y=${y}`);
    }
  });

  test('steady 1000 ms intervals clamp the std dev to minStdDeviationMs', () => {
    // maxSampleSize 2: after two measured intervals of 1000 the seeds are gone; the window is
    // [1000, 1000], std dev 0, clamped to 100. With no pause the mean used is 1000, so a
    // silence of 1000 + y·100 gives the phi of y standard deviations.
    const config: PhiAccrualDetectorConfig = {
      ...PHI_ACCRUAL_DEFAULTS_LAN,
      maxSampleSize: 2,
      acceptableHeartbeatPauseMs: 0,
    };
    const detector = new PhiAccrualDetector(config);
    for (const t of [0, 1000, 2000]) detector.heartbeat(n1, t);
    assert.deepEqual(detector.stats(n1), {
      lastHeartbeatMs: 2000, heardFrom: true, sampleCount: 2, meanIntervalMs: 1000,
      stdDeviationMs: 0,
    });
    for (const [y, expected] of PHI_AT_Y) {
      assertClose(detector.phi(n1, 2000 + 1000 + y * 100), expected, `y=${y}`);
    }
  });

  test('acceptableHeartbeatPauseMs shifts the whole curve by the pause', () => {
    // Same window as above, pause 3000: mean used 1000 + 3000 = 4000, std dev 100.
    const config: PhiAccrualDetectorConfig = { ...PHI_ACCRUAL_DEFAULTS_LAN, maxSampleSize: 2 };
    const detector = new PhiAccrualDetector(config);
    for (const t of [0, 1000, 2000]) detector.heartbeat(n1, t);
    assertClose(detector.phi(n1, 2000 + 4000), 0.301029995664, 'y=0');
    assertClose(detector.phi(n1, 2000 + 4300), 2.90947532648, 'y=3');
  });

  test('a measured spread above the minimum is used as is', () => {
    // maxSampleSize 2, intervals 800 then 1200 (recorded while available): window [800, 1200],
    // mean 1000, variance (200² + 200²)/2 = 40000, std dev 200. No pause: mean used 1000.
    const config: PhiAccrualDetectorConfig = {
      ...PHI_ACCRUAL_DEFAULTS_LAN,
      maxSampleSize: 2,
      acceptableHeartbeatPauseMs: 0,
    };
    const detector = new PhiAccrualDetector(config);
    for (const t of [0, 800, 2000]) detector.heartbeat(n1, t);
    // Silence 1200: y = (1200 - 1000)/200 = 1; 1400: y = 2; 600: y = -2.
    assertClose(detector.phi(n1, 2000 + 1200), 0.79950832084, 'y=1 (silence 1200)');
    assertClose(detector.phi(n1, 2000 + 1400), 1.64282788549, 'y=2 (silence 1400)');
    assertClose(detector.phi(n1, 2000 + 600), 0.00999876162996, 'y=-2 (silence 600)');
  });
});

describe('detector: phi accrual: availability', () => {
  test('LAN defaults: a peer that stops after steady 1 s heartbeats is declared at ~4.52 s', () => {
    // Steady intervals give std dev 0 → 100; mean used 4000; phi = 8 at y = 5.22599 (solved
    // numerically), so at silence 4000 + 522.6 ms.
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
    for (let t = 0; t <= 2_000_000; t += 1000) detector.heartbeat(n1, t);
    assert.equal(detector.isAvailable(n1, 2_000_000 + 4522), true);
    assert.equal(detector.isAvailable(n1, 2_000_000 + 4523), false);
  });

  test('LOCAL defaults: declared ~452 ms after steady 100 ms heartbeats stop', () => {
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LOCAL);
    for (let t = 0; t <= 60_000; t += 100) detector.heartbeat(n1, t);
    assert.equal(detector.isAvailable(n1, 60_000 + 452), true);
    assert.equal(detector.isAvailable(n1, 60_000 + 453), false);
  });

  test('an unmonitored peer has phi 0 and is available', () => {
    const detector = new PhiAccrualDetector();
    assert.equal(detector.phi(n2, 1e9), 0);
    assert.equal(detector.isAvailable(n2, 1e9), true);
    assert.deepEqual(detector.peers(), []);
  });

  test('a watched peer that never comes up is declared unavailable', () => {
    // watch seeds the window like a first heartbeat: mean 4000 (with pause), std dev 250;
    // phi reaches 8 at 4000 + 5.22599·250 = 5306.5 ms after the watch.
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
    detector.watch(n1, 100);
    assert.deepEqual(detector.peers(), [n1]);
    assert.equal(detector.isAvailable(n1, 100 + 5306), true);
    assert.equal(detector.isAvailable(n1, 100 + 5307), false);
  });

  test('watch does not reset a peer already heard from', () => {
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
    detector.heartbeat(n1, 0);
    detector.watch(n1, 5000);
    assert.equal(detector.stats(n1)?.lastHeartbeatMs, 0);
  });

  test('the first heartbeat after watch adds no interval (start-up time is not one)', () => {
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
    detector.watch(n1, 0);
    detector.heartbeat(n1, 2500);
    assert.deepEqual(detector.stats(n1), {
      lastHeartbeatMs: 2500, heardFrom: true, sampleCount: 2, meanIntervalMs: 1000,
      stdDeviationMs: 250,
    });
    detector.heartbeat(n1, 3500);
    assert.equal(detector.stats(n1)?.sampleCount, 3);
  });

  test('a heartbeat ending a silence judged a failure adds no interval, but revives the peer',
    () => {
      const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
      detector.heartbeat(n1, 0);
      detector.heartbeat(n1, 1000);
      assert.equal(detector.stats(n1)?.sampleCount, 3);
      assert.equal(detector.isAvailable(n1, 60_000), false);
      detector.heartbeat(n1, 60_000);
      assert.equal(detector.stats(n1)?.sampleCount, 3);
      assert.equal(detector.isAvailable(n1, 60_500), true);
    });

  test('a heartbeat older than the latest is ignored, and silence never goes negative', () => {
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
    detector.heartbeat(n1, 5000);
    detector.heartbeat(n1, 4000);
    assert.equal(detector.stats(n1)?.lastHeartbeatMs, 5000);
    assert.equal(detector.stats(n1)?.sampleCount, 2);
    assert.equal(detector.phi(n1, 1000), detector.phi(n1, 5000));
  });

  test('peers are tracked separately, listed sorted, and remove forgets them', () => {
    const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
    detector.heartbeat(n2, 0);
    detector.heartbeat(n1, 0);
    detector.heartbeat(n1, 1000);
    assert.deepEqual(detector.peers(), [n1, n2]);
    assert.equal(detector.stats(n2)?.sampleCount, 2);
    detector.remove(n1);
    assert.deepEqual(detector.peers(), [n2]);
    assert.equal(detector.stats(n1), undefined);
    assert.equal(detector.phi(n1, 1e6), 0);
  });

  test('an invalid config is refused, naming every problem', () => {
    assert.throws(() => new PhiAccrualDetector({ ...PHI_ACCRUAL_DEFAULTS_LAN, threshold: 0,
      maxSampleSize: 1 }), /threshold=0[^]*maxSampleSize=1/);
  });
});

describe('detector: phi accrual: properties', () => {
  const intervals = fc.array(fc.double({ min: 0, max: 5000, noNaN: true }),
    { minLength: 0, maxLength: 60 });

  test('phi never decreases while a peer stays silent, and is never NaN', () => {
    fc.assert(fc.property(
      intervals,
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      (gaps, a, b) => {
        const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
        let t = 0;
        detector.heartbeat(n1, t);
        for (const gap of gaps) detector.heartbeat(n1, (t += gap));
        const [early, late] = a <= b ? [a, b] : [b, a];
        const phiEarly = detector.phi(n1, t + early);
        const phiLate = detector.phi(n1, t + late);
        return !Number.isNaN(phiEarly) && phiEarly >= 0 && phiEarly <= phiLate;
      },
    ), { numRuns: 300 });
  });

  test('the window never holds more than maxSampleSize intervals, and holds the latest ones',
    () => {
      fc.assert(fc.property(
        fc.integer({ min: 2, max: 12 }),
        fc.array(fc.integer({ min: 1, max: 3000 }), { minLength: 0, maxLength: 80 }),
        (maxSampleSize, gaps) => {
          const config = { ...PHI_ACCRUAL_DEFAULTS_LAN, maxSampleSize };
          const detector = new PhiAccrualDetector(config);
          let t = 0;
          detector.heartbeat(n1, t);
          for (const gap of gaps) detector.heartbeat(n1, (t += gap));
          const stats = detector.stats(n1);
          assert.ok(stats !== undefined);
          // Every gap here is below the detection time, so each one was recorded.
          const all = [750, 1250, ...gaps];
          const kept = all.slice(-maxSampleSize);
          assert.equal(stats.sampleCount, kept.length);
          const mean = kept.reduce((s, x) => s + x, 0) / kept.length;
          assert.ok(Math.abs(stats.meanIntervalMs - mean) < 1e-6,
            `${stats.meanIntervalMs} ${mean}`);
        },
      ), { numRuns: 200 });
    });
});
