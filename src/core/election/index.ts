/**
 * @packageDocumentation
 * The election and lock recipes' decisions, pure: which key a candidate owns, when it leads,
 * what its fencing token and term are, when it must give up (lease deadline passed, key gone,
 * process stalled), and the resource side that refuses stale tokens. The client
 * (src/client/election.ts, lock.ts) drives a Campaign over HTTP; the lease simulation drives the
 * same Campaign over the simulated network.
 *
 * Invariants:
 * - A fencing token is the create revision of the winner's key: the store's revision only
 *   grows, so each later leadership of the same election or lock carries a larger token.
 * - The term is the generation key's version after the winner's claim: one per leadership.
 * - A campaign never reports success after the lease's local deadline, nor after its key was
 *   found gone (docs/elections.md states the timing assumptions).
 *
 * @example
 * ```ts
 * const campaign = new Campaign({ keys: recipeKeys('election', 'billing'), leaseId, value: 'a',
 *   leaseTtlMs: 10_000, clockRateErrorMax: 0.01, leaseMarginMs: 500 });
 * let action = campaign.start();   // { kind: 'create', key, value, leaseId }
 * // ... perform it, then: action = campaign.onCreated(createRevision, { nowMs, leaseDeadlineMs })
 * const fence = new FenceState();
 * fence.offer(7);                  // { kind: 'accepted', ... }
 * fence.offer(5);                  // { kind: 'stale', token: 5, highest: 7 }
 * ```
 */
export {
  Campaign, electionLeader, type CampaignAction, type CampaignConfig, type CampaignLossReason,
  type CampaignMutant, type CampaignPhase, type CandidateEntry, type HolderView,
} from './campaign.js';
export { FenceState, type FenceDecision } from './fence-state.js';
export {
  candidateKey, recipeKeys, recipeNameProblem, RECIPE_NAME_LENGTH_MAX, type RecipeKeys,
  type RecipeKind,
} from './keys.js';
export { StallWatch, type StallVerdict, type StallWatchConfig } from './stall-watch.js';
