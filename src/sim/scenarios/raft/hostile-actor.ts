/**
 * The hostile actor of `conclave sim --scenario raft --hostile`: a forger of Raft frames on its
 * own connections to the members, in one of two models.
 *
 * - `authenticated`: identity comes from authentication, so the actor speaks only as itself,
 *   `evil`, a non-member. It sends every message kind with random and extreme fields: terms at
 *   0, current − 1, current, current + 1, TERM_MAX ± 1, 2^53 − 1; commit indexes beyond any
 *   log; forged entries (KV puts, config entries naming a forged member) placed to match the
 *   receiver's log; snapshots with forged data and membership, a valid checksum, and sizes up
 *   to 2^53 − 1. Every safety checker must hold.
 * - `unauthenticated`: ids are only claimed, so the actor also speaks as real members (and as
 *   the receiver itself), but then sends only what a correct member could not have sent and
 *   the receiver can tell from what it knows: a term above TERM_MAX, a second leader in the
 *   receiver's term, an append contradicting committed entries or entries of the current term,
 *   a heartbeat committing past the log, a grant for a term never asked, an ack of entries or
 *   rounds never sent, an oversized snapshot. Well-formed forgeries (an append under the real
 *   leader's id at its real term, a vote request with a made-up log) are indistinguishable
 *   from the real thing without authentication; docs/raft.md lists them.
 *
 * In both models a share of frames is malformed (bad numbers, unknown kinds, broken entry
 * chains, throwing getters): they go through `validateRaftMessage`, as at the real adapter,
 * and are dropped there (counted as `malformed`). The actor reads the members' state to aim
 * (it is the simulator: omniscient), and everything it forges carries the marker `forged/`,
 * which the checkers look for in every stored entry, installed snapshot and applied command.
 */
import { crc32c } from '../../../core/checksum.js';
import {
  logIndex, nodeId, term as toTerm, type LogIndex, type NodeId, type Term,
} from '../../../core/ids.js';
import {
  encodeMembership, TERM_MAX, validateRaftMessage, type Entry, type RaftMessage, type RaftStatus,
} from '../../../core/raft/index.js';
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import type { HostileActor } from '../../nemesis.js';
import type { Prng } from '../../prng.js';
import type { SimNetwork } from '../../sim-network.js';
import { FORGED_MARKER } from './raft-checker.js';
import { encodeKvCommand } from './sim-kv.js';

export type HostileModel = 'authenticated' | 'unauthenticated';
export const HOSTILE_MODELS: readonly HostileModel[] = ['authenticated', 'unauthenticated'];

/** The actor's own id: a member of no configuration. */
export const HOSTILE_ID = nodeId('evil');

/** What the actor sees of a running member. */
export interface HostileView {
  readonly status: RaftStatus;
  termAt(index: LogIndex): Term | undefined;
}

export interface HostileActorOptions {
  readonly model: HostileModel;
  /** Every id a member may have (the ones to claim in the unauthenticated model). */
  readonly members: readonly NodeId[];
  /** The running members' state; undefined while one is down. */
  readonly view: (id: NodeId) => HostileView | undefined;
  /** The members' snapshotBytesMax, to send one byte more (or far more). */
  readonly snapshotBytesMax: number;
}

export interface HostileCounts {
  /** Frames sent as `evil`. */
  asSelf: number;
  /** Frames sent under a member's id (unauthenticated model only). */
  spoofed: number;
  /** Frames the validator refused (dropped at the adapter, never reaching the core). */
  malformed: number;
}

/** A frame to send, and the id it claims. */
interface Forged {
  readonly from: NodeId;
  readonly value: unknown;
}

type Builder = (r: NodeId, s: RaftStatus, v: HostileView) => Forged | undefined;

export class RaftHostileActor implements HostileActor {
  readonly counts: HostileCounts = { asSelf: 0, spoofed: 0, malformed: 0 };
  private forgedSequence = 0;

  constructor(private readonly prng: Prng, private readonly network: SimNetwork<RaftMessage>,
    private readonly options: HostileActorOptions) {}

  act(): void {
    const up = this.options.members.filter((id) => this.options.view(id) !== undefined);
    if (up.length === 0) return;
    const receiver = this.pick(up);
    const view = this.options.view(receiver)!;
    const forged = this.build(receiver, view);
    const message = validateRaftMessage(forged.value);
    if ('error' in message) {
      this.counts.malformed++;
      return;
    }
    if (forged.from === HOSTILE_ID) this.counts.asSelf++;
    else this.counts.spoofed++;
    this.network.inject(forged.from, receiver, message);
  }

  private build(receiver: NodeId, view: HostileView): Forged {
    if (randomChance(this.prng, 0.08)) {
      const from = this.options.model === 'authenticated'
        ? HOSTILE_ID
        : this.pick(this.options.members);
      return { from, value: this.malformed(view.status) };
    }
    if (this.options.model === 'authenticated' || randomChance(this.prng, 0.4)) {
      return { from: HOSTILE_ID, value: this.anyMessage(view.status, view) };
    }
    const builders: Builder[] = [
      this.termOutOfRange, this.fromSelf, this.secondLeader, this.belowCommit,
      this.contradictsLeaderLog, this.commitBeyondLog, this.unexpectedGrant, this.ackBeyondSent,
      this.snapshotTooLarge,
    ];
    for (let tries = 0; tries < 4; tries++) {
      const built = this.pick(builders).call(this, receiver, view.status, view);
      if (built !== undefined) return built;
    }
    return this.termOutOfRange(receiver, view.status);
  }

  // ---- the authenticated model: anything, as `evil` ----

  /** Any kind, with a term and fields drawn from the extremes and the receiver's neighbourhood. */
  private anyMessage(s: RaftStatus, v: HostileView): RaftMessage {
    const t = this.extremeTerm(s.term);
    return this.messageOfKind(this.randomKind(), t, s, v);
  }

  private messageOfKind(kind: RaftMessage['kind'], t: number, s: RaftStatus,
    v: HostileView): RaftMessage {
    const index = (): LogIndex => logIndex(this.extremeIndex(s));
    switch (kind) {
      case 'pre-vote':
      case 'vote':
        return { kind, term: toTerm(t), lastLogIndex: logIndex(2 ** 53 - 1),
          lastLogTerm: toTerm(t) };
      case 'pre-vote-response':
      case 'vote-response':
        return { kind, term: toTerm(t), granted: randomChance(this.prng, 0.8) };
      case 'append':
        return this.forgedAppend(t, s, v);
      case 'append-response': {
        const at = index();
        return { kind, term: toTerm(t), success: randomChance(this.prng, 0.7), index: at,
          hintIndex: at, hintTerm: toTerm(Math.min(t, s.lastTerm)) };
      }
      case 'heartbeat':
        return { kind, term: toTerm(t), commitIndex: index(), readRound: this.bigCount() };
      case 'heartbeat-response':
        return { kind, term: toTerm(t), readRound: this.bigCount() };
      case 'timeout-now':
        return { kind, term: toTerm(t) };
      case 'read-index':
        return { kind, term: toTerm(t), requestId: `r${randomInt(this.prng, 1, 50)}` };
      case 'read-index-response':
        return { kind, term: toTerm(t), requestId: `r${randomInt(this.prng, 1, 50)}`,
          success: true, index: index() };
      case 'snapshot':
        return this.forgedSnapshot(t, s, this.pick([0, 1, 2 ** 40, 2 ** 53 - 1,
          this.options.snapshotBytesMax + 1]));
      case 'snapshot-response':
        return { kind, term: toTerm(t), snapshotIndex: logIndex(s.snapshotIndex),
          nextOffsetBytes: this.bigCount() };
    }
  }

  /**
   * Forged entries placed where they would fit: after an index of the receiver's log with the
   * receiver's term there (so only the sender's identity stands between them and the log).
   */
  private forgedAppend(t: number, s: RaftStatus, v: HostileView): RaftMessage {
    const prev = Math.min(s.lastIndex, Math.max(0, s.lastIndex - randomInt(this.prng, 0, 4)));
    const prevLogTerm = Math.min(t, v.termAt(logIndex(prev)) ?? 0);
    const entries: Entry[] = [];
    const count = t === 0 ? 0 : randomInt(this.prng, 0, 4);
    for (let i = 0; i < count; i++) {
      entries.push(this.forgedEntry(prev + 1 + i, Math.max(prevLogTerm, 1, Math.min(t, s.term))));
    }
    return { kind: 'append', term: toTerm(t), prevLogIndex: logIndex(prev),
      prevLogTerm: toTerm(prev === 0 ? 0 : prevLogTerm), entries,
      commitIndex: logIndex(this.extremeIndex(s)) };
  }

  private forgedEntry(index: number, t: number): Entry {
    const n = ++this.forgedSequence;
    const config = randomChance(this.prng, 0.2);
    const data = config
      ? encodeMembership({ learners: [],
        voters: [...this.options.members.slice(0, 3), nodeId(`${FORGED_MARKER}m${n}`)] })
      : encodeKvCommand({ kind: 'put', key: `${FORGED_MARKER}k${n}`, value: `v${n}` });
    return { index: logIndex(index), term: toTerm(t), kind: config ? 'config' : 'normal', data };
  }

  /** A snapshot that would install if believed: forged state, forged member, right checksum. */
  private forgedSnapshot(t: number, s: RaftStatus, extraBytes: number): RaftMessage {
    const data = new TextEncoder().encode(JSON.stringify({
      values: [[`${FORGED_MARKER}snap`, 'x']], digest: 0, appliedIndex: s.lastIndex + 1,
    }));
    const metaTerm = Math.max(1, Math.min(t, s.term + 1));
    return { kind: 'snapshot', term: toTerm(Math.max(t, 1)),
      meta: { index: logIndex(s.lastIndex + 1 + randomInt(this.prng, 0, 10)),
        term: toTerm(metaTerm),
        membership: { voters: [...this.options.members.slice(0, 2), nodeId(`${FORGED_MARKER}m`)],
          learners: [] } },
      totalBytes: Math.min(2 ** 53 - 1, data.length + extraBytes), checksum: crc32c(data),
      offsetBytes: 0, data };
  }

  // ---- the unauthenticated model: contradictions under members' ids ----

  private termOutOfRange(r: NodeId, s: RaftStatus): Forged {
    const t = this.pick([TERM_MAX + 1, TERM_MAX + 1 + randomInt(this.prng, 0, 2 ** 30),
      2 ** 53 - 1]);
    return { from: this.otherThan(r), value: this.messageOfKind(this.randomKind(), t, s,
      { status: s, termAt: () => undefined }) };
  }

  private fromSelf(r: NodeId, s: RaftStatus, v: HostileView): Forged {
    return { from: r, value: this.anyMessage(s, v) };
  }

  /** The receiver leads its term, or follows a known leader in it: another claims the term. */
  private secondLeader(r: NodeId, s: RaftStatus, v: HostileView): Forged | undefined {
    const leader = s.role === 'leader' ? r : s.role === 'follower' ? s.leaderId : undefined;
    if (leader === undefined) return undefined;
    const from = this.otherThan(r, leader);
    const kind = this.pick(['append', 'heartbeat', 'snapshot', 'timeout-now'] as const);
    const value = kind === 'snapshot'
      ? this.forgedSnapshot(s.term, s, 0)
      : this.messageOfKind(kind, s.term, s, v);
    return { from, value };
  }

  /** Under the leader's id: an append naming another term at a committed index. */
  private belowCommit(_r: NodeId, s: RaftStatus, v: HostileView): Forged | undefined {
    if (s.role !== 'follower' || s.leaderId === undefined || s.commitIndex < 1) return undefined;
    const lowest = Math.max(1, s.compactedIndex + 1);
    if (lowest > s.commitIndex) return undefined; // everything committed is compacted away
    const at = randomInt(this.prng, lowest, s.commitIndex + 1);
    const ours = v.termAt(logIndex(at));
    if (ours === undefined) return undefined;
    const forgedTerm = ours === s.term ? ours - 1 : s.term;
    if (forgedTerm < 0) return undefined;
    // prev = at with another term: no correct leader of this term disagrees with a committed entry.
    return { from: s.leaderId, value: { kind: 'append', term: s.term, prevLogIndex: logIndex(at),
      prevLogTerm: toTerm(forgedTerm), entries: [this.forgedEntry(at + 1, s.term)],
      commitIndex: logIndex(at + 1) } };
  }

  /** Under the leader's id: an append denying an entry of the current term the receiver holds. */
  private contradictsLeaderLog(_r: NodeId, s: RaftStatus): Forged | undefined {
    if (s.role !== 'follower' || s.leaderId === undefined || s.lastTerm !== s.term ||
      s.lastIndex <= s.commitIndex || s.term < 1) return undefined;
    return { from: s.leaderId, value: { kind: 'append', term: s.term,
      prevLogIndex: logIndex(s.lastIndex), prevLogTerm: toTerm(s.term - 1),
      entries: [this.forgedEntry(s.lastIndex + 1, s.term)],
      commitIndex: logIndex(s.lastIndex + 1) } };
  }

  private commitBeyondLog(_r: NodeId, s: RaftStatus): Forged | undefined {
    if (s.role !== 'follower' || s.leaderId === undefined) return undefined;
    return { from: s.leaderId, value: { kind: 'heartbeat', term: s.term,
      commitIndex: logIndex(s.lastIndex + 1 + randomInt(this.prng, 0, 1000)) } };
  }

  /** A grant for a term far above the receiver's: it never asked (pre-vote asks for term + 1). */
  private unexpectedGrant(r: NodeId, s: RaftStatus): Forged | undefined {
    const from = this.otherThan(r);
    const kind = this.pick(['vote-response', 'pre-vote-response'] as const);
    return { from, value: { kind, term: toTerm(s.term + 50 + randomInt(this.prng, 0, 1000)),
      granted: true } };
  }

  /** To a leader, from a follower: an ack of entries or rounds far past anything it sent. */
  private ackBeyondSent(_r: NodeId, s: RaftStatus): Forged | undefined {
    if (s.role !== 'leader' || s.progress.length === 0) return undefined;
    const from = this.pick(s.progress).id;
    const far = 1_000_000 + randomInt(this.prng, 0, 1_000_000);
    const value: RaftMessage = randomChance(this.prng, 0.5)
      ? { kind: 'append-response', term: s.term, success: randomChance(this.prng, 0.8),
        index: logIndex(s.lastIndex + far), hintIndex: logIndex(0), hintTerm: toTerm(0) }
      : { kind: 'heartbeat-response', term: s.term, readRound: 1_000_000_000 + far };
    return { from, value };
  }

  private snapshotTooLarge(_r: NodeId, s: RaftStatus): Forged | undefined {
    if (s.role !== 'follower' || s.leaderId === undefined || s.term < 1) return undefined;
    const extra = this.pick([this.options.snapshotBytesMax + 1, 2 ** 53 - 1]);
    return { from: s.leaderId, value: this.forgedSnapshot(s.term, s, extra) };
  }

  // ---- malformed frames: the adapter's validator must refuse them, never throw ----

  private malformed(s: RaftStatus): unknown {
    const t = s.term;
    const choices: (() => unknown)[] = [
      () => ({ kind: 'heartbeat', term: -1, commitIndex: 0 }),
      () => ({ kind: 'heartbeat', term: Number.NaN, commitIndex: 0 }),
      () => ({ kind: 'heartbeat', term: 2 ** 53, commitIndex: 0 }),
      () => ({ kind: 'vote', term: t, lastLogIndex: 3, lastLogTerm: t + 1 }),
      () => ({ kind: 'forged-kind', term: t }),
      () => ({ kind: 'append', term: t, prevLogIndex: 1, prevLogTerm: 0,
        entries: [{ index: 5, term: t, kind: 'normal', data: new Uint8Array(1) }],
        commitIndex: 0 }),
      () => ({ kind: 'append', term: t, prevLogIndex: 0, prevLogTerm: 0,
        entries: [{ index: 1, term: t + 1, kind: 'normal', data: new Uint8Array(1) }],
        commitIndex: 0 }),
      () => ({ kind: 'append', term: t, prevLogIndex: 0, prevLogTerm: 0,
        entries: [{ index: 1, term: Math.max(1, t), kind: 'config', data: new Uint8Array([1, 2]) }],
        commitIndex: 0 }),
      () => ({ kind: 'snapshot', term: t, meta: { index: 1, term: t, membership: { voters: [] } },
        totalBytes: 1, checksum: 0, offsetBytes: 0, data: new Uint8Array(2) }),
      () => ({ kind: 'read-index', term: t, requestId: 'x'.repeat(1000) }),
      () => [1, 2, 3],
      () => 'heartbeat',
      () => null,
      () => Object.defineProperty({ kind: 'heartbeat' }, 'term', {
        get: () => { throw new Error('hostile getter'); }, enumerable: true }),
    ];
    return this.pick(choices)();
  }

  // ---- drawing ----

  private extremeTerm(current: number): number {
    const near = [0, current - 1, current, current, current + 1, current + 1,
      current + randomInt(this.prng, 2, 100)];
    const far = [TERM_MAX - 1, TERM_MAX, TERM_MAX + 1, 2 ** 53 - 1,
      Math.floor(randomFloat(this.prng) * 2 ** 53)];
    const t = randomChance(this.prng, 0.7) ? this.pick(near) : this.pick(far);
    return Math.max(0, Math.min(2 ** 53 - 1, t));
  }

  private extremeIndex(s: RaftStatus): number {
    return this.pick([0, 1, s.commitIndex, s.commitIndex + 1, s.lastIndex, s.lastIndex + 1,
      s.lastIndex + 1_000_000, 2 ** 53 - 2]);
  }

  private bigCount(): number {
    return this.pick([0, 1, randomInt(this.prng, 0, 1000), 2 ** 31, 2 ** 53 - 1]);
  }

  private randomKind(): RaftMessage['kind'] {
    return this.pick(['pre-vote', 'vote', 'pre-vote-response', 'vote-response', 'append',
      'append-response', 'heartbeat', 'heartbeat-response', 'timeout-now', 'read-index',
      'read-index-response', 'snapshot', 'snapshot-response'] as const);
  }

  /** A member id other than those given (`evil` when there is none). */
  private otherThan(...not: NodeId[]): NodeId {
    const others = this.options.members.filter((id) => !not.includes(id));
    return others.length === 0 ? HOSTILE_ID : this.pick(others);
  }

  private pick<T>(items: readonly T[]): T {
    return items[randomInt(this.prng, 0, items.length)]!;
  }
}
