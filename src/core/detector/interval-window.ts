/**
 * A bounded sliding window of heartbeat inter-arrival intervals with running mean and variance,
 * O(1) per sample (amortized), for the phi accrual detector.
 */
import { assert } from '../assert.js';

/**
 * The last `capacity` intervals in a ring, with running sums.
 *
 * Numerics: the sums are kept of `interval - shift` (the shifted-data method), with the shift
 * near the mean, so that `variance = E[d²] - E[d]²` does not cancel catastrophically when the
 * intervals are large and nearly equal. Adding and subtracting samples for ever would let
 * rounding errors creep into the sums, so they are recomputed from the ring each time it wraps
 * around (O(capacity) once per `capacity` samples, O(1) amortized), and the shift is moved to
 * the window's mean at that point. The first shift is the caller's estimate.
 */
export class IntervalWindow {
  private readonly samples: number[] = [];
  /** Index of the oldest sample once the ring is full. */
  private oldest = 0;
  private shiftedSum = 0;
  private shiftedSquaredSum = 0;

  private shiftMs: number;

  /** `estimateMs` is the expected interval (the first shift of the running sums). */
  constructor(readonly capacity: number, estimateMs: number) {
    assert(Number.isInteger(capacity) && capacity >= 1,
      () => `IntervalWindow capacity must be an integer >= 1: ${capacity}`);
    assert(Number.isFinite(estimateMs),
      () => `IntervalWindow estimate must be finite: ${estimateMs}`);
    this.shiftMs = estimateMs;
  }

  /** Number of intervals held (at most `capacity`). */
  get count(): number {
    return this.samples.length;
  }

  /** Adds an interval, dropping the oldest when the window is full. */
  add(intervalMs: number): void {
    assert(Number.isFinite(intervalMs) && intervalMs >= 0,
      () => `interval must be a finite number >= 0: ${intervalMs}`);
    const shifted = intervalMs - this.shiftMs;
    if (this.samples.length < this.capacity) {
      this.samples.push(intervalMs);
    } else {
      const dropped = (this.samples[this.oldest] as number) - this.shiftMs;
      this.shiftedSum -= dropped;
      this.shiftedSquaredSum -= dropped * dropped;
      this.samples[this.oldest] = intervalMs;
      this.oldest = (this.oldest + 1) % this.capacity;
      if (this.oldest === 0) {
        this.recomputeSums();
        return;
      }
    }
    this.shiftedSum += shifted;
    this.shiftedSquaredSum += shifted * shifted;
  }

  /** Mean interval; 0 when empty. Unit: ms. */
  get meanMs(): number {
    const n = this.samples.length;
    return n === 0 ? 0 : this.shiftMs + this.shiftedSum / n;
  }

  /** Population variance of the intervals (as Akka computes it); 0 when empty. Unit: ms². */
  get varianceMs2(): number {
    const n = this.samples.length;
    if (n === 0) return 0;
    const meanShifted = this.shiftedSum / n;
    // Rounding can leave a tiny negative value where the true variance is 0.
    return Math.max(0, this.shiftedSquaredSum / n - meanShifted * meanShifted);
  }

  /** Population standard deviation; 0 when empty. Unit: ms. */
  get stdDeviationMs(): number {
    return Math.sqrt(this.varianceMs2);
  }

  /** The intervals held, oldest first (for tests and dashboards; O(count)). */
  toArray(): number[] {
    return [...this.samples.slice(this.oldest), ...this.samples.slice(0, this.oldest)];
  }

  private recomputeSums(): void {
    this.shiftMs = this.samples.reduce((s, x) => s + x, 0) / this.samples.length;
    let sum = 0;
    let squaredSum = 0;
    for (const sample of this.samples) {
      const shifted = sample - this.shiftMs;
      sum += shifted;
      squaredSum += shifted * shifted;
    }
    this.shiftedSum = sum;
    this.shiftedSquaredSum = squaredSum;
  }
}
