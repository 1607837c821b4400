/**
 * @packageDocumentation
 * Gossip membership with an emergent leader: SWIM (Das, Gupta, Motivala 2002) with the
 * Lifeguard refinements (Dadgar et al. 2017), and on top of it the oldest live member as the
 * coordinator, fenced by a generation clock and guarded by a split-brain strategy (Akka's
 * keep-majority, keep-oldest, static-quorum). Pure: time arrives as `nowMs`, randomness as a
 * `Random`, messages go out through `drain()`.
 *
 * What a member does each protocol period (`probeIntervalMs`, stretched by Lifeguard's
 * awareness score): ping the next member of a randomized round-robin; without an ack within
 * `probeTimeoutMs`, ask `indirectChecks` members to ping it (they nack if they cannot reach it
 * either); without any ack by the end of the period, suspect it. A suspect that does not
 * refute (by raising its incarnation) is declared dead after a timeout that grows with log(N)
 * and shrinks with independent confirmations. Updates ride on every probe, ack and ping-req,
 * each sent about `retransmitMult × log10(N + 1)` times; a push-pull full-state exchange runs
 * every `pushPullIntervalMs`, and a push-pull with a dead member every `reconnectIntervalMs`
 * (which is how the sides merge after a partition heals).
 *
 * Invariants:
 * - a member's own record is live while it is a member, and only the member raises its own
 *   incarnation (admitters set a joiner's first one);
 * - an age is assigned once per admission, above every age the admitter has seen; the oldest
 *   live member (smallest age, then smallest id) is the same for every member with one view;
 * - `leader()` is defined only when this side may act and the oldest member's claim is the
 *   highest claim this member has seen; claims are ordered by (generation, claimer id) and
 *   only grow; `checkCoordinator` rejects any lower claim (a deposed coordinator);
 * - a side that fails its split-brain strategy latches as a minority: no leader, no claim;
 *   when the partition heals, its members learn that the acting side declared them dead and
 *   rejoin with new, younger ages, so the acting side's coordinator keeps its role and moves
 *   its generation on (see `swim-member.ts` for the exact merge rules);
 * - per-period work is O(indirectChecks + piggybackMax) and memory is O(N) small records;
 *   only push-pull (every `pushPullIntervalMs`, stretched above 32 members) costs O(N).
 *
 * Channels: ping, ack, ping-req, nack and gossip are datagrams; join, join-ack and push-pull go
 * on the stream channel. The runtime drains after every input, sends each message on its
 * channel, and keeps one timer armed at `nextDeadlineMs()`.
 *
 * @example
 * ```ts
 * import { SwimMember, SWIM_DEFAULTS_LAN, validateSwimMessage } from './core/swim/index.js';
 * import { nodeId } from './core/ids.js';
 *
 * const member = new SwimMember({
 *   id: nodeId('n2'), address: '10.0.0.2:7946', config: SWIM_DEFAULTS_LAN, random,
 * });
 * member.join([nodeId('n1')], clock.nowMs());     // n1 admits us and sends its full state
 * // After every input: send what it produced, publish its events, re-arm the one timer.
 * const flush = (): void => {
 *   const { messages, events } = member.drain();
 *   for (const out of messages) {
 *     if (out.channel === 'stream') transport.send(out.to, out.message);
 *     else transport.sendDatagram(out.to, out.message);
 *   }
 *   publish(events);
 *   const at = member.nextDeadlineMs();
 *   if (at !== undefined) timer.at(at, () => { member.tick(clock.nowMs()); flush(); });
 * };
 * transport.setHandler({ onMessage: (from, m) => {
 *   const checked = validateSwimMessage(m);          // untrusted bytes: never throws
 *   if (checked.ok) member.step(from, checked.message, clock.nowMs());
 *   flush();
 * } });
 * flush();
 * member.leader();                                 // { id: 'n1', generation: 1 }, once known
 * ```
 */
export {
  claimOrder,
  SwimMember,
  SWIM_OUTBOX_MAX,
  SWIM_RELAYS_MAX,
  type CoordinatorCheck,
  type OutgoingSwimMessage,
  type SwimMemberOptions,
  type SwimReady,
} from './swim-member.js';
export {
  SPLIT_BRAIN_STRATEGIES,
  SWIM_DEFAULTS_LAN,
  SWIM_DEFAULTS_LOCAL,
  SWIM_NO_MUTANTS,
  swimDeathDeclarationBoundMs,
  swimPushPullIntervalMs,
  swimRetransmitLimit,
  swimStableAfterMs,
  swimSuspicionConfirmationsWanted,
  swimSuspicionMaxMs,
  swimSuspicionMinMs,
  validateSwimConfig,
  type SplitBrainStrategy,
  type SwimConfig,
  type SwimMutants,
} from './config.js';
export {
  describeSwimMessage,
  estimateSwimMessageBytes,
  estimateUpdateBytes,
  swimMessageChannel,
  type AckMessage,
  type CoordinatorClaim,
  type GossipMessage,
  type GossipUpdate,
  type JoinAckMessage,
  type JoinMessage,
  type NackMessage,
  type PingMessage,
  type PingReqMessage,
  type PushPullMessage,
  type SwimChannel,
  type SwimMessage,
  type SwimMessageKind,
} from './messages.js';
export {
  SWIM_ADDRESS_LENGTH_MAX,
  SWIM_ID_LENGTH_MAX,
  SWIM_MEMBERS_MAX,
  SWIM_UPDATES_MAX,
  validateSwimMessage,
  type SwimMessageValidation,
} from './validate-message.js';
export { sideMayAct, StableMembership, type SideView } from './oldest-leader.js';
export { isOlder } from './member-table.js';
export { suspicionTimeoutMs } from './suspicion.js';
export {
  isLiveState,
  memberAge,
  type LeaderChangeReason,
  type MemberAge,
  type MemberState,
  type MembershipEvent,
  type SwimCounters,
  type SwimLeader,
  type SwimMemberInfo,
  type SwimPhase,
  type SwimStatus,
} from './types.js';
export {
  AdmissionBudget,
  judgeUpdate,
  plausibleGeneration,
  SWIM_ACCUSATION_STEP_MAX,
  SWIM_AGE_STEP_MAX,
  SWIM_GENERATION_STEP_MAX,
  SWIM_INCARNATION_STEP_MAX,
  SWIM_REJECTIONS,
  SWIM_VALUE_MAX,
  type PlausibilityContext,
  type SwimRejection,
} from './plausibility.js';
