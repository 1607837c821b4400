/**
 * The shapes a SWIM member shows to its runtime and users: member states, ages, the emergent
 * leader, events and status. Plain data, safe to serialize and to hand to a dashboard.
 */
import type { Brand, Generation, Incarnation, NodeId } from '../ids.js';

/**
 * The order in which members were admitted: a member's age is assigned by the member that
 * admitted it, strictly above every age that admitter had seen. Smaller is older; equal ages
 * (two admitters at once) are ordered by member id.
 */
export type MemberAge = Brand<number, 'MemberAge'>;
export const memberAge = (value: number): MemberAge => value as MemberAge;

/**
 * SWIM's member states plus a graceful departure. `suspect` still counts as a member (it may
 * refute); `dead` was declared after a suspicion timeout; `left` announced its own departure.
 */
export type MemberState = 'alive' | 'suspect' | 'dead' | 'left';

/** Whether a state counts as part of the live membership (leader and quorum counts). */
export function isLiveState(state: MemberState): boolean {
  return state === 'alive' || state === 'suspect';
}

/** One member as this member sees it. */
export interface SwimMemberInfo {
  readonly id: NodeId;
  /** The address the member advertises (host:port for the real adapters), learned by gossip. */
  readonly address: string;
  readonly state: MemberState;
  readonly incarnation: Incarnation;
  readonly age: MemberAge;
  /** The coordinator generation this member has claimed, if it ever was the coordinator. */
  readonly generation?: Generation;
  /** When this member last saw the state change (its own clock). */
  readonly stateChangedMs: number;
}

/** The emergent leader: the oldest live member, with the generation it claimed. */
export interface SwimLeader {
  readonly id: NodeId;
  readonly generation: Generation;
}

/** Why `leader()` changed. */
export type LeaderChangeReason =
  /** This member was admitted (or bootstrapped) and sees a coordinator for the first time. */
  | 'joined'
  /** The oldest member's claim of a new generation reached this member (it was pending). */
  | 'claimed'
  /** The coordinator was declared dead; the next oldest takes over. */
  | 'oldest-died'
  /** The coordinator left gracefully; the next oldest takes over. */
  | 'oldest-left'
  /** A member older than the coordinator became visible. */
  | 'joined-older'
  /** This side no longer satisfies the split-brain strategy: nobody acts here. */
  | 'partition-minority'
  /** This side satisfies the split-brain strategy again. */
  | 'quorum-regained'
  /** Two sides merged: the generation moved on, or this member rejoined the acting side. */
  | 'merge'
  /** This member left the cluster. */
  | 'self-left';

/** What happened, in the order it happened, for the runtime, users and dashboards. */
export type MembershipEvent =
  | {
    readonly kind: 'joined'; readonly atMs: number; readonly member: NodeId;
    readonly address: string; readonly age: MemberAge; readonly incarnation: Incarnation;
  }
  | {
    readonly kind: 'suspect'; readonly atMs: number; readonly member: NodeId;
    readonly incarnation: Incarnation; readonly by: NodeId;
  }
  /** A suspected member refuted the suspicion (its incarnation rose). */
  | {
    readonly kind: 'alive'; readonly atMs: number; readonly member: NodeId;
    readonly incarnation: Incarnation;
  }
  /** Declared dead; `confirmations` are the accusers this member counted (the evidence). */
  | {
    readonly kind: 'dead'; readonly atMs: number; readonly member: NodeId;
    readonly incarnation: Incarnation; readonly declaredBy: NodeId;
    readonly confirmations: readonly NodeId[];
  }
  | {
    readonly kind: 'left'; readonly atMs: number; readonly member: NodeId;
    readonly incarnation: Incarnation;
  }
  /** This member answered an accusation against itself by raising its incarnation. */
  | {
    readonly kind: 'refuted'; readonly atMs: number; readonly incarnation: Incarnation;
    readonly accusation: 'suspect' | 'dead' | 'left' | 'conflict'; readonly by: NodeId;
  }
  /**
   * This member had been on a side that could not act, learned the acting side declared it
   * dead, adopted that side's view and took a new (younger) age.
   */
  | {
    readonly kind: 'rejoined'; readonly atMs: number; readonly age: MemberAge;
    readonly incarnation: Incarnation; readonly via: NodeId;
  }
  /** A whole round over the seeds brought no admission; the member keeps trying. */
  | { readonly kind: 'join-failed'; readonly atMs: number; readonly seeds: readonly NodeId[] }
  | {
    readonly kind: 'leader-changed'; readonly atMs: number;
    readonly leader: SwimLeader | undefined; readonly previous: SwimLeader | undefined;
    readonly reason: LeaderChangeReason;
  };

/** Where this member is in its life. */
export type SwimPhase = 'idle' | 'joining' | 'member' | 'left';

/** Counters for dashboards, tests and the simulation's figures. */
export interface SwimCounters {
  probes: number;
  probesAckedDirect: number;
  probesAckedIndirect: number;
  probesFailed: number;
  pingReqsServed: number;
  nacksSent: number;
  refutations: number;
  messagesSent: number;
  bytesSent: number;
  /** Updates dropped as implausible, by reason (plausibility.ts). */
  rejectedOutOfRange: number;
  rejectedIncarnationJump: number;
  rejectedAgeJump: number;
  rejectedAgeDecrease: number;
  rejectedGenerationJump: number;
  rejectedOlderThanLeader: number;
  /** Joins not answered and strangers' news dropped beyond `admissionsPerSecondMax`. */
  rejectedAdmissionRate: number;
  /** Coordinator claims (push-pull, join-ack) ignored beyond the generation bound. */
  rejectedClaims: number;
  /**
   * Joins from strangers answered with a join-ack whose joiner never spoke again within two
   * join timeouts, so it never entered the view: forged joins, or a joiner that died at once.
   */
  joinsUnconfirmed: number;
  /**
   * Claims taken beyond the generation bound from the coordinator candidate's own answer to a
   * request of this member's (the generation ratchet, docs/gossip.md).
   */
  claimsCaughtUp: number;
}

export interface SwimStatus {
  readonly id: NodeId;
  readonly phase: SwimPhase;
  readonly age: MemberAge | undefined;
  readonly incarnation: Incarnation;
  /** Lifeguard's local health score, in [0, awarenessMax − 1]; 0 is healthy. */
  readonly awarenessScore: number;
  /** The probe interval and timeout in force now (scaled by the awareness score). */
  readonly probeIntervalMsNow: number;
  readonly probeTimeoutMsNow: number;
  readonly membersAlive: number;
  readonly membersSuspect: number;
  readonly membersDead: number;
  readonly membersLeft: number;
  /** The oldest live member in this member's view, whether or not it may act. */
  readonly oldestLive: NodeId | undefined;
  /** Whether this side satisfies the split-brain strategy. */
  readonly acting: boolean;
  readonly leader: SwimLeader | undefined;
  /** The highest coordinator generation this member has seen, and who claimed it. */
  readonly generationMax: Generation;
  readonly generationMaxBy: NodeId | undefined;
  /** Size of the last stable membership, and how many of it are live in this view. */
  readonly stableMembers: number;
  readonly stableMembersLive: number;
  /** Set while this side could not act: if the acting side declared it dead, it rejoins. */
  readonly minorityLatched: boolean;
  readonly gossipQueued: number;
  readonly counters: Readonly<SwimCounters>;
}
