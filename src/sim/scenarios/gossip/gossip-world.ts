/**
 * The simulated cluster of the gossip scenario: one SimHost per member running the real
 * `SwimRuntime` over the simulated network, and the ground truth the checkers judge the
 * members' views against: who is up, who is a member (admitted, not left), since when, and
 * which leader each member names (`LeaderAgreement`).
 *
 * Every per-message path here is O(1): membership events go to the observer in one call,
 * and the only O(N) work (crash bookkeeping, view comparison) runs on rare scripted instants.
 */
import { assert } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import { randomInt } from '../../../core/random.js';
import type {
  MembershipEvent, SwimConfig, SwimCounters, SwimMessage,
} from '../../../core/swim/index.js';
import type { Transport, TransportHandler } from '../../../ports/transport.js';
import { SwimRuntime } from '../../../runtime/swim/index.js';
import type { Prng } from '../../prng.js';
import type { Scheduler } from '../../scheduler.js';
import { SimHost, type HostContext, type SimProcess } from '../../sim-host.js';
import type { SimNetwork } from '../../sim-network.js';
import { SIM_STORAGE_DEFAULTS } from '../../sim-storage.js';
import { LeaderAgreement } from './leader-agreement.js';
import type { RecordedEvent } from '../../sim-recorder.js';

export interface GossipProcess extends SimProcess {
  readonly runtime: SwimRuntime;
  halt(): void;
}

/** What the world tells the scenario's checkers, as it happens. */
export interface WorldObserver {
  onMemberEvent(observer: NodeId, event: MembershipEvent, nowMs: number): void;
  /** The set of counted members, or a leader one of them names, changed. */
  onAgreementChanged(nowMs: number): void;
  /** `id` stopped being a member (it crashed or left). */
  onMemberGone(id: NodeId): void;
}

/** Per-member state the process closures share with the world (no map lookup per message). */
interface MemberSlot {
  readonly id: NodeId;
  readonly index: number;
  /** Inbound messages wait this long before the process reads them (a starved CPU). */
  inboundDelayMs: number;
  upSinceMs: number;
  /** When the current process started after a crash; -Infinity for the first process. */
  restartedAtMs: number;
  member: boolean;
}

export interface WorldOptions {
  readonly ids: readonly NodeId[];
  /** Seeds a restarted process joins through (the oldest members). */
  readonly seedIds: readonly NodeId[];
  readonly config: SwimConfig;
  readonly joinSpreadMs: number;
  readonly drift: ReadonlyMap<NodeId, number>;
}

export interface WorldTotals {
  messages: number;
  bytes: number;
  invalidMessages: number;
  refutations: number;
  /** Sum over members of the time their process was up. Unit: ms. */
  upMs: number;
}

export class GossipWorld {
  readonly agreement = new LeaderAgreement();
  readonly totals: WorldTotals = {
    messages: 0, bytes: 0, invalidMessages: 0, refutations: 0, upMs: 0,
  };
  private readonly hosts = new Map<NodeId, SimHost<SwimMessage, GossipProcess>>();
  private readonly slots = new Map<NodeId, MemberSlot>();
  private readonly memberSet = new Set<NodeId>();
  private observer: WorldObserver | undefined;
  /** Recording only: the last news of each member noted. */
  private readonly newsOf = new Map<NodeId, { state: string; incarnation: number }>();
  /** Recording only: the last leader answer noted (the unanimous key, '' while they differ). */
  private leaderNews: string | undefined;
  /** Recording only: the leader event noted last. */
  private leaderEventLast: RecordedEvent | undefined;
  /** Recording only: the answer noted before leaderEventLast. */
  private leaderKeyBefore: string | undefined;

  constructor(
    private readonly scheduler: Scheduler,
    private readonly network: SimNetwork<SwimMessage>,
    private readonly prng: Prng,
    private readonly options: WorldOptions,
  ) {}

  /** Starts every member's process (n1 bootstraps now, the others join over the spread). */
  start(observer: WorldObserver): void {
    assert(this.hosts.size === 0, 'the world started twice');
    this.observer = observer;
    const { scheduler, network, prng, options } = this;
    options.ids.forEach((id, index) => {
      const slot: MemberSlot = {
        id, index, inboundDelayMs: 0, upSinceMs: 0, restartedAtMs: -Infinity, member: false,
      };
      this.slots.set(id, slot);
      const host = new SimHost<SwimMessage, GossipProcess>(id, scheduler, network, prng.fork(), {
        clock: {
          driftRate: options.drift.get(id) ?? 0,
          monotonicOffsetMs: prng.nextUint32() % 1_000_000,
          wallOffsetMs: 0,
        },
        storage: SIM_STORAGE_DEFAULTS,
      }, (context) => this.startProcess(slot, context));
      this.hosts.set(id, host);
      const driftRate = options.drift.get(id) ?? 0;
      if (driftRate !== 0) {
        scheduler.recorder?.note({ kind: 'drift', atMs: 0, node: id, driftRate });
      }
    });
  }

  // -------------------------------------------------------------------------------------
  // Ground truth

  isUp(id: NodeId): boolean {
    return this.host(id).isUp;
  }

  /** Up, admitted, and not left: a member whose death would be a false verdict. */
  isMember(id: NodeId): boolean {
    return this.memberSet.has(id);
  }

  get memberCount(): number {
    return this.memberSet.size;
  }

  /** The members now (a copy: the caller may keep it). */
  members(): NodeId[] {
    return [...this.memberSet];
  }

  /** When the current process of `id` started after a crash; -Infinity for its first life. */
  restartedAtMs(id: NodeId): number {
    return this.slot(id).restartedAtMs;
  }

  runtime(id: NodeId): SwimRuntime | undefined {
    return this.host(id).process?.runtime;
  }

  // -------------------------------------------------------------------------------------
  // Faults and scripted actions

  crash(id: NodeId): void {
    const host = this.host(id);
    if (!host.isUp) return;
    host.crash();
  }

  restart(id: NodeId): void {
    const host = this.host(id);
    if (host.isUp) return;
    const slot = this.slot(id);
    slot.restartedAtMs = this.scheduler.nowMs;
    host.restart();
  }

  pause(id: NodeId, durationMs: number): void {
    this.host(id).pause(durationMs);
  }

  setInboundDelay(id: NodeId, delayMs: number): void {
    this.slot(id).inboundDelayMs = delayMs;
    this.scheduler.recorder?.note({ kind: 'note', atMs: this.scheduler.nowMs,
      text: `${id} reads its messages ${delayMs.toFixed(0)} ms late (starved)` });
  }

  /** Graceful leave: the member announces it; its process exits `lingerMs` later. */
  leave(id: NodeId, lingerMs: number): void {
    const runtime = this.runtime(id);
    if (runtime === undefined) return;
    this.notMember(this.slot(id));
    runtime.leave();
    this.scheduler.schedule(lingerMs, () => this.crash(id));
  }

  /** Adds what every running process has counted so far (at the end of a run). */
  harvestAll(): void {
    for (const host of this.hosts.values()) {
      const process = host.process;
      if (process !== undefined) this.harvest(this.slot(host.id), process.runtime);
    }
  }

  /**
   * The first disagreement between the members' views and the truth: every member must count
   * exactly the live members (alive or suspect), and the first `sampleMax` members (by id
   * order of the truth set) must see exactly those. O(N + sampleMax × N).
   */
  viewMismatch(sampleMax: number): string | undefined {
    const truth = this.memberSet;
    let compared = 0;
    for (const id of truth) {
      const runtime = this.runtime(id);
      if (runtime === undefined) return `${id} is counted but not running`;
      const status = runtime.status();
      const live = status.membersAlive + status.membersSuspect;
      if (live !== truth.size) {
        return `${id} sees ${live} live members, ${truth.size} are (${status.membersDead} dead, `
          + `${status.membersLeft} left in its view)`;
      }
      if (compared++ >= sampleMax) continue;
      for (const other of truth) {
        const state = runtime.member(other)?.state;
        if (state !== 'alive' && state !== 'suspect') {
          return `${id} sees ${other} as ${state ?? 'unknown'}, but it is a live member`;
        }
      }
    }
    return undefined;
  }

  // -------------------------------------------------------------------------------------
  // Processes

  private startProcess(slot: MemberSlot, context: HostContext<SwimMessage>): GossipProcess {
    const o = this.options;
    const nowMs = this.scheduler.nowMs;
    slot.upSinceMs = nowMs;
    const runtime = new SwimRuntime({ id: slot.id, address: slot.id, config: o.config }, {
      clock: context.clock,
      timer: context.timer,
      transport: this.slowableTransport(slot, context),
      random: context.random,
      onEvent: (event) => this.onEvent(slot, event),
    });
    if (context.restarts > 0) {
      // A fresh process: it joins through the seeds, starting at a random one.
      const seeds = o.seedIds.filter((seed) => seed !== slot.id);
      const first = randomInt(context.random, 0, seeds.length);
      runtime.join([...seeds.slice(first), ...seeds.slice(0, first)]);
    } else if (slot.index === 0) {
      runtime.join([]);
    } else {
      const first = o.ids[0] as NodeId;
      const atMs = (slot.index * o.joinSpreadMs) / o.ids.length;
      context.timer.setTimer(atMs, () => runtime.join([first]));
    }
    return {
      runtime,
      halt: () => {
        this.harvest(slot, runtime);
        runtime.stop();
        this.notMember(slot);
      },
    };
  }

  /**
   * The transport the runtime sees: the host's own, except that a starved member reads its
   * inbound messages late, in arrival order, while its timers still fire on time.
   */
  private slowableTransport(
    slot: MemberSlot, context: HostContext<SwimMessage>,
  ): Transport<SwimMessage> {
    let handler: TransportHandler<SwimMessage> | undefined;
    let readAtMsLast = -Infinity;
    /** Messages held back and not read yet: while any, later ones queue behind them. */
    let held = 0;
    const inner = context.transport;
    inner.setHandler({
      onMessage: (from, message) => {
        if (slot.inboundDelayMs === 0 && held === 0) {
          handler?.onMessage(from, message);
          return;
        }
        const nowMs = context.clock.monotonicMs();
        const atMs = Math.max(nowMs + slot.inboundDelayMs, readAtMsLast);
        readAtMsLast = atMs;
        held++;
        context.timer.setTimer(atMs - nowMs, () => {
          held--;
          handler?.onMessage(from, message);
        });
      },
    });
    return {
      localId: inner.localId,
      send: (to, message) => inner.send(to, message),
      sendDatagram: (to, message) => inner.sendDatagram(to, message),
      setHandler: (h) => {
        handler = h;
      },
      close: () => inner.close(),
    };
  }

  private onEvent(slot: MemberSlot, event: MembershipEvent): void {
    const nowMs = this.scheduler.nowMs;
    if (event.kind === 'joined' && event.member === slot.id && !slot.member) {
      slot.member = true;
      this.memberSet.add(slot.id);
      // Its leader arrives with the leader-changed event that follows in the same drain.
      this.agreement.add(slot.id, undefined);
      this.observer?.onAgreementChanged(nowMs);
    } else if (event.kind === 'leader-changed' && slot.member) {
      this.agreement.set(slot.id, event.leader);
      this.observer?.onAgreementChanged(nowMs);
    }
    this.observer?.onMemberEvent(slot.id, event, nowMs);
    if (this.scheduler.recorder !== undefined) this.record(slot.id, event, nowMs);
  }

  /**
   * Into the recording, bounded at any size: a member's standing only when it is news (a crash
   * seen by 1,000 members is one suspect and one dead, not 2,000: see isNews), and
   * the leader only when the answer members give changes.
   */
  private record(observer: NodeId, event: MembershipEvent, nowMs: number): void {
    const recorder = this.scheduler.recorder!;
    const news = standingNews(observer, event);
    if (news !== undefined && this.isNews(news, observer)) {
      this.newsOf.set(news.member, { state: news.state, incarnation: news.incarnation });
      recorder.note({ kind: 'member', atMs: nowMs, node: news.member, state: news.state,
        by: observer, incarnation: news.incarnation });
    }
    this.recordLeader(nowMs);
  }

  /**
   * SWIM's own precedence (a higher incarnation, or at the same one alive < suspect < dead,
   * left): the members who learn a suspicion after the first declared it dead add nothing. A
   * member's word on itself (admitted, refuted, rejoined) is always news: a restarted process
   * starts again.
   */
  private isNews(news: { member: NodeId; state: string; incarnation: number },
    observer: NodeId): boolean {
    const last = this.newsOf.get(news.member);
    if (last === undefined || observer === news.member) {
      return last?.state !== news.state || last.incarnation !== news.incarnation;
    }
    if (news.incarnation !== last.incarnation) return news.incarnation > last.incarnation;
    return STANDING_RANK[news.state]! > STANDING_RANK[last.state]!;
  }

  private recordLeader(nowMs: number): void {
    const recorder = this.scheduler.recorder;
    if (recorder === undefined) return;
    const unanimous = this.agreement.unanimous();
    const key = unanimous?.key ?? '';
    if (key === this.leaderNews) return;
    const before = this.leaderNews;
    this.leaderNews = key;
    const generation = unanimous === undefined ? 0 : Number(key.slice(key.lastIndexOf('@') + 1));
    const answers = unanimous === undefined ? this.agreement.describe() : '';
    const event = { kind: 'leader', atMs: nowMs, leader: unanimous?.leader, generation,
      answers: answers.length > 200 ? `${answers.slice(0, 199)}…` : answers } as const;
    // An answer that lasted no time (a joiner names none, then the leader, in one drain) is
    // replaced, not kept: a 1,000-member join wave would note it 2,000 times.
    const events = recorder.events;
    const last = events[events.length - 1];
    if (last !== undefined && last === this.leaderEventLast && last.atMs === nowMs) {
      if (key === this.leaderKeyBefore) {
        // Back to the answer before it: nothing happened.
        events.pop();
        this.leaderEventLast = undefined;
        return;
      }
      events[events.length - 1] = event;
    } else {
      this.leaderKeyBefore = before;
      recorder.note(event);
    }
    this.leaderEventLast = event;
  }

  private notMember(slot: MemberSlot): void {
    if (!slot.member) return;
    slot.member = false;
    this.memberSet.delete(slot.id);
    this.agreement.remove(slot.id);
    this.observer?.onMemberGone(slot.id);
    this.observer?.onAgreementChanged(this.scheduler.nowMs);
    this.recordLeader(this.scheduler.nowMs);
  }

  private harvest(slot: MemberSlot, runtime: SwimRuntime): void {
    const status = runtime.status();
    const counters: Readonly<SwimCounters> = status.counters;
    this.totals.messages += counters.messagesSent;
    this.totals.bytes += counters.bytesSent;
    this.totals.refutations += counters.refutations;
    this.totals.invalidMessages += status.invalidMessagesDropped;
    this.totals.upMs += this.scheduler.nowMs - slot.upSinceMs;
    slot.upSinceMs = this.scheduler.nowMs;
  }

  private host(id: NodeId): SimHost<SwimMessage, GossipProcess> {
    const host = this.hosts.get(id);
    assert(host !== undefined, () => `unknown member ${id}`);
    return host;
  }

  private slot(id: NodeId): MemberSlot {
    const slot = this.slots.get(id);
    assert(slot !== undefined, () => `unknown member ${id}`);
    return slot;
  }
}

/** SWIM's order of standings at one incarnation (the recording's news follows it). */
const STANDING_RANK: Readonly<Record<string, number>> = { alive: 0, suspect: 1, dead: 2, left: 2 };

/** What an event says of someone's standing: a view of another member, or of itself. */
function standingNews(observer: NodeId, event: MembershipEvent):
  { member: NodeId; state: string; incarnation: number } | undefined {
  switch (event.kind) {
    case 'joined':
      // Everyone's joins of everyone would be N² events: only a member's own admission.
      return event.member === observer
        ? { member: observer, state: 'alive', incarnation: event.incarnation } : undefined;
    case 'suspect': case 'alive': case 'dead': case 'left':
      return { member: event.member, state: event.kind, incarnation: event.incarnation };
    case 'refuted': case 'rejoined':
      return { member: observer, state: 'alive', incarnation: event.incarnation };
    default:
      return undefined;
  }
}
