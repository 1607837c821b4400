/**
 * One SWIM member (Das, Gupta, Motivala 2002) with the Lifeguard refinements (Dadgar et al.
 * 2017) and the emergent leader on top, as a pure state machine: inputs are `join`, `leave`,
 * `step` (a message arrived) and `tick` (time passed), each with the current time; outputs are
 * collected until `drain()`. Nothing here reads a clock, sets a timer or touches a socket.
 *
 * The runtime's duties, in order, after each input:
 *  1. `drain()` and send every message on its channel ('datagram' → `sendDatagram`, 'stream'
 *     → `send`), then publish the events;
 *  2. arm one timer for `nextDeadlineMs()` and call `tick(now)` when it fires (an early or
 *     late tick is harmless; none at all stalls the protocol).
 * Messages to unreachable peers are simply dropped: the protocol tolerates loss.
 *
 * Partitions and merges (the emergent leader's rules, beyond SWIM):
 * - a side that stops satisfying the split-brain strategy latches "minority": it names no
 *   leader and makes no claim until it has rejoined, or its view has been stable long enough;
 * - a member declared dead that learns it (by gossip it first fetches the full state of the
 *   member that told it) refutes with its old age as SWIM does, unless its side was latched,
 *   or the acting side moved on to a newer coordinator claim than the one it followed: then
 *   it rejoins, adopting that side's view and a new age above all seen (it becomes the
 *   youngest, so the majority's coordinator keeps its role);
 * - an acting side that moved on refuses to revive such a member with its old age and tells
 *   it so (`readmit` on the dead verdict); accusations from members it holds dead are
 *   ignored (they come from the far side of a healing partition);
 * - claims are ordered by (generation, claimer id); a member never claims over a newer claim
 *   by a live member without first asking it whether it counted this member dead, nor claims
 *   to fence off the revival of a member re-admitted elsewhere without first asking that member
 *   for its full state (its admitter's claim may be one this side has not heard of).
 * A partition shorter than the detection time (no side latched yet) still merges into one
 * coordinator with a higher generation, but which side's coordinator that is depends on who
 * learned what first.
 */
import { assert, assertNever } from '../assert.js';
import type { Generation, Incarnation, NodeId } from '../ids.js';
import { randomChance, randomInt, type Random } from '../random.js';
import { formatConfigProblems } from '../config.js';
import { Awareness } from './awareness.js';
import { BroadcastQueue } from './broadcast-queue.js';
import {
  swimPushPullIntervalMs, swimRetransmitLimit, swimStableAfterMs,
  swimSuspicionConfirmationsWanted, swimSuspicionMaxMs, swimSuspicionMinMs,
  validateSwimConfig, type SwimConfig,
} from './config.js';
import { MemberTable, isOlder, toUpdate, type MemberRecord } from './member-table.js';
import {
  estimateSwimMessageBytes, estimateUpdateBytes, swimMessageChannel,
  type CoordinatorClaim, type GossipUpdate, type JoinAckMessage, type PushPullMessage,
  type SwimChannel, type SwimMessage,
} from './messages.js';
import { sideMayAct, StableMembership, type AgedMember } from './oldest-leader.js';
import {
  AdmissionBudget, judgeUpdate, plausibleGeneration, SWIM_VALUE_MAX, type SwimRejection,
} from './plausibility.js';
import { Suspicion } from './suspicion.js';
import { SuspicionTimers } from './suspicion-timers.js';
import {
  isLiveState, memberAge, type LeaderChangeReason, type MemberAge, type MemberState,
  type MembershipEvent, type SwimCounters, type SwimLeader, type SwimMemberInfo,
  type SwimPhase, type SwimStatus,
} from './types.js';

export interface SwimMemberOptions {
  /** This member's id; peers address it by this id (the adapter maps ids to addresses). */
  readonly id: NodeId;
  /** The address this member advertises (host:port), gossiped to everyone. */
  readonly address: string;
  readonly config: SwimConfig;
  readonly random: Random;
}

/** A message to send, with the channel it must go on. */
export interface OutgoingSwimMessage {
  readonly to: NodeId;
  readonly message: SwimMessage;
  readonly channel: SwimChannel;
}

/** Everything produced since the previous `drain()`. */
export interface SwimReady {
  readonly messages: readonly OutgoingSwimMessage[];
  readonly events: readonly MembershipEvent[];
}

/** The verdict on a message that claims to come from the coordinator. */
export type CoordinatorCheck = 'ok' | 'stale-generation' | 'not-coordinator' | 'not-acting';

/** Most ping-reqs served at once; more are dropped (a relay is a favour, not a duty). */
export const SWIM_RELAYS_MAX = 256;
/** Most messages and events held before `drain()`: more means the runtime forgot to drain. */
export const SWIM_OUTBOX_MAX = 100_000;
/** Bytes kept free in a datagram for the message's own fields. */
const DATAGRAM_HEADER_BYTES = 64;
/**
 * Most dead members remembered for a reconnect of their own (see `wantReconnect`); more wait
 * for the next refusal. Small: each is one full-state exchange per reconnect period.
 */
const RECONNECTS_WANTED_MAX = 16;
/** The updates of a message with nothing to piggyback (shared: most probes carry none). */
const NO_UPDATES: readonly GossipUpdate[] = Object.freeze([]);

interface ProbeState {
  readonly target: NodeId;
  readonly seq: number;
  readonly timeoutAtMs: number;
  readonly endAtMs: number;
  indirect: boolean;
  nacksExpected: number;
  nacks: number;
}

interface Relay {
  readonly origin: NodeId;
  readonly originSeq: number;
  readonly nackAtMs: number;
  readonly expiresAtMs: number;
  nackSent: boolean;
}

interface JoinState {
  readonly seeds: readonly NodeId[];
  attempts: number;
  deadlineMs: number;
}

/** A dead claim older than every claim: `mustReadmit` holds while this side acts. */
const READMIT_ALWAYS: CoordinatorClaim = { generation: 0 as Generation };

/** A stranger this member answered with a join-ack, not yet heard from again (`onJoin`). */
interface PendingJoin {
  readonly address: string;
  readonly age: MemberAge;
  readonly incarnation: Incarnation;
  readonly expiresAtMs: number;
}

type UpdateSource = 'gossip' | 'push-pull';

export class SwimMember {
  readonly id: NodeId;
  private readonly address: string;
  private readonly config: SwimConfig;
  private readonly random: Random;
  private readonly table: MemberTable;
  private readonly broadcasts = new BroadcastQueue();
  private readonly awareness: Awareness;
  private readonly suspicions = new SuspicionTimers();
  private readonly stable = new StableMembership();
  private readonly agedLookup = (id: NodeId): AgedMember | undefined => this.agedMember(id);
  private readonly relays = new Map<number, Relay>();
  private phase: SwimPhase = 'idle';
  private self: MemberRecord | undefined;
  private incarnation = 0 as Incarnation;
  private seq = 0;
  private lastNowMs = -Infinity;
  private probe: ProbeState | undefined;
  private nextProbeAtMs = Infinity;
  private nextGossipAtMs = Infinity;
  private nextPushPullAtMs = Infinity;
  private nextReconnectAtMs = Infinity;
  private joining: JoinState | undefined;
  /** Strangers admitted by a join-ack and not yet heard from; insertion order is expiry order. */
  private readonly pendingJoins = new Map<NodeId, PendingJoin>();
  private rejoinAskedAtMs = -Infinity;
  /** The push-pull asked to catch up with a refused claim (see `catchUpWith`), until answered. */
  private catchUp: { readonly peer: NodeId; readonly nonce: number } | undefined;
  private catchUpAskedAtMs = -Infinity;
  private claimMax: CoordinatorClaim = { generation: 0 as Generation };
  private ageSeenMax = 0;
  /** When the live set will have been quiet for the stable-after time (if nothing changes). */
  private stableDueAtMs = 0;
  private stableDirty = false;
  private minorityLatched = false;
  private memberRevived = false;
  /**
   * A member held dead here that came back with a new age, admitted by another member: the
   * member to ask for its full state before the claim that fences its revival (see
   * `waitForRevived`), and when it was asked (undefined: not yet).
   */
  private revived: { readonly member: NodeId; askedAtMs: number | undefined } | undefined;
  /** The claim of the coordinator this member last followed (or made). */
  private followedClaim: CoordinatorClaim = { generation: 0 as Generation };
  /**
   * Dead members the next reconnects must try whatever the odds (see `reconnectNow`): members
   * held dead here that others still hold alive, which only a full state from here repairs.
   */
  private readonly reconnectWanted = new Set<NodeId>();
  /** Since when `maybeClaim` has been waiting to hear from a newer claimer. */
  private claimBlockedSinceMs: number | undefined;
  private leaderNow: SwimLeader | undefined;
  private leaderEver = false;
  private candidateNow: NodeId | undefined;
  private wasActing = false;
  private reasonHint: LeaderChangeReason | undefined;
  private outMessages: OutgoingSwimMessage[] = [];
  private outEvents: MembershipEvent[] = [];
  private readonly counters: SwimCounters = {
    probes: 0, probesAckedDirect: 0, probesAckedIndirect: 0, probesFailed: 0,
    pingReqsServed: 0, nacksSent: 0, refutations: 0, messagesSent: 0, bytesSent: 0,
    rejectedOutOfRange: 0, rejectedIncarnationJump: 0, rejectedAgeJump: 0, rejectedAgeDecrease: 0,
    rejectedGenerationJump: 0, rejectedOlderThanLeader: 0, rejectedAdmissionRate: 0,
    rejectedClaims: 0, joinsUnconfirmed: 0, claimsCaughtUp: 0,
  };
  private readonly admissions: AdmissionBudget;

  constructor(options: SwimMemberOptions) {
    const problems = validateSwimConfig(options.config);
    assert(problems.length === 0, () => `invalid SwimConfig:\n${formatConfigProblems(problems)}`);
    assert(options.id.length > 0, 'SwimMember needs a non-empty id');
    this.id = options.id;
    this.address = options.address;
    this.config = options.config;
    this.table = new MemberTable(options.id, options.random);
    this.awareness = new Awareness(options.config.awarenessMax);
    this.random = options.random;
    this.admissions = new AdmissionBudget(options.config.admissionsPerSecondMax,
      options.config.admissionsBurstMax);
  }

  // ---------------------------------------------------------------------------------------
  // Inputs

  /**
   * Joins through `seeds` (ids; the adapter knows their addresses), tried one at a time, each
   * for `joinTimeoutMs`, round after round until one admits this member. With no seed other
   * than itself the member bootstraps a new cluster and is its first (oldest) member.
   */
  join(seeds: readonly NodeId[], nowMs: number): void {
    this.enter(nowMs);
    assert(this.phase === 'idle', () => `join() called twice (phase ${this.phase})`);
    const others = [...new Set(seeds)].filter((seed) => seed !== this.id);
    if (others.length === 0) {
      this.bootstrap(nowMs);
    } else {
      this.phase = 'joining';
      this.joining = { seeds: others, attempts: 0, deadlineMs: nowMs };
      this.sendJoin(nowMs);
    }
    this.afterInput(nowMs);
  }

  /**
   * Leaves gracefully: announces `left` with a higher incarnation to a few members at once and
   * queues it for gossip. Keep calling `tick` until `nextDeadlineMs()` is undefined (the news
   * has been sent its retransmit limit) or for a few gossip intervals, then stop.
   */
  leave(nowMs: number): void {
    this.enter(nowMs);
    const self = this.self;
    if (this.phase !== 'member' || self === undefined) {
      this.phase = 'left';
      this.joining = undefined;
      this.afterInput(nowMs);
      return;
    }
    this.incarnation = (this.incarnation + 1) as Incarnation;
    self.incarnation = this.incarnation;
    this.changeState(self, 'left', nowMs, undefined, []);
    this.phase = 'left';
    this.probe = undefined;
    this.relays.clear();
    this.suspicions.clear();
    this.broadcasts.enqueue(toUpdate(self));
    // Tell a few members now rather than at the next gossip round.
    const fanout = Math.max(1, this.config.gossipFanout + this.config.indirectChecks);
    for (const target of this.table.sampleLive(fanout, [])) {
      this.send(target.id, { kind: 'gossip', updates: this.piggyback(undefined) });
    }
    this.afterInput(nowMs);
  }

  /** Time passed: runs every timer that is due at `nowMs`. */
  tick(nowMs: number): void {
    this.enter(nowMs);
    switch (this.phase) {
      case 'idle':
        return;
      case 'joining':
        this.tickJoin(nowMs);
        break;
      case 'member':
        this.tickProbe(nowMs);
        this.tickRelays(nowMs);
        this.tickSuspicions(nowMs);
        this.tickGossip(nowMs);
        this.tickAntiEntropy(nowMs);
        this.tickPendingJoins(nowMs);
        this.tickStable(nowMs);
        break;
      case 'left':
        this.tickGossip(nowMs);
        break;
      default:
        assertNever(this.phase, 'phase');
    }
    this.afterInput(nowMs);
  }

  /** A message from `from` arrived (already checked by `validateSwimMessage` if untrusted). */
  step(from: NodeId, message: SwimMessage, nowMs: number): void {
    this.enter(nowMs);
    if (from === this.id) return;
    switch (this.phase) {
      case 'idle':
        return;
      case 'joining':
        if (message.kind === 'join-ack') this.onJoinAck(from, message, nowMs);
        break;
      case 'left':
        // Still answer probes, so nobody suspects a member that is only on its way out.
        if (message.kind === 'ping' && message.target === this.id) {
          this.answerPing(from, message.seq);
        }
        break;
      case 'member':
        this.stepMember(from, message, nowMs);
        break;
      default:
        assertNever(this.phase, 'phase');
    }
    this.afterInput(nowMs);
  }

  // ---------------------------------------------------------------------------------------
  // Outputs and queries

  /** Whether `drain()` would return anything. */
  hasReady(): boolean {
    return this.outMessages.length > 0 || this.outEvents.length > 0;
  }

  /** Messages to send and events to publish since the last call (see the module comment). */
  drain(): SwimReady {
    const ready = { messages: this.outMessages, events: this.outEvents };
    this.outMessages = [];
    this.outEvents = [];
    return ready;
  }

  /** When `tick` must next be called; undefined when nothing is scheduled. */
  nextDeadlineMs(): number | undefined {
    let next: number;
    switch (this.phase) {
      case 'idle':
        return undefined;
      case 'joining':
        next = this.joining?.deadlineMs ?? Infinity;
        break;
      case 'left':
        next = this.gossipDue() ? this.nextGossipAtMs : Infinity;
        break;
      case 'member':
        next = this.memberDeadline();
        break;
      default:
        return assertNever(this.phase, 'phase');
    }
    return next === Infinity ? undefined : next;
  }

  /** Every member this member knows of (itself included), oldest first. */
  members(): SwimMemberInfo[] {
    const out: SwimMemberInfo[] = [];
    for (const record of this.table.values()) out.push(this.table.info(record));
    return out.sort((a, b) => (isOlder(a, b) ? -1 : isOlder(b, a) ? 1 : 0));
  }

  member(id: NodeId): SwimMemberInfo | undefined {
    const record = this.table.get(id);
    return record === undefined ? undefined : this.table.info(record);
  }

  /**
   * The coordinator: the oldest live member in this view, with the generation it claimed;
   * undefined while this side may not act (split-brain strategy), while the oldest member's
   * claim has not reached this member yet, and before joining or after leaving.
   */
  leader(): SwimLeader | undefined {
    return this.leaderNow;
  }

  /**
   * Whether to act on a message that `from` sent as coordinator of `generation` (the
   * generation clock): only the current coordinator at its current generation is obeyed; a
   * lower generation is stale (a deposed coordinator), whoever sends it.
   */
  checkCoordinator(from: NodeId, generation: Generation): CoordinatorCheck {
    // Claims are ordered by generation, then claimer id (two sides may claim one number).
    if (claimOrder({ generation, by: from }, this.claimMax) < 0) return 'stale-generation';
    const leader = this.leaderNow;
    if (leader === undefined) return this.phase === 'member' && this.isActing()
      ? 'not-coordinator' : 'not-acting';
    if (leader.id !== from || leader.generation !== generation) return 'not-coordinator';
    return 'ok';
  }

  status(): SwimStatus {
    const oldest = this.phase === 'member' ? this.table.oldestLive() : undefined;
    return {
      id: this.id,
      phase: this.phase,
      age: this.self?.age,
      incarnation: this.incarnation,
      awarenessScore: this.awareness.score,
      probeIntervalMsNow: this.awareness.scale(this.config.probeIntervalMs),
      probeTimeoutMsNow: this.awareness.scale(this.config.probeTimeoutMs),
      membersAlive: this.table.count('alive'),
      membersSuspect: this.table.count('suspect'),
      membersDead: this.table.count('dead'),
      membersLeft: this.table.count('left'),
      oldestLive: oldest?.id,
      acting: this.phase === 'member' && this.isActing(),
      leader: this.leaderNow,
      generationMax: this.claimMax.generation,
      generationMaxBy: this.claimMax.by,
      stableMembers: this.stable.size,
      stableMembersLive: this.stable.liveCount,
      minorityLatched: this.minorityLatched,
      gossipQueued: this.broadcasts.size,
      counters: { ...this.counters },
    };
  }

  // ---------------------------------------------------------------------------------------
  // Joining

  private bootstrap(nowMs: number): void {
    this.becomeMember(memberAge(this.ageSeenMax + 1), 1 as Incarnation, nowMs);
    this.stable.reset(this.liveMembers());
  }

  private becomeMember(age: MemberAge, incarnation: Incarnation, nowMs: number): void {
    this.phase = 'member';
    this.joining = undefined;
    this.incarnation = incarnation;
    this.noteAge(age);
    const self = this.table.add({
      id: this.id, address: this.address, state: 'alive', incarnation, age,
      generation: undefined, by: undefined, stateChangedMs: nowMs,
    });
    this.self = self;
    this.viewChanged(nowMs);
    this.emit({
      kind: 'joined', atMs: nowMs, member: this.id, address: this.address, age, incarnation,
    });
    this.broadcasts.enqueue(toUpdate(self));
    const c = this.config;
    // Random phases, so that members started together do not probe in lockstep.
    this.nextProbeAtMs = nowMs + randomInt(this.random, 0, Math.max(1, c.probeIntervalMs));
    this.nextGossipAtMs = nowMs + c.gossipIntervalMs;
    this.nextPushPullAtMs = nowMs + c.pushPullIntervalMs;
    this.nextReconnectAtMs = nowMs + c.reconnectIntervalMs;
  }

  private sendJoin(nowMs: number): void {
    const joining = this.joining;
    assert(joining !== undefined, 'sendJoin while not joining');
    const seed = joining.seeds[joining.attempts % joining.seeds.length] as NodeId;
    joining.attempts++;
    joining.deadlineMs = nowMs + this.config.joinTimeoutMs;
    this.send(seed, { kind: 'join', address: this.address });
  }

  private tickJoin(nowMs: number): void {
    const joining = this.joining;
    if (joining === undefined || nowMs < joining.deadlineMs) return;
    if (joining.attempts % joining.seeds.length === 0) {
      this.emit({ kind: 'join-failed', atMs: nowMs, seeds: joining.seeds });
    }
    this.sendJoin(nowMs);
  }

  /** As admitter: a (re)started process asks to join; it gets an age above all seen. */
  private onJoin(from: NodeId, address: string, nowMs: number): void {
    if (this.table.get(from) === undefined) {
      this.answerStranger(from, address, nowMs);
      return;
    }
    const age = memberAge(this.ageSeenMax + 1);
    this.noteAge(age);
    let record = this.table.get(from);
    const incarnation = ((record?.incarnation ?? 0) + 1) as Incarnation;
    if (record === undefined) {
      record = this.addRecord({
        member: from, state: 'alive', incarnation, age, address,
      }, nowMs);
    } else {
      const wasLive = isLiveState(record.state);
      if (record.state === 'dead') this.memberRevived = true;
      record.incarnation = incarnation;
      record.address = address;
      record.generation = undefined;
      this.setAge(record, age);
      this.changeState(record, 'alive', nowMs, undefined, []);
      // A process that restarted before anyone noticed: still a new admission.
      if (wasLive) this.emitJoined(record, nowMs);
    }
    this.broadcasts.enqueue(toUpdate(record));
    this.sendJoinAck(from, age, incarnation);
  }

  private sendJoinAck(to: NodeId, age: MemberAge, incarnation: Incarnation): void {
    const ack: JoinAckMessage = {
      kind: 'join-ack', age, incarnation, claim: this.claimMax, members: this.snapshot(),
      stable: this.stable.members(),
    };
    this.send(to, ack);
  }

  /**
   * A join from a stranger is answered (join-ack, within the admission budget), but the
   * stranger enters this member's view only once it speaks again (`confirmJoin`): an admitted
   * joiner at once sends its own record back (`onJoinAck`), while a forged join, from an id
   * nobody answers at, never does. Before, an admitted stranger counted in the stable
   * membership at once, so a flood of forged joins within the budget, once declared dead, left
   * the genuine members no majority of it; no side could act, and a side that may not act
   * never renews the set: leaderless for good (docs/gossip.md, "Bounds on what a message may
   * say"; replay: `conclave sim --scenario gossip --seed 1 --seeds 1 --members 8
   * --join-flood 12`). Nothing shrinks the set, so no minority can come to look like a
   * majority; the joiner is only announced one message later, as if it had joined a round trip
   * later. A retried join while pending gets the same admission again, without a new token.
   */
  private answerStranger(from: NodeId, address: string, nowMs: number): void {
    let pending = this.pendingJoins.get(from);
    if (pending === undefined) {
      if (this.pendingJoins.size >= this.config.admissionsBurstMax
        || !this.admissions.take(nowMs)) {
        this.counters.rejectedAdmissionRate++;
        return;
      }
      const age = memberAge(this.ageSeenMax + 1);
      this.noteAge(age);
      pending = { address, age, incarnation: 1 as Incarnation, expiresAtMs: 0 };
    }
    this.pendingJoins.delete(from);
    this.pendingJoins.set(from, {
      ...pending, address, expiresAtMs: nowMs + 2 * this.config.joinTimeoutMs,
    });
    this.sendJoinAck(from, pending.age, pending.incarnation);
  }

  /** Any message but a join from a stranger answered by `answerStranger`: admit it now. */
  private confirmJoin(from: NodeId, nowMs: number): void {
    const pending = this.pendingJoins.get(from);
    if (pending === undefined) return;
    this.pendingJoins.delete(from);
    if (this.table.get(from) !== undefined) return; // learned meanwhile, from others
    const record = this.addRecord({
      member: from, state: 'alive', incarnation: pending.incarnation, age: pending.age,
      address: pending.address,
    }, nowMs);
    this.broadcasts.enqueue(toUpdate(record));
  }

  /** Forgets the strangers that never spoke again within two join timeouts (counted). */
  private tickPendingJoins(nowMs: number): void {
    for (const [id, pending] of this.pendingJoins) {
      if (pending.expiresAtMs > nowMs) return;
      this.pendingJoins.delete(id);
      this.counters.joinsUnconfirmed++;
    }
  }

  private onJoinAck(from: NodeId, joinAck: JoinAckMessage, nowMs: number): void {
    // An admission is taken as the admitter's word (this member knows nothing yet), within the
    // absolute bounds only, so that no number it hands out leaves the safe integers.
    if (joinAck.age > SWIM_VALUE_MAX || joinAck.incarnation > SWIM_VALUE_MAX
      || joinAck.claim.generation > SWIM_VALUE_MAX) {
      this.counters.rejectedOutOfRange++;
      return;
    }
    const message = { ...joinAck, members: joinAck.members.filter((u) =>
      u.incarnation <= SWIM_VALUE_MAX && u.age <= SWIM_VALUE_MAX
      && (u.generation ?? 0) <= SWIM_VALUE_MAX) };
    for (const update of message.members) this.noteAge(update.age);
    this.becomeMember(message.age, message.incarnation, nowMs);
    this.noteClaim(message.claim);
    for (const update of message.members) {
      if (update.member !== this.id) this.adoptRecord(update, from, nowMs);
    }
    // The admitter's stable set, so a member admitted into a minority knows it.
    const stable: AgedMember[] = [];
    for (const id of message.stable) {
      stable.push(this.agedMember(id) ?? { id, age: Number.MAX_SAFE_INTEGER, live: false });
    }
    this.stable.reset(stable);
    const self = this.self as MemberRecord;
    // The admitter counts this member only once it hears from it again (`confirmJoin`): say
    // so at once; as it would have, this member counts itself if the admitter's side acts.
    this.absorbIntoStable(self);
    this.send(from, { kind: 'gossip', updates: [toUpdate(self)] });
  }

  // ---------------------------------------------------------------------------------------
  // Messages

  private stepMember(from: NodeId, message: SwimMessage, nowMs: number): void {
    if (message.kind !== 'join' && this.pendingJoins.size > 0) this.confirmJoin(from, nowMs);
    switch (message.kind) {
      case 'ping':
        this.applyUpdates(from, message.updates, nowMs);
        // A ping meant for another process that used to live at this address is ignored.
        if (message.target === this.id) this.answerPing(from, message.seq);
        return;
      case 'ack':
        this.applyUpdates(from, message.updates, nowMs);
        this.onAck(from, message.seq, nowMs);
        return;
      case 'ping-req':
        this.applyUpdates(from, message.updates, nowMs);
        this.onPingReq(from, message.seq, message.target, nowMs);
        return;
      case 'nack':
        this.applyUpdates(from, message.updates, nowMs);
        if (this.probe !== undefined && this.probe.seq === message.seq) this.probe.nacks++;
        return;
      case 'gossip':
        this.applyUpdates(from, message.updates, nowMs);
        return;
      case 'join':
        this.onJoin(from, message.address, nowMs);
        return;
      case 'join-ack':
        return; // A second seed answered late: this member is already admitted.
      case 'push-pull':
        this.onPushPull(from, message, nowMs);
        return;
      default:
        assertNever(message, 'swim message');
    }
  }

  private answerPing(from: NodeId, seq: number): void {
    this.send(from, { kind: 'ack', seq, updates: this.probeUpdates(undefined) });
  }

  private onAck(from: NodeId, seq: number, nowMs: number): void {
    const probe = this.probe;
    if (probe !== undefined && probe.seq === seq) {
      const direct = from === probe.target;
      // Lifeguard: only a timely direct ack is good news about our own health.
      if (this.config.lifeguard && direct && nowMs < probe.timeoutAtMs) {
        this.awareness.applyDelta(-1);
      }
      if (direct) this.counters.probesAckedDirect++;
      else this.counters.probesAckedIndirect++;
      this.probe = undefined;
      return;
    }
    const relay = this.relays.get(seq);
    if (relay !== undefined) {
      // SWIM §3.1: relay the target's ack to the member that asked.
      this.relays.delete(seq);
      this.send(relay.origin, {
        kind: 'ack', seq: relay.originSeq, updates: this.probeUpdates(undefined),
      });
    }
  }

  private onPingReq(from: NodeId, originSeq: number, target: NodeId, nowMs: number): void {
    if (target === this.id) {
      this.send(from, { kind: 'ack', seq: originSeq, updates: this.probeUpdates(undefined) });
      return;
    }
    if (this.relays.size >= SWIM_RELAYS_MAX) return;
    const seq = ++this.seq;
    this.relays.set(seq, {
      origin: from, originSeq,
      // Half the probe timeout, so that the nack reaches the prober before its period ends:
      // it sent the ping-req a probe timeout into a period at least twice that long. (A nack
      // sent after a whole probe timeout arrived after the period, and was never counted.)
      nackAtMs: nowMs + this.config.probeTimeoutMs / 2,
      expiresAtMs: nowMs + this.config.probeIntervalMs,
      nackSent: false,
    });
    this.counters.pingReqsServed++;
    const updates = this.probeUpdates(this.buddy(target));
    this.send(target, { kind: 'ping', seq, target, updates });
  }

  private onPushPull(from: NodeId, pushPull: PushPullMessage, nowMs: number): void {
    const answered = this.takeCaughtUpClaim(from, pushPull);
    const message = this.plausiblePushPull(pushPull, answered ? from : undefined, nowMs);
    const aboutMe = message.members.find((u) => u.member === this.id);
    // A verdict that demands re-admission stands whatever our incarnation: the sender refuses
    // every revival of ours that keeps this age (after a rejoin, the age is new).
    const readmit = aboutMe?.state === 'dead' && aboutMe.readmit === true
      && aboutMe.age === this.self?.age;
    const declaredDead = aboutMe !== undefined && aboutMe.state === 'dead'
      && (aboutMe.incarnation >= this.incarnation || readmit);
    if (declaredDead && (readmit || this.mustRejoin(message))) {
      this.rejoin(from, message, nowMs);
    } else {
      this.mergeState(from, message.members, nowMs, 'push-pull');
      // The newer claimer answered and did not exclude us: claiming above it is legitimate.
      if (from === message.claim.by) this.follow(message.claim);
    }
    this.noteClaim(message.claim);
    // The revived member answered: its admitter's claim, if newer, is now ours to see.
    if (message.reply && this.revived?.member === from) this.revived = undefined;
    if (!message.reply) this.sendPushPull(from, true, pushPull.nonce);
  }

  /**
   * The generation ratchet (docs/gossip.md): a forged claim just past the step, computed from
   * one member's view, can arrive after an honest claim raised that member's highest claim; it
   * is taken there (and at the candidate, which then claims one above it) and is beyond the
   * bound of every member that had not yet heard the honest claim. Those would refuse the
   * candidate's claims for good: the bound is measured against what each member knows, and
   * nothing else raised what they know. So a member that refuses a claim of its coordinator
   * candidate as beyond the bound asks that candidate for its full state, with a nonce, at
   * most once a join timeout; the reply that echoes the nonce comes from the candidate's real
   * address (a forger without the keyring sends under any id, but cannot see a request made to
   * another address), and its claim is taken whatever the step, within `SWIM_VALUE_MAX`. What
   * a real member holds was itself raised by bounded steps only, so the bound still limits how
   * far one forged message moves the cluster; it no longer splits it.
   *
   * The same holds for incarnations: a member two forged accusations away refutes twice, each
   * time within the step of peers that heard the first refutation, and beyond the step of one
   * that had not (`sim --scenario gossip --members 100 --hostile`, seed 37: a member held dead
   * at incarnation 1 refuted at 65,541, and its refutations, its rejoin included, were refused
   * there for good). So a refused refutation of a member this view holds suspect or dead asks
   * that member, and its own record in the answer is taken whatever the step.
   */
  private catchUpWith(peer: NodeId | undefined, nowMs: number): void {
    if (peer === undefined || peer === this.id || this.phase !== 'member') return;
    if (nowMs - this.catchUpAskedAtMs < this.config.joinTimeoutMs) return;
    this.catchUpAskedAtMs = nowMs;
    const nonce = randomInt(this.random, 1, 2 ** 32);
    this.catchUp = { peer, nonce };
    this.sendPushPull(peer, false, nonce);
  }

  /** A refused update that may be a member's real state past the bound: see `catchUpWith`. */
  private catchUpAfter(update: GossipUpdate, rejection: SwimRejection, nowMs: number): void {
    if (rejection === 'generation-jump') {
      if (this.table.oldestLive()?.id === update.member) this.catchUpWith(update.member, nowMs);
    } else if (rejection === 'incarnation-jump' && update.state === 'alive') {
      const record = this.table.get(update.member);
      if (record !== undefined && (record.state === 'suspect' || record.state === 'dead')) {
        this.catchUpWith(update.member, nowMs);
      }
    }
  }

  /**
   * Whether `pushPull` is the answer to `catchUpWith`'s request; if so, its claim is taken
   * whatever the step.
   */
  private takeCaughtUpClaim(from: NodeId, pushPull: PushPullMessage): boolean {
    const asked = this.catchUp;
    if (!pushPull.reply || asked === undefined || asked.peer !== from
      || pushPull.nonce !== asked.nonce) return false;
    this.catchUp = undefined;
    if (pushPull.claim.generation > SWIM_VALUE_MAX
      || claimOrder(pushPull.claim, this.claimMax) <= 0) return true;
    if (!plausibleGeneration(pushPull.claim.generation, this.claimMax.generation)) {
      this.counters.claimsCaughtUp++;
    }
    this.noteClaim(pushPull.claim);
    return true;
  }

  /**
   * The push-pull without its implausible records (counted), and with a claim out of reach
   * replaced by ours (so that it neither raises `claimMax` nor changes whom we follow).
   */
  private plausiblePushPull(
    message: PushPullMessage, answeredBy: NodeId | undefined, nowMs: number,
  ): PushPullMessage {
    // The answer to a catch-up speaks for its sender: its own record past the step is taken.
    const judge = (u: GossipUpdate): SwimRejection | undefined => {
      const rejection = this.judge(u);
      return rejection === 'incarnation-jump' && u.member === answeredBy ? undefined : rejection;
    };
    let members = message.members;
    for (let i = 0; i < members.length; i++) {
      if (judge(members[i] as GossipUpdate) === undefined) continue;
      members = members.filter((u) => judge(u) === undefined);
      this.rejectAll(message.members.filter((u) => judge(u) !== undefined), nowMs);
      break;
    }
    if (plausibleGeneration(message.claim.generation, this.claimMax.generation)) {
      return members === message.members ? message : { ...message, members };
    }
    this.counters.rejectedClaims++;
    if (message.claim.by !== undefined && this.table.oldestLive()?.id === message.claim.by) {
      this.catchUpWith(message.claim.by, nowMs);
    }
    return { ...message, members, claim: this.claimMax };
  }

  private rejectAll(updates: readonly GossipUpdate[], nowMs: number): void {
    for (const update of updates) {
      const rejection = this.judge(update) as SwimRejection;
      this.countRejection(rejection);
      this.catchUpAfter(update, rejection, nowMs);
    }
  }

  /**
   * Whether this member, declared dead in `message`, must rejoin younger rather than refute
   * with its old age: when its own side could not act (latched in the minority), or when the
   * sender's side acts and moved on to a coordinator claim newer than the one this member
   * followed, i.e. it chose a coordinator without this member.
   */
  private mustRejoin(message: PushPullMessage): boolean {
    if (this.minorityLatched) return true;
    return message.acting && message.claim.by !== this.id
      && claimOrder(message.claim, this.followedClaim) > 0;
  }

  private follow(claim: CoordinatorClaim): void {
    if (claimOrder(claim, this.followedClaim) > 0) this.followedClaim = claim;
  }

  private sendPushPull(to: NodeId, reply: boolean, nonce?: number): void {
    const members = this.snapshot();
    const acting = this.isActing();
    const message: PushPullMessage = { kind: 'push-pull', reply, acting, claim: this.claimMax,
      members };
    this.send(to, nonce === undefined ? message : { ...message, nonce });
  }

  // ---------------------------------------------------------------------------------------
  // Membership updates

  private applyUpdates(from: NodeId, updates: readonly GossipUpdate[], nowMs: number): void {
    for (const update of updates) this.applyUpdate(from, update, nowMs, 'gossip');
  }

  /**
   * Full state from push-pull. Accusations are applied before resurrections, so that news
   * from a member this view holds dead (the far side of a healing partition) is judged by
   * this view, not by what the same message is about to say about its sender.
   */
  private mergeState(
    from: NodeId, members: readonly GossipUpdate[], nowMs: number, source: UpdateSource,
  ): void {
    for (const update of members) {
      if (update.state !== 'alive') this.applyUpdate(from, update, nowMs, source);
    }
    for (const update of members) {
      if (update.state === 'alive') this.applyUpdate(from, update, nowMs, source);
    }
  }

  private applyUpdate(
    from: NodeId, update: GossipUpdate, nowMs: number, source: UpdateSource,
  ): void {
    const rejection = source === 'push-pull' ? undefined : this.judge(update);
    if (rejection !== undefined) {
      this.countRejection(rejection);
      this.catchUpAfter(update, rejection, nowMs);
      return;
    }
    this.noteAge(update.age);
    if (update.generation !== undefined) {
      this.noteClaim({ generation: update.generation, by: update.member });
    }
    if (update.member === this.id) {
      this.onNewsAboutSelf(from, update, nowMs, source);
      return;
    }
    const record = this.table.get(update.member);
    switch (update.state) {
      case 'alive':
        this.applyAlive(record, update, nowMs);
        return;
      case 'suspect':
        if (record !== undefined && this.trusts(update.by)) {
          this.accuse(record, update.incarnation, update.by ?? from, nowMs);
        }
        return;
      case 'dead':
        this.applyDead(record, update, from, nowMs, source);
        return;
      case 'left':
        this.applyLeft(record, update, nowMs);
        return;
      default:
        assertNever(update.state, 'member state');
    }
  }

  /**
   * Accusations from a member this view holds dead are ignored: it is on the far side of a
   * partition that is healing, and its verdicts are about a view we do not share. The accused
   * answers for itself; a member that was really gone is detected here on our own terms.
   */
  private trusts(accuser: NodeId | undefined): boolean {
    if (accuser === undefined || accuser === this.id) return true;
    const record = this.table.get(accuser);
    return record === undefined || record.state !== 'dead';
  }

  private applyAlive(record: MemberRecord | undefined, update: GossipUpdate, nowMs: number): void {
    if (record === undefined) {
      // A stranger answered by a join-ack paid its admission then.
      if (!this.pendingJoins.delete(update.member) && !this.admissions.take(nowMs)) {
        this.counters.rejectedAdmissionRate++;
        return;
      }
      const added = this.addRecord(update, nowMs);
      this.broadcasts.enqueue(toUpdate(added));
      return;
    }
    // SWIM §4.2: only a higher incarnation overrides; at equal ones suspect and dead win.
    if (update.incarnation <= record.incarnation && !this.equalRefutes(record, update)) return;
    if (record.state === 'dead') {
      if (update.age === record.age && this.mustReadmit(record)) {
        // Tell it again that it is dead, and that it must rejoin younger: by gossip, and, as
        // gossip stops reaching the dead after `gossipToTheDeadMs`, by the next reconnect.
        this.broadcasts.enqueue({ ...toUpdate(record), readmit: true });
        this.wantReconnect(record.id);
        return;
      }
      // Back with a new age: admitted again (restarted, or rejoined after a partition); the
      // coordinator moves the generation on (see `maybeClaim`).
      if (update.age !== record.age) {
        this.memberRevived = true;
        this.revived ??= { member: record.id, askedAtMs: undefined };
      }
    }
    record.incarnation = update.incarnation;
    if (update.address !== undefined) record.address = update.address;
    record.generation = update.generation;
    record.by = undefined;
    this.setAge(record, update.age);
    if (record.state === 'alive') {
      this.broadcasts.enqueue(toUpdate(record));
      return;
    }
    this.changeState(record, 'alive', nowMs, undefined, []);
    this.broadcasts.enqueue(toUpdate(record));
  }

  /**
   * MUTANT (test-only) `aliveAtEqualIncarnation`: an `alive` at the incarnation of a suspicion
   * or a death verdict counts as a refutation of it.
   */
  private equalRefutes(record: MemberRecord, update: GossipUpdate): boolean {
    return this.config.mutants.aliveAtEqualIncarnation && record.state !== 'alive'
      && record.state !== 'left' && update.incarnation === record.incarnation;
  }

  /**
   * Whether a member declared dead must come back through re-admission (a new, younger age)
   * rather than by refuting: when this side acts and has moved on to a coordinator claim
   * newer than the one in force when the member was declared dead. Otherwise a coordinator
   * that stalled for a while (or the far side of a partition) would take its role back with
   * its old age as soon as it answered stale suspicions.
   */
  private mustReadmit(record: MemberRecord): boolean {
    const claim = record.deadClaim;
    return claim !== undefined && this.claimMax.by !== record.id
      && claimOrder(this.claimMax, claim) > 0 && this.isActing();
  }

  private applyDead(
    record: MemberRecord | undefined, update: GossipUpdate, from: NodeId, nowMs: number,
    source: UpdateSource,
  ): void {
    if (record === undefined || !isLiveState(record.state)) return;
    if (update.incarnation < record.incarnation || !this.trusts(update.by)) return;
    const accuser = update.by ?? from;
    if (source === 'push-pull') {
      // memberlist: a dead verdict in full state only makes us suspect, giving the member
      // time to refute (full state is old news more often than gossip is).
      this.accuse(record, update.incarnation, accuser, nowMs);
      return;
    }
    const evidence = this.suspicions.get(record.id)?.evidence ?? [];
    record.incarnation = update.incarnation;
    record.by = accuser;
    this.changeState(record, 'dead', nowMs, accuser, evidence);
    this.broadcasts.enqueue(toUpdate(record));
  }

  private applyLeft(record: MemberRecord | undefined, update: GossipUpdate, nowMs: number): void {
    if (record === undefined || record.state === 'left') return;
    if (update.incarnation < record.incarnation) return;
    record.incarnation = update.incarnation;
    record.by = undefined;
    this.changeState(record, 'left', nowMs, undefined, []);
    this.broadcasts.enqueue(toUpdate(record));
  }

  /**
   * Suspects `record` on `accuser`'s word (SWIM §4.2), or counts a confirmation of an existing
   * suspicion (Lifeguard §4.2), which is gossiped on so that others shorten their timers too.
   */
  private accuse(
    record: MemberRecord, incarnation: Incarnation, accuser: NodeId, nowMs: number,
  ): void {
    if (!isLiveState(record.state) || incarnation < record.incarnation) return;
    if (record.state === 'suspect' && incarnation === record.incarnation) {
      if (this.suspicions.confirm(record.id, accuser)) {
        this.broadcasts.enqueue({ ...toUpdate(record), by: accuser });
      }
      return;
    }
    const wasSuspect = record.state === 'suspect';
    record.incarnation = incarnation;
    record.by = accuser;
    if (wasSuspect) {
      this.emit({ kind: 'suspect', atMs: nowMs, member: record.id, incarnation, by: accuser });
    } else {
      this.changeState(record, 'suspect', nowMs, accuser, []);
    }
    this.startSuspicion(record, accuser, nowMs);
    this.broadcasts.enqueue(toUpdate(record));
  }

  /**
   * A failed probe in which not one helper answered, not even with a nack: the evidence is
   * against this member's own messages (a latency spike, a loss burst, a starved process, the
   * far side of a partition), not against the target (Lifeguard §4.1's reasoning, taken one
   * step further). This member suspects the target on its own (its timer starts at
   * suspicionMax) and tells the target, so that it refutes, but does not gossip the
   * accusation: others neither adopt it nor count it as a confirmation. Without this, a
   * latency spike over the probe timeout made every member accuse its target in the same
   * period, and N accusations confirmed by each other outran their refutations
   * (docs/gossip.md, "Storms"). A target that is really gone still dies: by this timer, or by
   * the first prober whose helpers do answer.
   */
  private suspectQuietly(record: MemberRecord, nowMs: number): void {
    if (record.state !== 'alive') return;
    record.by = this.id;
    this.changeState(record, 'suspect', nowMs, this.id, []);
    this.startSuspicion(record, this.id, nowMs);
    this.send(record.id, { kind: 'gossip', updates: [toUpdate(record)] });
  }

  private startSuspicion(record: MemberRecord, accuser: NodeId, nowMs: number): void {
    const n = this.table.liveCount;
    const c = this.config;
    const wanted = c.lifeguard ? swimSuspicionConfirmationsWanted(c, n) : 0;
    const suspicion = new Suspicion(
      accuser, wanted, swimSuspicionMinMs(c, n), swimSuspicionMaxMs(c, n), nowMs,
    );
    this.suspicions.set(record.id, suspicion);
  }

  /** News about this member itself: SWIM §4.2, a member refutes by raising its incarnation. */
  private onNewsAboutSelf(
    from: NodeId, update: GossipUpdate, nowMs: number, source: UpdateSource,
  ): void {
    const self = this.self;
    assert(self !== undefined, 'news about self before admission');
    if (update.state === 'dead' && update.readmit === true && update.age === self.age
      && source === 'gossip') {
      this.askToRejoin(from, nowMs);
      return;
    }
    if (update.incarnation < this.incarnation) return;
    const by = update.by ?? from;
    switch (update.state) {
      case 'alive':
        if (update.incarnation === this.incarnation && update.age === self.age
          && update.generation === self.generation) return;
        this.refute('conflict', by, update.incarnation, nowMs);
        return;
      case 'dead':
        // A death verdict arriving by gossip is answered after seeing the full state of the
        // member that passed it on (it holds the verdict and just reached us): `onPushPull`
        // then refutes, or rejoins younger (see `mustRejoin`).
        if (source === 'gossip') this.askToRejoin(from, nowMs);
        else this.refute('dead', by, update.incarnation, nowMs);
        return;
      case 'suspect':
      case 'left':
        // A member of a side that could not act does not answer the far side with its old
        // age: it asks for the full state of the member that passed the news on first.
        if (this.minorityLatched && !this.trusts(by)) this.askToRejoin(from, nowMs);
        else this.refute(update.state, by, update.incarnation, nowMs);
        return;
      default:
        assertNever(update.state, 'member state');
    }
  }

  private refute(
    accusation: 'suspect' | 'dead' | 'left' | 'conflict', by: NodeId, atLeast: Incarnation,
    nowMs: number,
  ): void {
    const self = this.self as MemberRecord;
    this.incarnation = (Math.max(this.incarnation, atLeast) + 1) as Incarnation;
    self.incarnation = this.incarnation;
    // Lifeguard: being suspected hints that we are the slow one.
    if (this.config.lifeguard && accusation !== 'conflict') this.awareness.applyDelta(1);
    this.counters.refutations++;
    this.emit({ kind: 'refuted', atMs: nowMs, incarnation: this.incarnation, accusation, by });
    this.broadcasts.enqueue(toUpdate(self));
  }

  private askToRejoin(peer: NodeId, nowMs: number): void {
    if (nowMs - this.rejoinAskedAtMs < this.config.joinTimeoutMs) return;
    this.rejoinAskedAtMs = nowMs;
    this.sendPushPull(peer, false);
  }

  /**
   * Merge after a partition: this member was on a side that could not act, and the acting side
   * declared it dead. It adopts that side's view wholesale and takes a new age above all seen,
   * so it rejoins as the youngest and never takes the coordinator role back.
   */
  private rejoin(from: NodeId, message: PushPullMessage, nowMs: number): void {
    const self = this.self as MemberRecord;
    const members = message.members;
    // The acting side's claim first, so that the dead records adopted below carry its
    // verdicts on re-admission (`adoptRecord`), not this member's older claim.
    this.noteClaim(message.claim);
    for (const update of members) this.noteAge(update.age);
    let incarnation: number = this.incarnation;
    for (const update of members) {
      if (update.member === this.id) incarnation = Math.max(incarnation, update.incarnation);
    }
    const age = memberAge(this.ageSeenMax + 1);
    // Announced before the adopted view's events, so that observers can tell the records it
    // takes over wholesale (which may revive a suspect at its own incarnation) from refutations.
    this.emit({
      kind: 'rejoined', atMs: nowMs, age, incarnation: (incarnation + 1) as Incarnation, via: from,
    });
    for (const update of members) {
      if (update.member !== this.id) this.adoptRecord(update, from, nowMs);
    }
    this.noteAge(age);
    this.incarnation = (incarnation + 1) as Incarnation;
    self.incarnation = this.incarnation;
    self.generation = undefined;
    this.setAge(self, age);
    this.minorityLatched = false;
    this.reasonHint = 'merge';
    this.broadcasts.enqueue(toUpdate(self));
  }

  /**
   * Takes `update` as the truth about its member (join-ack and rejoin only), unless this view
   * knows the member at a higher incarnation: that is the member's own later word (a
   * refutation the sender has not heard yet), and the sender's older record must not undo it.
   * Seen in `sim --scenario gossip --members 100 --seed 13 --hostile`: rejoiners adopted a
   * view that still held refuted members dead, and passed those deaths on.
   */
  private adoptRecord(update: GossipUpdate, from: NodeId, nowMs: number): void {
    const record = this.table.get(update.member);
    if (record !== undefined && record.incarnation > update.incarnation) return;
    if (record === undefined) {
      this.addRecord(update, nowMs);
    } else {
      record.incarnation = update.incarnation;
      if (update.address !== undefined) record.address = update.address;
      record.generation = update.generation;
      record.by = update.by;
      this.setAge(record, update.age);
      this.changeState(record, update.state, nowMs, update.by ?? from, []);
    }
    const adopted = this.table.get(update.member) as MemberRecord;
    // The sender's verdict on re-admission, as its snapshot states it (`snapshot`): a member
    // it would take back by refutation is taken back here too, and one it makes rejoin younger
    // is made to here too. Before, a rejoiner kept its own claim of when it had held the member
    // dead (or the claim before the acting side's), so, once it had taken the acting side's
    // newer claim, it demanded re-admission where its peers took refutations, and held some
    // of the minority dead until they rejoined younger (`sim --scenario gossip --members 100
    // --hostile`, seeds 13 and 14: `view-agreement`).
    if (adopted.state === 'dead') {
      adopted.deadClaim = update.readmit === true ? READMIT_ALWAYS : this.claimMax;
    }
    if (adopted.state === 'suspect' && !this.suspicions.has(adopted.id)) {
      this.startSuspicion(adopted, update.by ?? from, nowMs);
    }
  }

  private addRecord(update: GossipUpdate, nowMs: number): MemberRecord {
    const record = this.table.add({
      id: update.member, address: update.address ?? '', state: update.state,
      incarnation: update.incarnation, age: update.age, generation: update.generation,
      by: update.by, stateChangedMs: nowMs,
    });
    if (isLiveState(record.state)) {
      this.viewChanged(nowMs);
      this.absorbIntoStable(record);
      this.emitJoined(record, nowMs);
    }
    return record;
  }

  /**
   * A member that joins or returns counts in the stable membership at once, while this side
   * may act: a live addition cannot help a minority, and without it a cluster that grew from
   * one member would hang on that member until the view stays quiet for the stable-after time.
   */
  private absorbIntoStable(record: MemberRecord): void {
    if (this.stable.has(record.id) || !this.sideMayAct()) return;
    this.stable.add({ id: record.id, age: record.age, live: isLiveState(record.state) });
  }

  /**
   * The one place where a known member's state changes: keeps the stable membership's live
   * count, the suspicion timers and the view-change time right, and emits the event.
   */
  private changeState(
    record: MemberRecord, state: MemberState, nowMs: number, by: NodeId | undefined,
    evidence: readonly NodeId[],
  ): void {
    const before = record.state;
    if (before === state) return;
    const wasLive = isLiveState(before);
    const live = isLiveState(state);
    this.table.setState(record, state, nowMs);
    if (wasLive !== live) {
      this.stable.onLiveChange(record.id, live);
      this.viewChanged(nowMs);
    }
    if (live && !wasLive) this.absorbIntoStable(record);
    if (state === 'left') this.stable.remove(record.id, false);
    record.deadClaim = state === 'dead' ? this.claimMax : undefined;
    if (state !== 'suspect') this.dropSuspicion(record.id);
    this.emitTransition(record, before, nowMs, by, evidence);
  }

  private emitTransition(
    record: MemberRecord, before: MemberState, nowMs: number, by: NodeId | undefined,
    evidence: readonly NodeId[],
  ): void {
    const member = record.id;
    const incarnation = record.incarnation;
    switch (record.state) {
      case 'alive':
        if (before === 'suspect') this.emit({ kind: 'alive', atMs: nowMs, member, incarnation });
        else this.emitJoined(record, nowMs);
        return;
      case 'suspect':
        this.emit({ kind: 'suspect', atMs: nowMs, member, incarnation, by: by ?? this.id });
        return;
      case 'dead':
        this.emit({
          kind: 'dead', atMs: nowMs, member, incarnation, declaredBy: by ?? this.id,
          confirmations: [...evidence],
        });
        return;
      case 'left':
        this.emit({ kind: 'left', atMs: nowMs, member, incarnation });
        return;
      default:
        assertNever(record.state, 'member state');
    }
  }

  private emitJoined(record: MemberRecord, nowMs: number): void {
    this.emit({
      kind: 'joined', atMs: nowMs, member: record.id, address: record.address, age: record.age,
      incarnation: record.incarnation,
    });
  }

  private setAge(record: MemberRecord, age: MemberAge): void {
    if (record.age === age) return;
    this.table.setAge(record, age);
    this.stable.onAgeChange({ id: record.id, age, live: isLiveState(record.state) });
  }

  // ---------------------------------------------------------------------------------------
  // Timers

  private tickProbe(nowMs: number): void {
    const probe = this.probe;
    if (probe !== undefined) {
      if (!probe.indirect && nowMs >= probe.timeoutAtMs) this.sendIndirectProbes(probe);
      if (nowMs >= probe.endAtMs) {
        this.probe = undefined;
        this.probeFailed(probe, nowMs);
      }
    }
    if (this.probe === undefined && nowMs >= this.nextProbeAtMs) this.startProbe(nowMs);
  }

  /** SWIM §3.1 and §4.3: ping the next member of the randomized round-robin. */
  private startProbe(nowMs: number): void {
    // Lifeguard §4.1: a member in doubt about itself probes less often and waits longer.
    const intervalMs = this.awareness.scale(this.config.probeIntervalMs);
    this.nextProbeAtMs = nowMs + intervalMs;
    const target = this.table.nextProbeTarget(nowMs, this.config.deadRetainMs);
    if (target === undefined) return;
    const seq = ++this.seq;
    this.probe = {
      target: target.id, seq,
      timeoutAtMs: nowMs + this.awareness.scale(this.config.probeTimeoutMs),
      endAtMs: nowMs + intervalMs,
      indirect: false, nacksExpected: 0, nacks: 0,
    };
    this.counters.probes++;
    this.send(target.id, {
      kind: 'ping', seq, target: target.id, updates: this.probeUpdates(this.buddy(target.id)),
    });
  }

  /** SWIM §3.1: no ack in time; ask k random members to ping the target for us. */
  private sendIndirectProbes(probe: ProbeState): void {
    probe.indirect = true;
    const helpers = this.table.sampleLive(this.config.indirectChecks, [probe.target]);
    for (const helper of helpers) {
      this.send(helper.id, {
        kind: 'ping-req', seq: probe.seq, target: probe.target,
        updates: this.probeUpdates(undefined),
      });
    }
    // Lifeguard §4.3: each helper owes us an ack or a nack.
    probe.nacksExpected = this.config.lifeguard ? helpers.length : 0;
  }

  private probeFailed(probe: ProbeState, nowMs: number): void {
    this.counters.probesFailed++;
    if (this.config.lifeguard) {
      // Missing nacks mean our own messages are not getting through; with no helpers to
      // blame, any failed probe counts against us (memberlist's rule).
      const missed = probe.nacksExpected > 0
        ? Math.max(0, probe.nacksExpected - probe.nacks) : 1;
      this.awareness.applyDelta(missed);
    }
    const record = this.table.get(probe.target);
    if (record === undefined) return;
    if (this.config.mutants.deadWithoutSuspicion && isLiveState(record.state)) {
      // MUTANT (test-only): no suspicion, no chance to refute.
      record.by = this.id;
      this.changeState(record, 'dead', nowMs, this.id, [this.id]);
      this.broadcasts.enqueue(toUpdate(record));
      return;
    }
    if (this.config.lifeguard && probe.nacksExpected > 0 && probe.nacks === 0) {
      this.suspectQuietly(record, nowMs);
      return;
    }
    this.accuse(record, record.incarnation, this.id, nowMs);
  }

  private tickRelays(nowMs: number): void {
    for (const [seq, relay] of this.relays) {
      if (nowMs >= relay.expiresAtMs) {
        this.relays.delete(seq);
      } else if (!relay.nackSent && nowMs >= relay.nackAtMs) {
        relay.nackSent = true;
        if (this.config.lifeguard) {
          this.counters.nacksSent++;
          this.send(relay.origin, {
            kind: 'nack', seq: relay.originSeq, updates: this.probeUpdates(undefined),
          });
        }
      }
    }
  }

  private tickSuspicions(nowMs: number): void {
    if (nowMs < this.suspicions.nextDeadlineMs()) return;
    for (const [id, suspicion] of this.suspicions.takeExpired(nowMs)) {
      const record = this.table.get(id);
      if (record === undefined || record.state !== 'suspect') continue;
      // SWIM §4.2: the suspicion timed out without a refutation: confirm the member dead.
      record.by = this.id;
      this.changeState(record, 'dead', nowMs, this.id, suspicion.evidence);
      this.broadcasts.enqueue(toUpdate(record));
    }
  }

  private tickGossip(nowMs: number): void {
    if (nowMs < this.nextGossipAtMs) return;
    this.nextGossipAtMs = nowMs + this.config.gossipIntervalMs;
    if (this.config.gossipFanout === 0 || this.broadcasts.size === 0) return;
    const targets = this.table.sampleGossipTargets(
      this.config.gossipFanout, [], nowMs, this.config.gossipToTheDeadMs,
    );
    for (const target of targets) {
      const updates = this.piggyback(undefined);
      if (updates.length === 0) return;
      this.send(target.id, { kind: 'gossip', updates });
    }
  }

  private tickAntiEntropy(nowMs: number): void {
    const c = this.config;
    if (c.pushPullIntervalMs > 0 && nowMs >= this.nextPushPullAtMs) {
      this.nextPushPullAtMs = nowMs + swimPushPullIntervalMs(c, this.table.liveCount);
      const [peer] = this.table.sampleLive(1, []);
      if (peer !== undefined) this.sendPushPull(peer.id, false);
    }
    if (c.reconnectIntervalMs > 0 && nowMs >= this.nextReconnectAtMs) {
      this.nextReconnectAtMs = nowMs + c.reconnectIntervalMs;
      const wanted = this.takeWantedReconnect();
      const dead = wanted ?? (this.reconnectNow() ? this.table.randomDead() : undefined);
      if (dead !== undefined) this.sendPushPull(dead.id, false);
    }
  }

  private wantReconnect(id: NodeId): void {
    if (this.reconnectWanted.size < RECONNECTS_WANTED_MAX) this.reconnectWanted.add(id);
  }

  private takeWantedReconnect(): MemberRecord | undefined {
    for (const id of this.reconnectWanted) {
      this.reconnectWanted.delete(id);
      const record = this.table.get(id);
      if (record !== undefined && record.state === 'dead') return record;
    }
    return undefined;
  }

  /**
   * Whether to try a dead member this reconnect period: with probability dead / live (at most
   * 1), so that the whole cluster tries each dead member about once per period whatever N is
   * (Serf's scaling). Every member trying every period sent each dead member N / dead full
   * states per period: at 1,000 members, a member wrongly held dead received hundreds of
   * push-pulls a second, each carrying the whole membership, and answered every one.
   */
  private reconnectNow(): boolean {
    const dead = this.table.count('dead');
    if (dead === 0) return false;
    const live = Math.max(1, this.table.liveCount - 1);
    return dead >= live || randomChance(this.random, dead / live);
  }

  /**
   * Drops the dead from the last stable membership once the view has been quiet for the
   * stable-after time, and only while this side may act.
   */
  private tickStable(nowMs: number): void {
    if (!this.stableDirty || nowMs < this.stableDueMs() || !this.sideMayAct()) return;
    this.stable.reset(this.liveMembers());
    this.stableDirty = false;
    this.minorityLatched = false;
  }

  private stableDueMs(): number {
    return this.stableDueAtMs;
  }

  /** The earliest member timer (called after every input: kept O(relays), no allocation). */
  private memberDeadline(): number {
    const probe = this.probe;
    let next = probe === undefined ? this.nextProbeAtMs
      : probe.indirect ? probe.endAtMs : probe.timeoutAtMs;
    for (const relay of this.relays.values()) {
      next = Math.min(next, relay.nackSent ? relay.expiresAtMs : relay.nackAtMs);
    }
    next = Math.min(next, this.suspicions.nextDeadlineMs());
    if (this.gossipDue()) next = Math.min(next, this.nextGossipAtMs);
    if (this.config.pushPullIntervalMs > 0) next = Math.min(next, this.nextPushPullAtMs);
    if (this.config.reconnectIntervalMs > 0) next = Math.min(next, this.nextReconnectAtMs);
    if (this.stableDirty && this.sideMayAct()) next = Math.min(next, this.stableDueMs());
    for (const pending of this.pendingJoins.values()) {
      next = Math.min(next, pending.expiresAtMs);
      break; // the first expires first
    }
    return next;
  }

  private gossipDue(): boolean {
    return this.broadcasts.size > 0 && this.config.gossipFanout > 0;
  }

  // ---------------------------------------------------------------------------------------
  // The emergent leader

  private afterInput(nowMs: number): void {
    if (this.phase === 'member') this.maybeClaim(nowMs);
    this.refreshLeader(nowMs);
    this.checkInvariants();
  }

  /**
   * Whether this side may act: the split-brain strategy holds, and this member is not latched
   * in the minority. A latched member waits until it has rejoined the acting side or its view
   * has been stable long enough; otherwise the old coordinator of a minority, seeing the
   * majority's members come back after a heal, would claim again with its old age.
   */
  private isActing(): boolean {
    return !this.minorityLatched && this.sideMayAct();
  }

  private sideMayAct(): boolean {
    const oldestId = this.stable.oldest(this.agedLookup);
    const oldest = oldestId === undefined ? undefined : this.table.get(oldestId);
    return sideMayAct(this.config.splitBrainStrategy, this.config.staticQuorumSize, {
      stableSize: this.stable.size,
      stableLive: this.stable.liveCount,
      oldestStableLive: oldest !== undefined && isLiveState(oldest.state),
      liveCount: this.table.liveCount,
    });
  }

  /**
   * The generation clock: the oldest live member, when its side may act, claims a generation
   * above every claim it has seen whenever it does not hold the highest claim (it just became
   * the coordinator, or another coordinator claimed meanwhile), and also when a member it had
   * counted dead is admitted again (a restarted process, or a minority member rejoining after
   * a heal): whatever that member was told while away is then fenced off.
   */
  private maybeClaim(nowMs: number): void {
    const self = this.self as MemberRecord;
    if (!this.sideMayAct()) {
      this.minorityLatched = true;
      this.memberRevived = false;
      this.revived = undefined;
      return;
    }
    if (this.minorityLatched) {
      this.memberRevived = false;
      this.revived = undefined;
      return;
    }
    if (this.table.oldestLive() !== self) {
      this.memberRevived = false;
      this.revived = undefined;
      return;
    }
    const holds = this.claimMax.by === this.id && self.generation === this.claimMax.generation;
    if (holds && !this.memberRevived) {
      this.revived = undefined;
      return;
    }
    if (holds && this.waitForRevived(nowMs)) return;
    if (!holds && this.waitForNewerClaimer(nowMs)) return;
    const generation = (this.claimMax.generation + 1) as Generation;
    this.incarnation = (this.incarnation + 1) as Incarnation;
    self.incarnation = this.incarnation;
    self.generation = generation;
    this.claimMax = { generation, by: this.id };
    this.followedClaim = this.claimMax;
    this.memberRevived = false;
    this.revived = undefined;
    this.broadcasts.enqueue(toUpdate(self));
  }

  /**
   * A member held dead here came back with a new age, admitted elsewhere: the admitter may be
   * on the far side of a partition that just healed, whose coordinator claimed while this
   * side had not yet counted it dead. Claiming one above our highest claim then names the
   * generation that coordinator already holds (`sim --scenario gossip --members 100 --seed 2
   * --loss 0.01`: n3 claimed 8 in the majority at 34.4 s; n2, the old coordinator of a
   * minority not yet latched, claimed 8 after the heal at 50.3 s on the news of a member
   * re-admitted over there, before any news of n3's claim). So ask the revived member for
   * its full state first: its answer carries its claim (and may make this member rejoin
   * younger, `onPushPull`). One that does not answer within a join timeout is claimed over.
   */
  private waitForRevived(nowMs: number): boolean {
    const revived = this.revived;
    if (revived === undefined) return false;
    const record = this.table.get(revived.member);
    if (record === undefined || !isLiveState(record.state)) {
      this.revived = undefined;
      return false;
    }
    if (revived.askedAtMs === undefined) {
      revived.askedAtMs = nowMs;
      this.sendPushPull(revived.member, false);
      return true;
    }
    if (nowMs - revived.askedAtMs < this.config.joinTimeoutMs) return true;
    this.revived = undefined;
    return false;
  }

  /**
   * A live member claimed a coordinator generation newer than the one we followed, though we
   * are older: it must have counted us dead. Before claiming over it, ask for its full state
   * (`onPushPull` then rejoins us younger, or records that it knows we are alive). A claimer
   * that does not answer within two join timeouts is claimed over.
   */
  private waitForNewerClaimer(nowMs: number): boolean {
    const claimer = this.claimMax.by;
    const record = claimer === undefined ? undefined : this.table.get(claimer);
    if (claimer === undefined || claimer === this.id || record === undefined
      || !isLiveState(record.state) || claimOrder(this.claimMax, this.followedClaim) <= 0) {
      this.claimBlockedSinceMs = undefined;
      return false;
    }
    this.claimBlockedSinceMs ??= nowMs;
    if (nowMs - this.claimBlockedSinceMs >= 2 * this.config.joinTimeoutMs) return false;
    this.askToRejoin(claimer, nowMs);
    return true;
  }

  private refreshLeader(nowMs: number): void {
    const member = this.phase === 'member';
    const candidate = member ? this.table.oldestLive() : undefined;
    const acting = member && this.isActing();
    let next: SwimLeader | undefined;
    if (candidate !== undefined && acting && candidate.generation !== undefined
      && this.claimMax.by === candidate.id && this.claimMax.generation === candidate.generation) {
      next = { id: candidate.id, generation: candidate.generation };
    }
    const previous = this.leaderNow;
    if (next?.id !== previous?.id || next?.generation !== previous?.generation) {
      const reason = this.leaderChangeReason(candidate, acting);
      this.emit({ kind: 'leader-changed', atMs: nowMs, leader: next, previous, reason });
      this.leaderNow = next;
      this.reasonHint = undefined;
      if (next !== undefined) this.leaderEver = true;
    }
    if (next !== undefined) this.follow({ generation: next.generation, by: next.id });
    this.candidateNow = candidate?.id;
    this.wasActing = acting;
  }

  private leaderChangeReason(
    candidate: MemberRecord | undefined, acting: boolean,
  ): LeaderChangeReason {
    if (this.phase === 'left') return 'self-left';
    if (this.reasonHint !== undefined) return this.reasonHint;
    if (!acting) return 'partition-minority';
    const previousId = this.candidateNow;
    if (previousId !== undefined && candidate?.id !== previousId) {
      const previous = this.table.get(previousId);
      if (previous === undefined || previous.state === 'dead') return 'oldest-died';
      if (previous.state === 'left') return 'oldest-left';
      return candidate !== undefined && isOlder(candidate, previous) ? 'joined-older' : 'merge';
    }
    if (!this.leaderEver) return 'joined';
    if (!this.wasActing) return 'quorum-regained';
    if (this.leaderNow === undefined) return 'claimed';
    // Same candidate, another generation (or its claim was overtaken): sides merged.
    return 'merge';
  }

  private noteClaim(claim: CoordinatorClaim): void {
    if (claimOrder(claim, this.claimMax) > 0) this.claimMax = claim;
  }

  /** Whether `update` stays within the bounds of plausibility.ts, judged by this view. */
  private judge(update: GossipUpdate): SwimRejection | undefined {
    const self = update.member === this.id;
    const record = self ? this.self : this.table.get(update.member);
    const known = record === undefined ? undefined
      : { incarnation: self ? this.incarnation : record.incarnation, age: record.age };
    const oldest = known === undefined && update.state === 'alive'
      ? this.table.oldestLive() : undefined;
    return judgeUpdate(update, {
      ageSeenMax: this.ageSeenMax, generationMax: this.claimMax.generation, known, aboutSelf: self,
      oldestLive: oldest === undefined ? undefined : { age: oldest.age, id: oldest.id },
    });
  }

  private countRejection(rejection: SwimRejection): void {
    switch (rejection) {
      case 'out-of-range': this.counters.rejectedOutOfRange++; return;
      case 'incarnation-jump': this.counters.rejectedIncarnationJump++; return;
      case 'age-jump': this.counters.rejectedAgeJump++; return;
      case 'age-decrease': this.counters.rejectedAgeDecrease++; return;
      case 'generation-jump': this.counters.rejectedGenerationJump++; return;
      case 'older-than-leader': this.counters.rejectedOlderThanLeader++; return;
      case 'admission-rate': this.counters.rejectedAdmissionRate++; return;
      default: assertNever(rejection, 'swim rejection');
    }
  }

  private noteAge(age: number): void {
    if (age > this.ageSeenMax) this.ageSeenMax = age;
  }

  // ---------------------------------------------------------------------------------------
  // Helpers

  /** Full state, with dead members that must rejoin younger marked so (`mustReadmit`). */
  private snapshot(): GossipUpdate[] {
    const members = this.table.snapshot();
    for (let i = 0; i < members.length; i++) {
      const update = members[i] as GossipUpdate;
      if (update.state !== 'dead') continue;
      const record = this.table.get(update.member);
      if (record !== undefined && this.mustReadmit(record)) {
        members[i] = { ...update, readmit: true };
      }
    }
    return members;
  }

  private liveMembers(): AgedMember[] {
    const out: AgedMember[] = [];
    for (const record of this.table.values()) {
      if (isLiveState(record.state)) out.push({ id: record.id, age: record.age, live: true });
    }
    return out;
  }

  private agedMember(id: NodeId): AgedMember | undefined {
    const record = this.table.get(id);
    return record === undefined
      ? undefined : { id, age: record.age, live: isLiveState(record.state) };
  }

  private viewChanged(nowMs: number): void {
    this.stableDueAtMs = nowMs + swimStableAfterMs(this.config, this.table.liveCount);
    this.stableDirty = true;
  }

  /** Lifeguard's buddy system: a suspect being pinged hears of its suspicion first. */
  private buddy(target: NodeId): GossipUpdate | undefined {
    const record = this.table.get(target);
    return record !== undefined && record.state === 'suspect' ? toUpdate(record) : undefined;
  }

  /** What a probe, ack, ping-req or nack carries (SWIM §4.1: updates ride on every probe). */
  private probeUpdates(first: GossipUpdate | undefined): readonly GossipUpdate[] {
    // MUTANT (test-only) `noPiggyback`: probes travel empty.
    if (this.config.mutants.noPiggyback) return NO_UPDATES;
    return this.piggyback(first);
  }

  /** Updates to piggyback on one datagram, within `piggybackMax` and `datagramBytesMax`. */
  private piggyback(first: GossipUpdate | undefined): readonly GossipUpdate[] {
    if (first === undefined && this.broadcasts.size === 0) return NO_UPDATES;
    const c = this.config;
    let bytes = c.datagramBytesMax - DATAGRAM_HEADER_BYTES;
    let count = c.piggybackMax;
    const out: GossipUpdate[] = [];
    if (first !== undefined && count > 0) {
      out.push(first);
      bytes -= estimateUpdateBytes(first);
      count--;
    }
    const limit = swimRetransmitLimit(c, this.table.liveCount);
    for (const update of this.broadcasts.take(count, bytes, limit, this.id)) {
      if (first === undefined || update.member !== first.member) out.push(update);
    }
    return out;
  }

  private dropSuspicion(id: NodeId): void {
    this.suspicions.delete(id);
  }

  private send(to: NodeId, message: SwimMessage): void {
    assert(to !== this.id, () => `a member never sends to itself: ${message.kind}`);
    assert(this.outMessages.length < SWIM_OUTBOX_MAX,
      () => `${this.outMessages.length} messages not drained: call drain() after every input`);
    this.outMessages.push({ to, message, channel: swimMessageChannel(message) });
    this.counters.messagesSent++;
    this.counters.bytesSent += estimateSwimMessageBytes(message);
  }

  private emit(event: MembershipEvent): void {
    assert(this.outEvents.length < SWIM_OUTBOX_MAX,
      () => `${this.outEvents.length} events not drained: call drain() after every input`);
    this.outEvents.push(event);
  }

  private enter(nowMs: number): void {
    assert(Number.isFinite(nowMs), () => `nowMs must be finite: ${nowMs}`);
    assert(nowMs >= this.lastNowMs, () => `time went backwards: ${nowMs} < ${this.lastNowMs}`);
    this.lastNowMs = nowMs;
  }

  private checkInvariants(): void {
    const self = this.self;
    if (this.phase === 'member') {
      assert(self !== undefined && isLiveState(self.state),
        () => `a member's own record must be live: ${self?.state}`);
      assert(self.incarnation === this.incarnation,
        () => `own record incarnation ${self.incarnation} != ${this.incarnation}`);
    }
    assert(this.relays.size <= SWIM_RELAYS_MAX, () => `relays over limit: ${this.relays.size}`);
    assert(this.leaderNow === undefined || this.phase === 'member',
      () => `a leader outside membership (phase ${this.phase})`);
    assert(this.leaderNow === undefined
      || this.leaderNow.generation === this.claimMax.generation,
    () => `leader generation ${this.leaderNow?.generation} != max ${this.claimMax.generation}`);
  }
}

/** Orders claims by generation, then claimer id: negative when `a` comes before `b`. */
export function claimOrder(a: CoordinatorClaim, b: CoordinatorClaim): number {
  if (a.generation !== b.generation) return a.generation - b.generation;
  const x = a.by ?? '';
  const y = b.by ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}
