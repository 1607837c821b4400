/**
 * Pieces of the one final line each suite prints, in the put suite's format:
 * `label conclave a/b, etcd c/d, conclave/etcd x/y`.
 */
import { fmt, ratio } from './stats.js';

/**
 * One figure at several levels for both systems, with their ratios; Conclave alone when
 * `etcd` is undefined (the run had no --vs etcd).
 */
export function comparePart(label: string, conclave: readonly (number | undefined)[],
  etcd: readonly (number | undefined)[] | undefined): string {
  const own = `${label} conclave ${conclave.map(fmt).join('/')}`;
  if (etcd === undefined) return own;
  return `${own}, etcd ${etcd.map(fmt).join('/')}, ` +
    `conclave/etcd ${conclave.map((c, i) => fmt(ratio(c, etcd[i]))).join('/')}`;
}

/** What a line without the reference ends with. */
export function referenceHint(hasEtcd: boolean): string {
  return hasEtcd ? '' : ' (add --vs etcd for the reference)';
}
