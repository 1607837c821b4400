/**
 * @packageDocumentation
 * Conclave's public surface. Import from `conclave`:
 *
 * ```ts
 * import { PhiAccrualDetector, PHI_ACCRUAL_DEFAULTS_LAN, nodeId } from 'conclave';
 * const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
 * detector.heartbeat(nodeId('n2'), performance.now());
 * ```
 */
export * from './core/detector/index.js';
export { GenerationClock, classifyIncoming, compareGenerations } from './core/generation/index.js';
export type { GenerationComparison, GenerationDecision } from './core/generation/index.js';
export { nodeId, term, logIndex, fencingToken, generation, incarnation } from './core/ids.js';
export type { NodeId, Term, LogIndex, FencingToken, Generation, Incarnation } from './core/ids.js';
export type { ConfigProblem } from './core/config.js';
export { formatConfigProblems } from './core/config.js';
export { CoordError, ConfigInvalidError, UsageError } from './errors.js';
export type { CoordErrorCode, CoordOutcome } from './errors.js';
export * from './client/index.js';
export { SystemClock } from './adapters/system-clock.js';
export { startNode } from './server/start-node.js';
export type { EmbeddedNode, StartNodeOptions } from './server/start-node.js';
export type { PeerAuthentication } from './adapters/tcp-transport-auth.js';
export { readOrCreatePeerSecret } from './server/peer-credentials.js';
export type { StateMachine, ProposalOutcome } from './runtime/raft/raft-runtime.js';
export type { Entry } from './core/raft/types.js';
export { joinCluster, Membership } from './membership/index.js';
export type {
  JoinClusterOptions, LeaveOptions, MembershipEventMap, MembershipEventOf, MembershipStatus, SwimProfile,
  MembershipEvent, LeaderChangeReason, SplitBrainStrategy, SwimLeader, SwimMemberInfo, SwimConfig,
} from './membership/index.js';
