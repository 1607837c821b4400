/**
 * A tiny deterministic harness for SWIM tests (not the product simulator): members in one
 * process, a queue of messages delivered after a seeded latency, per-direction link blocking,
 * extra inbound delay per member, crashes, and virtual time advanced by calling `tick` at each
 * member's `nextDeadlineMs()`. Every message goes through `validateSwimMessage`, as an adapter
 * would, so the members never share objects.
 */
import assert from 'node:assert/strict';
import type { NodeId } from '../../../src/core/ids.js';
import { nodeId } from '../../../src/core/ids.js';
import { randomFloat } from '../../../src/core/random.js';
import {
  estimateSwimMessageBytes, SwimMember, SWIM_DEFAULTS_LOCAL, validateSwimMessage,
  type MembershipEvent, type SwimConfig, type SwimMessage,
} from '../../../src/core/swim/index.js';
import { Prng } from '../../../src/sim/prng.js';

interface Delivery {
  readonly atMs: number;
  readonly seq: number;
  readonly from: NodeId;
  readonly to: NodeId;
  readonly message: unknown;
}

export interface LoggedEvent {
  readonly at: NodeId;
  readonly event: MembershipEvent;
}

export interface HarnessOptions {
  readonly seed?: number;
  readonly config?: SwimConfig;
  /** One-way latency is drawn uniformly from [min, max]. Unit: ms. */
  readonly latencyMsMin?: number;
  readonly latencyMsMax?: number;
  /** Probability that a datagram is lost (streams never lose). */
  readonly datagramLossRate?: number;
}

export class SwimHarness {
  nowMs = 0;
  readonly members = new Map<NodeId, SwimMember>();
  readonly events: LoggedEvent[] = [];
  messagesDelivered = 0;
  bytesSent = 0;
  private readonly prng: Prng;
  private readonly config: SwimConfig;
  private readonly latencyMsMin: number;
  private readonly latencyMsMax: number;
  private readonly datagramLossRate: number;
  private readonly queue: Delivery[] = [];
  private seq = 0;
  private readonly crashed = new Set<NodeId>();
  /** Paused members, with the messages held for them until they resume. */
  private readonly paused = new Map<NodeId, Delivery[]>();
  private readonly blocked = new Set<string>();
  private readonly inboundDelayMs = new Map<NodeId, number>();
  private readonly streamTailMs = new Map<string, number>();

  constructor(options: HarnessOptions = {}) {
    this.prng = new Prng(options.seed ?? 1);
    this.config = options.config ?? SWIM_DEFAULTS_LOCAL;
    this.latencyMsMin = options.latencyMsMin ?? 0.5;
    this.latencyMsMax = options.latencyMsMax ?? 2;
    this.datagramLossRate = options.datagramLossRate ?? 0;
  }

  /** Creates member `name` (not started). */
  add(name: string, config: SwimConfig = this.config): SwimMember {
    const id = nodeId(name);
    const random = this.prng.fork();
    const member = new SwimMember({ id, address: `${name}:7946`, config, random });
    this.members.set(id, member);
    return member;
  }

  member(name: string): SwimMember {
    const member = this.members.get(nodeId(name));
    assert.ok(member !== undefined, `no member ${name}`);
    return member;
  }

  /** Creates and joins member `name` through `seeds` (none: bootstraps a cluster). */
  start(name: string, seeds: readonly string[] = [], config?: SwimConfig): SwimMember {
    const member = this.add(name, config);
    member.join(seeds.map(nodeId), this.nowMs);
    this.flush(member);
    return member;
  }

  /** `count` members n1..nCount: n1 bootstraps, the others join through n1 `gapMs` apart. */
  startCluster(count: number, gapMs = 50): void {
    this.start('n1');
    for (let i = 2; i <= count; i++) {
      this.runFor(gapMs);
      this.start(`n${i}`, ['n1']);
    }
  }

  leave(name: string): void {
    const member = this.member(name);
    member.leave(this.nowMs);
    this.flush(member);
  }

  /** The process stops: it receives nothing and its timers never fire again. */
  crash(name: string): void {
    this.crashed.add(nodeId(name));
  }

  /** A new process with the same id starts and joins through `seeds` (its old state is gone). */
  restart(name: string, seeds: readonly string[]): SwimMember {
    this.crashed.delete(nodeId(name));
    return this.start(name, seeds);
  }

  isUp(id: NodeId): boolean {
    return !this.crashed.has(id);
  }

  /** The process stalls (a long GC pause, SIGSTOP): no timers run, messages wait for it. */
  pause(name: string): void {
    this.paused.set(nodeId(name), []);
  }

  /** The stalled process runs again and reads everything that arrived meanwhile. */
  resume(name: string): void {
    const id = nodeId(name);
    const held = this.paused.get(id) ?? [];
    this.paused.delete(id);
    for (const d of held) this.push({ ...d, atMs: this.nowMs, seq: this.seq++ });
  }

  /** Drops messages from `a` to `b` (one direction) until unblocked. */
  block(a: string, b: string): void {
    this.blocked.add(`${a}>${b}`);
  }

  /** Cuts every link between the groups (both directions). */
  partition(...groups: readonly string[][]): void {
    for (const group of groups) {
      for (const other of groups) {
        if (other === group) continue;
        for (const a of group) for (const b of other) this.block(a, b);
      }
    }
  }

  heal(): void {
    this.blocked.clear();
  }

  /** Every message to `name` arrives `delayMs` later than it otherwise would. */
  delayInbound(name: string, delayMs: number): void {
    this.inboundDelayMs.set(nodeId(name), delayMs);
  }

  liveMembers(): SwimMember[] {
    return [...this.members.values()].filter((m) => this.isUp(m.id));
  }

  eventsOf(kind: MembershipEvent['kind']): LoggedEvent[] {
    return this.events.filter((e) => e.event.kind === kind);
  }

  runFor(durationMs: number): void {
    this.runUntil(this.nowMs + durationMs);
  }

  /** Runs until `endMs`, or until `done()` holds after some step (then returns true). */
  runUntil(endMs: number, done?: () => boolean): boolean {
    let sameTimeSteps = 0;
    for (;;) {
      const next = this.nextStep();
      if (next === undefined || next.atMs > endMs) break;
      sameTimeSteps = next.atMs === this.nowMs ? sameTimeSteps + 1 : 0;
      assert.ok(sameTimeSteps < 100_000, `no progress at ${this.nowMs} ms`);
      this.nowMs = Math.max(this.nowMs, next.atMs);
      next.run();
      if (done?.() === true) return true;
    }
    this.nowMs = Math.max(this.nowMs, endMs);
    return false;
  }

  private nextStep(): { atMs: number; run: () => void } | undefined {
    let best: { atMs: number; run: () => void } | undefined;
    const head = this.queue[0];
    if (head !== undefined) best = { atMs: head.atMs, run: () => this.deliverHead() };
    for (const member of this.members.values()) {
      if (!this.isUp(member.id) || this.paused.has(member.id)) continue;
      const at = member.nextDeadlineMs();
      if (at === undefined || (best !== undefined && at >= best.atMs)) continue;
      best = {
        atMs: at,
        run: () => {
          member.tick(Math.max(this.nowMs, at));
          this.flush(member);
        },
      };
    }
    return best;
  }

  private deliverHead(): void {
    const delivery = this.popHead();
    const to = this.members.get(delivery.to);
    if (to === undefined || !this.isUp(delivery.to)) return;
    if (this.blocked.has(`${delivery.from}>${delivery.to}`)) return;
    const held = this.paused.get(delivery.to);
    if (held !== undefined) {
      held.push(delivery);
      return;
    }
    const checked = validateSwimMessage(delivery.message);
    assert.ok(checked.ok, `invalid message on the wire: ${JSON.stringify(checked)}`);
    this.messagesDelivered++;
    to.step(delivery.from, checked.message, this.nowMs);
    this.flush(to);
  }

  /** Sends everything `member` produced and logs its events. */
  flush(member: SwimMember): void {
    const ready = member.drain();
    for (const event of ready.events) this.events.push({ at: member.id, event });
    for (const out of ready.messages) this.enqueue(member.id, out.to, out.message, out.channel);
  }

  private enqueue(from: NodeId, to: NodeId, message: SwimMessage, channel: string): void {
    this.bytesSent += estimateSwimMessageBytes(message);
    if (channel === 'datagram' && randomFloat(this.prng) < this.datagramLossRate) return;
    const span = this.latencyMsMax - this.latencyMsMin;
    let atMs = this.nowMs + this.latencyMsMin + span * randomFloat(this.prng)
      + (this.inboundDelayMs.get(to) ?? 0);
    if (channel === 'stream') {
      // A stream keeps its order per link.
      const link = `${from}>${to}`;
      atMs = Math.max(atMs, this.streamTailMs.get(link) ?? 0);
      this.streamTailMs.set(link, atMs);
    }
    // Structured clone: the receiver never shares an object with the sender.
    this.push({ atMs, seq: this.seq++, from, to, message: structuredClone(message) });
  }

  // A binary heap ordered by (atMs, seq).
  private push(delivery: Delivery): void {
    const heap = this.queue;
    heap.push(delivery);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Delivery, heap[parent] as Delivery)) break;
      [heap[i], heap[parent]] = [heap[parent] as Delivery, heap[i] as Delivery];
      i = parent;
    }
  }

  private popHead(): Delivery {
    const heap = this.queue;
    const top = heap[0] as Delivery;
    const last = heap.pop() as Delivery;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l] as Delivery, heap[m] as Delivery)) m = l;
        if (r < heap.length && before(heap[r] as Delivery, heap[m] as Delivery)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m] as Delivery, heap[i] as Delivery];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Delivery, b: Delivery): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}

/** A compact picture of one member's view: id, state, incarnation, age per member. */
export function viewOf(member: SwimMember): string {
  return member.members()
    .map((m) => `${m.id}:${m.state}:${m.incarnation}:${m.age}`)
    .join(' ');
}
