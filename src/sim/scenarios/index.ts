/** The scenarios `conclave sim --scenario NAME` knows, by name. */
import type { Scenario } from '../scenario.js';
import { heartbeatScenario } from './heartbeat.js';
import { raftPartialPartitionScenario } from './raft/partial-partition-scenario.js';
import { raftScenario } from './raft/raft-scenario.js';

export const SCENARIOS: ReadonlyMap<string, Scenario<unknown>> = new Map<string, Scenario<unknown>>([
  [heartbeatScenario.name, heartbeatScenario as Scenario<unknown>],
  [raftScenario.name, raftScenario as Scenario<unknown>],
  [raftPartialPartitionScenario.name, raftPartialPartitionScenario as Scenario<unknown>],
]);
