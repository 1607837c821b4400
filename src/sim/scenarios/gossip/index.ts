/**
 * @packageDocumentation
 * Scenario `gossip` (`conclave sim --scenario gossip --members N`): the real SWIM runtime with
 * Lifeguard and the emergent leader, N members on the simulated network. Each seed scripts a
 * coordinator crash, a partition that heals, and a graceful leave of the coordinator, plus
 * random member crashes and the swarm faults it drew; it reports crash detection and
 * dissemination times, false death verdicts per 100 member-hours, load per member, and the
 * time for every member to agree on the leader after each event.
 *
 * Invariants checked on every seed (gossip-checks.ts): no live member is held dead in a run
 * without loss and degrading faults; after each event and after the heal, every member names
 * the same live leader and sees the same live members within a bound derived from the config;
 * no generation ever has two coordinators; a crash reaches every member within a bound.
 * Same seed, same options: same trace hash.
 *
 * @example
 * ```ts
 * import { runGossipSeed } from './sim/scenarios/gossip/index.js';
 * const result = runGossipSeed(7, { members: 20, lifeguard: 'both', strategy: 'keep-majority',
 *   profile: 'local', loss: 0.01, 'duration-s': undefined });
 * result.violations;           // [] when every checker held
 * result.figures.runs[0].agreements;
 * ```
 */
export {
  gossipScenario, runGossipSeed, type GossipFigures, type GossipRunFigures,
} from './gossip-scenario.js';
export { GOSSIP_FLAGS, type GossipTestOverrides } from './gossip-settings.js';
export type { AgreementSample, CrashSample, FalseDeadCounts } from './gossip-checks.js';
