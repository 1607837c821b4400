/**
 * @packageDocumentation
 * Scenario `lease` (`conclave sim --scenario lease`): leases on the consistent core under faults.
 * The members run the very ConsistentCore the server ships (src/runtime/core) on simulated
 * hosts, disks and network; simulated clients (SimCoreClient, each on its own clock drifting
 * within ρ) grant leases, attach keys, keep them alive at TTL/3 (SimLeaseKeeper), then abandon
 * or revoke them, while the nemesis crashes, pauses and partitions members and an operator
 * hands leadership over.
 *
 * Invariants checked on every seed (lease-checker.ts), in real (virtual) time: a lease never
 * ends earlier than TTL/(1+ρ) after a member received its last acknowledged keep-alive; its
 * holder's local deadline has passed when it ends; its keys go with it; once nobody keeps it
 * alive it is gone within docs/leases.md's upper bound (checked in fault-free windows, and for
 * every lease counted from the heal); every member holds the same state at the end. Planted
 * bugs (`--mutant deposedLeaderRevokes`, `--mutant ttlResetOnElection`) are caught. Same seed,
 * same options: same trace hash.
 *
 * For recipes (elections, locks): SimCoreClient's callback methods (grant, keepAlive, revoke,
 * put, txn, range, watchDelete) each answer ok, failed or unknown after simulated delay.
 *
 * @example
 * ```ts
 * import { runLeaseSeed } from './sim/scenarios/lease/index.js';
 * const result = runLeaseSeed(7, { nodes: 3, clients: 6, 'safety-s': 10, mutant: undefined });
 * result.violations;                       // [] when every checker held
 * result.figures.slack.neverEarlierMsMin;  // how close a lease came to ending early
 * ```
 */
export {
  leaseScenario, runLeaseSeed, type LeaseFigures, type LeaseSeedHooks,
} from './lease-scenario.js';
export { LEASE_FLAGS, LEASE_MUTANT_NAMES, type LeaseSettings } from './lease-settings.js';
export { LeaseChecker, type HolderView, type LeaseSlack } from './lease-checker.js';
export { LeaseWorld, type MemberHost, type MemberProcess } from './lease-world.js';
export {
  SimCoreClient, type CallOptions, type SimAnswer, type SimCoreClientOptions, type SimTxn,
} from './sim-core-client.js';
export { SimLeaseKeeper, type KeeperState, type LeaseKeeperOptions } from './sim-lease-keeper.js';
export {
  CoreServer, type CoreReply, type CoreRequest, type LeaseNetMessage,
} from './core-protocol.js';
