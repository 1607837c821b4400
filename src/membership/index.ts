/**
 * @packageDocumentation
 * Gossip membership for real processes: `joinCluster()` runs a SWIM member (with Lifeguard
 * and the oldest-member emergent leader, `src/core/swim`) over UDP datagrams (probes, acks,
 * gossip) and TCP streams (join, push-pull) on one port, on the system clock, and hands back
 * a `Membership`: the view (`members()`, `leader()`, `status()`), typed events, and
 * `leave()` / `close()`. docs/gossip.md explains the protocol, the defaults and what holds
 * under a partition.
 *
 * Invariants:
 * - the transport's address book follows the members' records: an address changes only on
 *   news that wins by SWIM's rules (a higher incarnation or a re-admission);
 * - `joinCluster` resolves only once this member is admitted (or has bootstrapped); events
 *   from that moment on reach listeners added right after `await`, in order;
 * - after `leave()` or `close()` resolves, the sockets are closed and nothing is emitted.
 *
 * @example
 * ```ts
 * import { joinCluster } from 'conclave';
 *
 * const membership = await joinCluster({
 *   name: 'monitor-2', bind: '127.0.0.1:7947', seeds: ['127.0.0.1:7946'],
 * });
 * membership.on('leader-changed', ({ leader, reason }) => {
 *   console.log(leader ? `${leader.id} leads, generation ${leader.generation}` : 'no leader',
 *     reason);
 * });
 * membership.members();   // live members, oldest first
 * membership.leader();    // { id: 'monitor-1', generation: 1 }
 * process.once('SIGTERM', () => void membership.leave());
 * ```
 */
export { joinCluster } from './join-cluster.js';
export { gossipMetricsRegistry, type GossipMetricsSource } from './gossip-metrics.js';
export { startMetricsServer, type MetricsServer } from './metrics-server.js';
export {
  GossipKeyring,
  generateGossipKey,
  loadGossipKeyFile,
  parseGossipKeys,
} from '../adapters/gossip-keyring.js';
export {
  Membership,
  type LeaveOptions,
  type MembershipEventMap,
  type MembershipEventOf,
  type MembershipStatus,
} from './membership.js';
export {
  MEMBERSHIP_PORT_DEFAULT,
  SWIM_PROFILES,
  resolveJoinOptions,
  type JoinClusterOptions,
  type ResolvedJoinOptions,
  type SwimProfile,
} from './membership-options.js';
export type {
  LeaderChangeReason,
  MemberState,
  MembershipEvent,
  SplitBrainStrategy,
  SwimConfig,
  SwimLeader,
  SwimMemberInfo,
} from '../core/swim/index.js';
