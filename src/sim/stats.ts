/** Small statistics helpers for scenario figures. */

/** The q-quantile (0..1) by nearest rank; undefined for an empty sample. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export function mean(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** Formats a number of ms for reports: `123.4 ms`, or `-` when undefined. */
export function formatMs(value: number | undefined): string {
  return value === undefined ? '-' : `${value.toFixed(1)} ms`;
}

export function formatNumber(value: number | undefined, digits = 2): string {
  return value === undefined ? '-' : value.toFixed(digits);
}
