/** The scenarios `conclave sim --scenario NAME` knows, by name. */
import type { Scenario } from '../scenario.js';
import { heartbeatScenario } from './heartbeat.js';

export const SCENARIOS: ReadonlyMap<string, Scenario<unknown>> = new Map<string, Scenario<unknown>>([
  [heartbeatScenario.name, heartbeatScenario as Scenario<unknown>],
]);
