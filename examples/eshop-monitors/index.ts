/**
 * @packageDocumentation
 * ExampleEshop's health monitors (the seeds' Leader and Followers example), runnable: three
 * monitors check the shop's services with a phi accrual failure detector, elect one leader, and
 * only the leader has a failed service restarted, by a supervisor that fences every order with
 * the leader's token. Two ways to elect: a Conclave consistent core (`--coordination core`,
 * a lease-backed election) or a gossip membership whose oldest member leads
 * (`--coordination gossip`). README.md explains what each guarantees.
 *
 * Invariants every run checks (checks.ts), from the processes' own event lines:
 * - a failed service is restarted exactly once, and no healthy one is restarted;
 * - the supervisor never obeys an order from a leader that had been replaced;
 * - no token is used by two monitors.
 *
 * @example
 * ```ts
 * import { runScenario } from './examples/eshop-monitors/index.js';
 * const result = await runScenario({ scenario: 'paused-leader', coordination: 'gossip' });
 * result.violations;            // [] when the run showed what it should
 * result.checks?.staleRejected; // 1: the paused leader's order was refused with 409
 * ```
 */
export { checkRun, runViolations, type CheckInput, type RunChecks } from './checks.js';
export {
  CORE_TIMING_DEFAULTS, MONITOR_DEFAULTS, SCENARIO_TIMING_DEFAULTS, validateMonitorConfig,
  type CoreTiming, type MonitorConfig, type ScenarioTiming,
} from './config.js';
export type { EshopEvent, EshopEventBody, EshopEventKind } from './events.js';
export {
  RUNNING_GROUPS, runScenario, SCENARIOS, type ScenarioName, type ScenarioOptions,
  type ScenarioResult,
} from './scenarios.js';
export type { CoordinationMode } from './shop.js';
export { describeEvent, formatTimeline } from './timeline.js';
