/** The scenarios `conclave sim --scenario NAME` knows, by name. */
import type { Scenario } from '../scenario.js';
import { coreScenario } from './core/index.js';
import { gossipScenario } from './gossip/index.js';
import { heartbeatScenario } from './heartbeat.js';
import { leaseScenario } from './lease/index.js';
import { raftAckCrashScenario } from './raft/ack-crash-scenario.js';
import { raftFigure8Scenario } from './raft/figure8-scenario.js';
import { raftPartialPartitionScenario } from './raft/partial-partition-scenario.js';
import { raftScenario } from './raft/raft-scenario.js';
import { raftVoteRestartScenario } from './raft/vote-restart-scenario.js';

export const SCENARIOS: ReadonlyMap<string, Scenario<unknown>> = new Map<string, Scenario<unknown>>([
  [heartbeatScenario.name, heartbeatScenario as Scenario<unknown>],
  [raftScenario.name, raftScenario as Scenario<unknown>],
  [raftPartialPartitionScenario.name, raftPartialPartitionScenario as Scenario<unknown>],
  [raftFigure8Scenario.name, raftFigure8Scenario as Scenario<unknown>],
  [raftAckCrashScenario.name, raftAckCrashScenario as Scenario<unknown>],
  [raftVoteRestartScenario.name, raftVoteRestartScenario as Scenario<unknown>],
  [gossipScenario.name, gossipScenario as Scenario<unknown>],
  [leaseScenario.name, leaseScenario as Scenario<unknown>],
  [coreScenario.name, coreScenario as Scenario<unknown>],
]);
