/**
 * @packageDocumentation
 * Scenario `core` (`conclave sim --scenario core`): the consistent core as it ships — the real
 * ConsistentCore on every simulated member, snapshots on, the shipped client — under the full
 * nemesis and stale-leader faults (a leader cut off from the members right after it hands over,
 * still reached by the readers). Checked on every seed: the KV history is linearizable (WGL,
 * kv-model.ts; `unknown` fails unless too big), serializable reads read only values some
 * write may have put, watchers see every revision of their keys in order exactly once across
 * reconnects and resumes, leases keep docs/leases.md's bounds (the lease scenario's
 * LeaseChecker), replicas agree. Planted server-path bugs (`--mutant readsWithoutReadIndex`,
 * `watchSkipsEvent`, `retryReapplied`) are caught.
 *
 * @example
 * ```ts
 * import { runCoreSeed } from './sim/scenarios/core/index.js';
 * const result = await runCoreSeed(7, { nodes: 5, 'kv-clients': 4, readers: 1,
 *   'lease-clients': 2, watchers: 3, 'safety-s': 10 });
 * result.violations;                   // [] when every checker held
 * result.figures.linearizability;      // 'ok'
 * ```
 */
export { coreScenario, runCoreSeed, type CoreFigures } from './core-scenario.js';
export {
  CORE_FLAGS, CORE_MUTANT_NAMES, drawCoreSettings, type CoreSettings,
} from './core-settings.js';
export { KvWorkload, type KvWorkloadCounts } from './kv-workload.js';
export { WatchChecker, type WatchCounts } from './watch-checker.js';
