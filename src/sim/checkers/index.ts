/**
 * @packageDocumentation
 * Checkers over recorded client histories. `checkLinearizable` is a Wing–Gong search with
 * Lowe's memoization (as Porcupine does), partitioned by key (P-compositionality), bounded by a
 * step budget: it answers `ok`, `illegal` (with a readable report) or `unknown` (budget spent,
 * never a false pass). Operations that timed out count as maybe applied; failed ones as never.
 *
 * @example
 * ```ts
 * const history = new HistoryRecorder<KvInput, KvOutput>();
 * const id = history.invoke('c1', { kind: 'put', key: 'x', value: 'a' }, nowMs);
 * history.complete(id, {}, laterMs);
 * const verdict = checkLinearizable(kvModel, history.operations());
 * if (verdict.result === 'illegal') console.log(formatIllegalReport(verdict));
 * ```
 */
export * from './history.js';
export * from './history-verdict.js';
export * from './linearizability.js';
export * from './kv-model.js';
