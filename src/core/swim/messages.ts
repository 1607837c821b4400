/**
 * SWIM's wire messages as plain data. Probes and gossip travel as datagrams (best effort, may
 * be lost or reordered); join and push-pull carry full state and travel on the stream channel.
 * `swimMessageChannel` gives the channel of each kind; the member sets it on every outgoing
 * message.
 */
import { assertNever } from '../assert.js';
import type { Generation, Incarnation, NodeId } from '../ids.js';
import type { MemberAge, MemberState } from './types.js';

/**
 * One piggybacked membership update (SWIM §4.1: "infection-style dissemination"). The newest
 * news about a member wins by incarnation, and at equal incarnation by state:
 * left > dead > suspect > alive.
 */
export interface GossipUpdate {
  readonly member: NodeId;
  readonly state: MemberState;
  readonly incarnation: Incarnation;
  readonly age: MemberAge;
  /** The member's advertised address; always on alive updates and in full state. */
  readonly address?: string;
  /** The coordinator generation the member claims (only the coordinator sets it). */
  readonly generation?: Generation;
  /** For suspect and dead: the accuser (Lifeguard counts distinct accusers as confirmations). */
  readonly by?: NodeId;
  /**
   * For dead: the sender's side moved on to a newer coordinator since the member was declared
   * dead, and will not take it back with its old age; the member must rejoin (younger).
   */
  readonly readmit?: boolean;
}

/** The highest coordinator claim a member has seen: generation, then claimer id, orders them. */
export interface CoordinatorClaim {
  readonly generation: Generation;
  readonly by?: NodeId;
}

/** Direct probe of `target` (SWIM §3.1); answered by an `ack` with the same `seq`. */
export interface PingMessage {
  readonly kind: 'ping';
  readonly seq: number;
  /** The member meant to answer: a ping that reaches another process is ignored. */
  readonly target: NodeId;
  readonly updates: readonly GossipUpdate[];
}

export interface AckMessage {
  readonly kind: 'ack';
  readonly seq: number;
  readonly updates: readonly GossipUpdate[];
}

/** Indirect probe: "ping `target` for me and relay its ack with my `seq`" (SWIM §3.1). */
export interface PingReqMessage {
  readonly kind: 'ping-req';
  readonly seq: number;
  readonly target: NodeId;
  readonly updates: readonly GossipUpdate[];
}

/**
 * Lifeguard: the relay did not hear from the target in time. It tells the prober that the
 * relay itself is reachable, so a missing nack is evidence against the prober's own health.
 */
export interface NackMessage {
  readonly kind: 'nack';
  readonly seq: number;
  readonly updates: readonly GossipUpdate[];
}

/** Updates only, sent each gossip round to a few random members. */
export interface GossipMessage {
  readonly kind: 'gossip';
  readonly updates: readonly GossipUpdate[];
}

/** Asks to be admitted; the receiver assigns the joiner's age and answers with `join-ack`. */
export interface JoinMessage {
  readonly kind: 'join';
  readonly address: string;
}

export interface JoinAckMessage {
  readonly kind: 'join-ack';
  /** The age the admitter assigned: above every age it had seen. */
  readonly age: MemberAge;
  /** The incarnation the joiner starts from: above any record of an earlier process. */
  readonly incarnation: Incarnation;
  readonly claim: CoordinatorClaim;
  readonly members: readonly GossipUpdate[];
  /**
   * The admitter's last stable membership: the joiner counts its side against the same set,
   * so a member that joins a minority side knows it is in a minority.
   */
  readonly stable: readonly NodeId[];
}

/** Anti-entropy: full state both ways; the receiver of a request answers with `reply: true`. */
export interface PushPullMessage {
  readonly kind: 'push-pull';
  readonly reply: boolean;
  /**
   * Whether the sender's side may act (split-brain strategy). A member declared dead by an
   * acting side that moved on to a newer coordinator rejoins younger instead of refuting.
   */
  readonly acting: boolean;
  readonly claim: CoordinatorClaim;
  readonly members: readonly GossipUpdate[];
  /**
   * A random number the requester chose, echoed by the reply (absent on the usual periodic
   * exchange). A member asks the coordinator candidate with one when it refused that
   * candidate's claim as beyond its bound; a reply that echoes it comes from the candidate's
   * real address (a forger without the keyring cannot see the request), so its claim is taken
   * whatever the step (`SwimMember.catchUpWith`, docs/gossip.md "The generation ratchet").
   */
  readonly nonce?: number;
}

export type SwimMessage =
  | PingMessage
  | AckMessage
  | PingReqMessage
  | NackMessage
  | GossipMessage
  | JoinMessage
  | JoinAckMessage
  | PushPullMessage;

export type SwimMessageKind = SwimMessage['kind'];

/** Which transport a message uses: datagrams may be lost; streams are ordered per connection. */
export type SwimChannel = 'datagram' | 'stream';

export function swimMessageChannel(message: SwimMessage): SwimChannel {
  switch (message.kind) {
    case 'ping':
    case 'ack':
    case 'ping-req':
    case 'nack':
    case 'gossip':
      return 'datagram';
    case 'join':
    case 'join-ack':
    case 'push-pull':
      return 'stream';
    default:
      return assertNever(message, 'swim message');
  }
}

/** A short deterministic description, for traces and the simulator's trace hash. */
export function describeSwimMessage(message: SwimMessage): string {
  switch (message.kind) {
    case 'ping':
    case 'ping-req':
      return `${message.kind}#${message.seq} ${message.target}${describeUpdates(message.updates)}`;
    case 'ack':
    case 'nack':
      return `${message.kind}#${message.seq}${describeUpdates(message.updates)}`;
    case 'gossip':
      return `gossip${describeUpdates(message.updates)}`;
    case 'join':
      return `join ${message.address}`;
    case 'join-ack':
      return `join-ack age=${message.age} inc=${message.incarnation} `
        + `gen=${message.claim.generation} members=${message.members.length}`;
    case 'push-pull':
      return `push-pull${message.reply ? '-reply' : ''} gen=${message.claim.generation} `
        + `members=${message.members.length}`;
    default:
      return assertNever(message, 'swim message');
  }
}

function describeUpdates(updates: readonly GossipUpdate[]): string {
  if (updates.length === 0) return '';
  const parts = updates.map((u) => `${u.member}:${u.state[0]}${u.incarnation}`);
  return ` [${parts.join(' ')}]`;
}

/**
 * Approximate encoded size (msgpack-like: a few bytes of framing per field, strings by their
 * UTF-16 length), for load figures such as bytes per member per second and for the datagram
 * budget. It never has to be exact, only stable and in proportion.
 */
export function estimateSwimMessageBytes(message: SwimMessage): number {
  const header = 4 + message.kind.length;
  switch (message.kind) {
    case 'ping':
    case 'ping-req':
      return header + 6 + 2 + message.target.length + estimateUpdatesBytes(message.updates);
    case 'ack':
    case 'nack':
      return header + 6 + estimateUpdatesBytes(message.updates);
    case 'gossip':
      return header + estimateUpdatesBytes(message.updates);
    case 'join':
      return header + 2 + message.address.length;
    case 'join-ack':
      return header + 12 + estimateClaimBytes(message.claim)
        + estimateUpdatesBytes(message.members)
        + message.stable.reduce((sum, id) => sum + 2 + id.length, 3);
    case 'push-pull':
      return header + 4 + estimateClaimBytes(message.claim)
        + estimateUpdatesBytes(message.members) + (message.nonce === undefined ? 0 : 7);
    default:
      return assertNever(message, 'swim message');
  }
}

/** Approximate encoded size of one update (see `estimateSwimMessageBytes`). */
export function estimateUpdateBytes(update: GossipUpdate): number {
  let bytes = 4 + 2 + update.member.length + 2 + update.state.length + 5 + 5;
  if (update.address !== undefined) bytes += 2 + update.address.length;
  if (update.generation !== undefined) bytes += 5;
  if (update.by !== undefined) bytes += 2 + update.by.length;
  if (update.readmit !== undefined) bytes += 2;
  return bytes;
}

function estimateUpdatesBytes(updates: readonly GossipUpdate[]): number {
  let bytes = 3;
  for (const update of updates) bytes += estimateUpdateBytes(update);
  return bytes;
}

function estimateClaimBytes(claim: CoordinatorClaim): number {
  return 7 + (claim.by === undefined ? 0 : 2 + claim.by.length);
}
