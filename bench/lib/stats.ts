/**
 * Exact percentiles over every recorded sample, as etcd's own benchmark tool reports them (it
 * keeps each request's latency and sorts them). A window holds at most a few hundred thousand
 * samples here, so keeping them all is cheap, and p99.9 of a few thousand samples stays exact
 * rather than bucketed.
 */

/** Latencies of one measured window. Unit: ms. */
export class LatencyRecorder {
  private samples = new Float64Array(1 << 16);
  private count = 0;

  record(latencyMs: number): void {
    if (this.count === this.samples.length) {
      const grown = new Float64Array(this.samples.length * 2);
      grown.set(this.samples);
      this.samples = grown;
    }
    this.samples[this.count++] = latencyMs;
  }

  get size(): number {
    return this.count;
  }

  summary(): LatencySummary {
    return summarize(this.samples.subarray(0, this.count));
  }
}

export interface LatencySummary {
  readonly count: number;
  readonly meanMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
}

export function summarize(samples: Float64Array): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const sample of sorted) total += sample;
  return {
    count: sorted.length,
    meanMs: sorted.length === 0 ? Number.NaN : total / sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    p999Ms: percentile(sorted, 99.9),
    maxMs: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

/** Nearest-rank percentile of ascending `sorted` (NaN when empty). */
export function percentile(sorted: Float64Array | readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Spread {
  readonly minMs: number;
  readonly medianMs: number;
  readonly maxMs: number;
}

/** min, median (mean of the middle two for an even count) and max. */
export function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return { minMs: Number.NaN, medianMs: Number.NaN, maxMs: Number.NaN };
  const median = n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  return { minMs: sorted[0]!, medianMs: median, maxMs: sorted[n - 1]! };
}

/** `a / b`, or NaN when either is missing or b is 0. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) {
    return Number.NaN;
  }
  return a / b;
}

/** A figure for a result line: 3 significant digits, or a whole number from 1000 up. */
export function fmt(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 1000) return String(Math.round(value));
  return Number(value.toPrecision(3)).toString();
}
