/**
 * @packageDocumentation
 * Scenario `lease` (`conclave sim --scenario lease`): leases, elections and locks on the
 * consistent core under faults. The members run the very ConsistentCore the server ships
 * (src/runtime/core) on simulated hosts, disks and network; the clients are the very client
 * the package ships (ConclaveClient from src/client, on its ports: each client's machine,
 * SimClientHost, gives it a clock drifting within ρ and timers, SimClientTransport carries its
 * requests, watches and keep-alive stream over the simulated network). They either grant
 * leases (the client's Lease: keep-alives at TTL/3, its local deadline), attach keys, then
 * abandon or revoke them; or campaign in elections and locks (the client's recipe driver and
 * its Campaign), hold, write to a fenced resource, resign, unlock or abandon; while the nemesis
 * crashes, pauses and partitions members, an operator hands leadership over, and the election
 * clients' machines freeze and lose the network. The client's async code runs between events
 * as a process runs it (src/sim/settle.ts).
 *
 * Invariants checked on every seed, in real (virtual) time. Leases (lease-checker.ts): a lease
 * never ends earlier than TTL/(1+ρ) after a member received its last acknowledged keep-alive;
 * its holder's local deadline has passed when it ends; its keys go with it; once nobody keeps
 * it alive it is gone within docs/leases.md's upper bound (checked in fault-free windows, and
 * for every lease counted from the heal). Elections and locks (recipe-checker.ts): no two
 * holders believe they hold one at the same instant; fencing tokens strictly grow and terms
 * grow by at least 1 from one leadership to the next; the fence accepts no token lower than one
 * it accepted. Holdings (held-checker.ts): no write is sent while `held()` is false, and
 * `held()` never says true after the lease truly ended; a release is not a loss; an unlock
 * after a loss settles at once. Every member holds the same state at the end. Planted bugs
 * (`--mutant deposedLeaderRevokes`, `ttlResetOnElection`, `claimWithoutLeaseRecheck`,
 * `heldWithoutClockCheck` with `--timing-violated`) are caught. With
 * `--timing-violated` (holders frozen past their TTL) overlaps happen and are counted; the
 * fence still accepts no stale write. Same seed, same options: same trace hash.
 *
 * @example
 * ```ts
 * import { runLeaseSeed } from './sim/scenarios/lease/index.js';
 * const result = await runLeaseSeed(7, { nodes: 3, clients: 6, 'safety-s': 10,
 *   mutant: undefined });
 * result.violations;                       // [] when every checker held
 * result.figures.slack.neverEarlierMsMin;  // how close a lease came to ending early
 * result.figures.recipes.checks.handovers; // leaderships checked against the one before
 * ```
 */
export {
  convergence, leaseScenario, runLeaseSeed, type LeaseFigures, type LeaseSeedHooks,
  type RecipeFigures,
} from './lease-scenario.js';
export {
  HOLDER_MARGIN_MS, LEASE_FLAGS, LEASE_MUTANT_NAMES, RECIPE_MARGIN_MS, type LeaseSettings,
  type RecipeSettings,
} from './lease-settings.js';
export { SimClientHost, type ClientHostCounts } from './client-host.js';
export { ClientFaults, type ClientFaultPlan } from './client-faults.js';
export { FencedResources } from './fenced-resource.js';
export { HeldChecker, type HeldCounts, type HeldView } from './held-checker.js';
export {
  RecipeChecker, type Leadership, type RecipeCounts,
} from './recipe-checker.js';
export {
  RecipeWorkload, type RecipeEndReason, type RecipeTarget, type RecipeWorkloadCounts,
  type RecipeWorkloadOptions,
} from './recipe-workload.js';
export { LeaseChecker, type HolderView, type LeaseSlack } from './lease-checker.js';
export {
  LeaseWorld, type MemberHost, type MemberProcess, type SimClient,
} from './lease-world.js';
export { LeaseWorkload, holderView, type WorkloadCounts } from './lease-workload.js';
export { SimClientTransport } from './sim-client-transport.js';
export {
  SimMemberServer, type ClientToMember, type LeaseNetMessage, type MemberToClient,
  type ServeObserver, type SimReply,
} from './core-protocol.js';
