/**
 * A tiny deterministic harness for RaftNode tests: nodes in one process, a message queue that
 * tests deliver by hand (or all at once), virtual time, synchronous "disks" that a test can
 * crash before a write, and checkers for the Raft safety properties (election safety, committed
 * entries never change, log matching). Not a test file itself.
 */
import { Prng } from '../../../src/sim/prng.js';
import type { LogIndex, NodeId, Term } from '../../../src/core/ids.js';
import { logIndex, nodeId, term as toTerm } from '../../../src/core/ids.js';
import {
  RAFT_DEFAULTS_LOCAL, RAFT_NO_MUTANTS, RaftNode, describeRaftMessage,
} from '../../../src/core/raft/index.js';
import type {
  Entry, RaftConfig, RaftDurableState, RaftEnvelope, RaftMessage, RaftMutants, RaftTuning, Ready,
  Snapshot,
} from '../../../src/core/raft/index.js';

export interface InFlight {
  readonly from: NodeId;
  readonly to: NodeId;
  readonly message: RaftMessage;
}

export interface ClusterOptions {
  readonly ids?: readonly string[];
  /** Bootstrap voters (default: every id); the other ids start as learners. */
  readonly voters?: readonly string[];
  readonly seed?: number;
  readonly tuning?: Partial<RaftTuning>;
  readonly mutants?: Partial<RaftMutants>;
  /** Initial durable state per node (default: empty log, term 0). */
  readonly states?: Readonly<Record<string, RaftDurableState>>;
}

/** Builds a durable state from a list of entry terms: [1, 1, 2] is indexes 1..3. */
export function logOf(terms: readonly number[], hardTerm?: number, commit = 0): RaftDurableState {
  const entries: Entry[] = terms.map((t, i) => ({
    index: logIndex(i + 1), term: toTerm(t), kind: 'normal', data: new Uint8Array([i + 1, t]),
  }));
  const last = terms[terms.length - 1] ?? 0;
  return {
    hardState: { term: toTerm(hardTerm ?? last), vote: undefined, commitIndex: logIndex(commit) },
    entries,
  };
}

export const EMPTY_STATE: RaftDurableState = logOf([]);

interface Disk {
  hardState: RaftDurableState['hardState'];
  /** Entries after the snapshot's index (after 0 without one). */
  entries: Entry[];
  snapshot: Snapshot | undefined;
}

/** The harness's state machine state in a snapshot: how many entries it stands for. */
export function snapshotData(appliedIndex: number): Uint8Array {
  return new TextEncoder().encode(`applied ${appliedIndex}`);
}

export class Cluster {
  nowMs = 0;
  readonly ids: readonly NodeId[];
  readonly nodes = new Map<NodeId, RaftNode>();
  readonly disks = new Map<NodeId, Disk>();
  /** Messages sent and not yet delivered, in send order. */
  inFlight: InFlight[] = [];
  /** Every committed entry applied anywhere, by index: they must never disagree. */
  readonly committed = new Map<number, Entry>();
  readonly applied = new Map<NodeId, Entry[]>();
  /** Per node: the snapshot its state machine was last restored from (InstallSnapshot). */
  readonly restoredFrom = new Map<NodeId, Snapshot>();
  /** Leader per term, as announced by role-changed events: at most one. */
  readonly leaders = new Map<number, NodeId>();
  readonly violations: string[] = [];
  readonly readies = new Map<NodeId, Ready[]>();
  /** Every message ever sent, described (for assertions on traffic). */
  readonly sent: string[] = [];
  private readonly cutLinks = new Set<string>();
  private readonly crashed = new Set<NodeId>();
  private readonly prng: Prng;
  private readonly configs = new Map<NodeId, RaftConfig>();

  constructor(options: ClusterOptions = {}) {
    this.ids = (options.ids ?? ['n1', 'n2', 'n3']).map(nodeId);
    this.prng = new Prng(options.seed ?? 1);
    const voters = options.voters?.map(nodeId) ?? this.ids;
    const learners = this.ids.filter((id) => !voters.includes(id));
    for (const id of this.ids) {
      const config: RaftConfig = {
        ...RAFT_DEFAULTS_LOCAL, ...options.tuning, id, voters, learners,
        mutants: { ...RAFT_NO_MUTANTS, ...options.mutants },
      };
      this.configs.set(id, config);
      const state = options.states?.[id] ?? EMPTY_STATE;
      this.disks.set(id, { hardState: state.hardState, entries: [...state.entries],
        snapshot: state.snapshot });
      this.applied.set(id, []);
      this.readies.set(id, []);
      this.start(id);
    }
  }

  node(id: string): RaftNode {
    const node = this.nodes.get(nodeId(id));
    if (node === undefined) throw new Error(`no live node ${id}`);
    return node;
  }

  /** Drains every Ready of `id`: persist, send, apply, advance. */
  process(id: NodeId): void {
    const node = this.nodes.get(id);
    if (node === undefined) return;
    while (node.hasReady()) this.handleReady(id, node, node.ready());
  }

  /**
   * Takes one Ready of `id`, sends its `messagesBeforePersist`, then crashes the node before
   * anything is persisted (the disk keeps what the earlier Readies wrote).
   */
  processThenCrashBeforePersist(id: NodeId): Ready | undefined {
    const node = this.nodes.get(id);
    const ready = node?.hasReady() === true ? node.ready() : undefined;
    for (const { to, message } of ready?.messagesBeforePersist ?? []) this.send(id, to, message);
    this.crash(id);
    return ready;
  }

  /**
   * Delivers the in-flight message at `position` (default: the oldest) and, unless told not
   * to, drains the receiver's Readies.
   */
  deliver(position = 0, options: { process?: boolean } = {}): InFlight | undefined {
    const [m] = this.inFlight.splice(position, 1);
    if (m === undefined) return undefined;
    const node = this.nodes.get(m.to);
    if (node === undefined || this.isCut(m.from, m.to)) return m;
    node.step(m.from, m.message, this.nowMs);
    if (options.process ?? true) this.process(m.to);
    return m;
  }

  /** Delivers the oldest in-flight message that matches `filter`. */
  deliverFirst(filter: (m: InFlight) => boolean, options: { process?: boolean } = {}): InFlight {
    const position = this.inFlight.findIndex(filter);
    if (position < 0) throw new Error('deliverFirst: no such message in flight');
    return this.deliver(position, options) as InFlight;
  }

  /** Steps time to `id`'s own next deadline and ticks only it (forces who campaigns first). */
  fire(id: string): void {
    const node = this.node(id);
    this.nowMs = Math.max(this.nowMs, node.nextDeadlineMs());
    this.tick(nodeId(id));
  }

  /** Delivers messages (and their answers) until none is left; returns how many. */
  deliverAll(max = 10_000): number {
    let n = 0;
    while (this.inFlight.length > 0) {
      if (++n > max) throw new Error('deliverAll: message storm');
      this.deliver();
    }
    return n;
  }

  /** Drops every in-flight message matching `filter`. */
  drop(filter: (m: InFlight) => boolean): InFlight[] {
    const dropped = this.inFlight.filter(filter);
    this.inFlight = this.inFlight.filter((m) => !filter(m));
    return dropped;
  }

  /**
   * Runs virtual time to `untilMs`, delivering messages instantly: each node ticks at its own
   * next deadline, in time order.
   */
  runUntil(untilMs: number): void {
    for (let guard = 0; guard < 100_000; guard++) {
      this.deliverAll();
      let nextId: NodeId | undefined;
      let nextMs = Number.POSITIVE_INFINITY;
      for (const [id, node] of this.nodes) {
        if (node.nextDeadlineMs() < nextMs) {
          nextMs = node.nextDeadlineMs();
          nextId = id;
        }
      }
      if (nextId === undefined || nextMs > untilMs) {
        this.nowMs = Math.max(this.nowMs, untilMs);
        return;
      }
      this.nowMs = Math.max(this.nowMs, nextMs);
      this.tick(nextId);
    }
    throw new Error('runUntil: too many steps');
  }

  runFor(durationMs: number): void {
    this.runUntil(this.nowMs + durationMs);
  }

  tick(id: NodeId): void {
    const node = this.nodes.get(id);
    if (node === undefined) return;
    node.tick(this.nowMs);
    this.process(id);
  }

  /** Runs until some node leads (at most `withinMs`); returns it. */
  elect(withinMs = 10_000): NodeId {
    const end = this.nowMs + withinMs;
    while (this.nowMs < end) {
      const leader = this.leader();
      if (leader !== undefined) return leader;
      this.runFor(10);
    }
    throw new Error(`no leader within ${withinMs} ms`);
  }

  /** The live node that believes it leads in the highest term, if any. */
  leader(): NodeId | undefined {
    let best: NodeId | undefined;
    let bestTerm = -1;
    for (const [id, node] of this.nodes) {
      const s = node.status();
      if (s.role === 'leader' && s.term > bestTerm) {
        best = id;
        bestTerm = s.term;
      }
    }
    return best;
  }

  propose(id: NodeId, text: string): ReturnType<RaftNode['propose']> {
    const result = this.node(id).propose(new TextEncoder().encode(text), this.nowMs);
    this.process(id);
    return result;
  }

  /** Cuts both directions between a and b (messages in flight on the link are lost). */
  cut(a: NodeId, b: NodeId): void {
    this.cutLinks.add(`${a}>${b}`);
    this.cutLinks.add(`${b}>${a}`);
    this.drop((m) => this.isCut(m.from, m.to));
  }

  isolate(id: NodeId): void {
    for (const other of this.ids) if (other !== id) this.cut(id, other);
  }

  heal(): void {
    this.cutLinks.clear();
  }

  crash(id: NodeId): void {
    this.nodes.delete(id);
    this.crashed.add(id);
    this.drop((m) => m.to === id);
  }

  /**
   * The transport of `at` reports that its stream to `peer` broke (`RaftNode.peerReset`); `at`
   * then drains its Readies.
   */
  peerReset(at: NodeId, peer: NodeId): void {
    const node = this.nodes.get(at);
    if (node === undefined) return;
    node.peerReset(peer, this.nowMs);
    this.process(at);
  }

  /** Crashes `id` as a process dies: every live peer's transport reports its stream reset. */
  crashWithResets(id: NodeId): void {
    this.crash(id);
    for (const other of [...this.nodes.keys()]) this.peerReset(other, id);
  }

  restart(id: NodeId): void {
    this.crashed.delete(id);
    this.applied.set(id, []);
    this.start(id);
  }

  /**
   * `id` takes a snapshot at its applied index (as its runtime would), stores it, drops the
   * stored log up to it, and compacts its in-memory log to `keepEntries` before it.
   */
  snapshotAndCompact(id: NodeId, keepEntries = 0): Snapshot {
    const node = this.nodes.get(id);
    const disk = this.disks.get(id);
    if (node === undefined || disk === undefined) throw new Error(`no live node ${id}`);
    const applied = node.status().appliedIndex;
    const snapshot = node.createSnapshot(applied, snapshotData(applied));
    const base = disk.snapshot?.meta.index ?? 0;
    disk.entries = disk.entries.slice(applied - base);
    disk.snapshot = snapshot;
    node.compact(logIndex(Math.max(node.status().compactedIndex, applied - keepEntries)));
    return snapshot;
  }

  isCrashed(id: NodeId): boolean {
    return this.crashed.has(id);
  }

  /** Raft Log Matching over all live logs: same (index, term) implies the same prefix. */
  checkLogMatching(): void {
    // Compacted entries are undefined: only indexes both logs still hold are compared.
    const logs = [...this.nodes.values()].map((n) => {
      const out: (Entry | undefined)[] = [];
      for (let i = 1; i <= n.status().lastIndex; i++) out.push(n.entry(logIndex(i)));
      return out;
    });
    for (const a of logs) {
      for (const b of logs) {
        const n = Math.min(a.length, b.length);
        let same = false;
        for (let i = n - 1; i >= 0; i--) {
          const x = a[i];
          const y = b[i];
          if (x === undefined || y === undefined) break;
          if (!same && x.term === y.term) same = true;
          if (same && (x.term !== y.term || !bytesEqual(x.data, y.data))) {
            this.violations.push(`log matching broken at index ${i + 1}`);
            return;
          }
        }
      }
    }
  }

  private start(id: NodeId): void {
    const disk = this.disks.get(id);
    const config = this.configs.get(id);
    if (disk === undefined || config === undefined) throw new Error(`unknown node ${id}`);
    const state: RaftDurableState = disk.snapshot === undefined
      ? { hardState: disk.hardState, entries: [...disk.entries] }
      : { hardState: disk.hardState, entries: [...disk.entries], snapshot: disk.snapshot };
    const node = new RaftNode({ config, random: this.prng.fork(), state, nowMs: this.nowMs });
    if (disk.snapshot !== undefined) this.restoredFrom.set(id, disk.snapshot);
    this.nodes.set(id, node);
  }

  /**
   * Takes one Ready of `id` and sends only what may leave before its write (a leader's appends,
   * Raft thesis §10.2.1): the write is in flight until `completeReady`. Pipelining: pass it to
   * `acceptReady` to let the node build the next Ready meanwhile.
   */
  startReady(id: NodeId): Ready {
    const node = this.nodes.get(id);
    if (node === undefined) throw new Error(`no live node ${id}`);
    const ready = node.ready();
    this.readies.get(id)?.push(ready);
    for (const { to, message } of ready.messagesBeforePersist) this.send(id, to, message);
    this.recordLeaders(id, ready);
    return ready;
  }

  /** Applies a Ready from `startReady` and accepts it: its write is still in flight. */
  acceptReady(id: NodeId, ready: Ready): void {
    for (const entry of ready.committedEntries) this.recordApplied(id, entry);
    this.node(id).accept(ready);
  }

  /**
   * The write of a Ready from `startReady` completes: it is stored, its other messages leave,
   * its committed entries are applied (unless it was accepted: they were then), and the node
   * hears it (`advance`).
   */
  completeReady(id: NodeId, ready: Ready, options: { accepted?: boolean } = {}): void {
    const node = this.node(id);
    this.persist(id, ready);
    for (const { to, message } of ready.messages) this.send(id, to, message);
    if (options.accepted !== true) {
      for (const entry of ready.committedEntries) this.recordApplied(id, entry);
    }
    node.advance(ready);
  }

  private handleReady(id: NodeId, node: RaftNode, ready: Ready): void {
    this.readies.get(id)?.push(ready);
    for (const { to, message } of ready.messagesBeforePersist) this.send(id, to, message);
    this.persist(id, ready);
    for (const { to, message } of ready.messages) this.send(id, to, message);
    for (const entry of ready.committedEntries) this.recordApplied(id, entry);
    this.recordLeaders(id, ready);
    node.advance(ready);
  }

  private persist(id: NodeId, ready: Ready): void {
    const disk = this.disks.get(id) as Disk;
    if (ready.snapshot !== undefined) {
      // InstallSnapshot: the snapshot replaces the whole stored log.
      disk.snapshot = ready.snapshot;
      disk.entries = [];
      this.restoredFrom.set(id, ready.snapshot);
    }
    if (ready.hardState !== undefined) disk.hardState = ready.hardState;
    const first = ready.entries[0];
    if (first !== undefined) {
      disk.entries.length = first.index - 1 - (disk.snapshot?.meta.index ?? 0);
      disk.entries.push(...ready.entries);
    }
  }

  private recordLeaders(id: NodeId, ready: Ready): void {
    for (const event of ready.events) {
      if (event.kind !== 'role-changed' || event.to !== 'leader') continue;
      const known = this.leaders.get(event.term);
      if (known !== undefined && known !== id) {
        this.violations.push(`two leaders in term ${event.term}: ${known} and ${id}`);
      }
      this.leaders.set(event.term, id);
    }
  }

  private recordApplied(id: NodeId, entry: Entry): void {
    const applied = this.applied.get(id) as Entry[];
    // After a restore from a snapshot, applying goes on from the snapshot's index.
    const base = this.restoredFrom.get(id)?.meta.index ?? 0;
    const appliedIndex = Math.max(base, applied[applied.length - 1]?.index ?? 0);
    if (entry.index !== appliedIndex + 1) {
      this.violations.push(`${id} applied ${entry.index} after ${appliedIndex}`);
    }
    applied.push(entry);
    const known = this.committed.get(entry.index);
    if (known === undefined) {
      this.committed.set(entry.index, entry);
    } else if (known.term !== entry.term || !bytesEqual(known.data, entry.data)) {
      this.violations.push(`committed entry ${entry.index} changed: term ${known.term} on ` +
        `one node, ${entry.term} on ${id}`);
    }
  }

  private send(from: NodeId, to: NodeId, message: RaftMessage): void {
    this.sent.push(`${from}->${to} ${describeRaftMessage(message)}`);
    if (this.isCut(from, to) || this.crashed.has(to)) return;
    this.inFlight.push({ from, to, message });
  }

  private isCut(from: NodeId, to: NodeId): boolean {
    return this.cutLinks.has(`${from}>${to}`);
  }
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export const ids = (...names: string[]): NodeId[] => names.map(nodeId);

export interface LoneNodeOptions {
  readonly id?: string;
  readonly voters?: readonly string[];
  readonly state?: RaftDurableState;
  readonly tuning?: Partial<RaftTuning>;
  readonly mutants?: Partial<RaftMutants>;
  readonly seed?: number;
  readonly nowMs?: number;
}

/** One RaftNode driven by hand (messages stepped in directly, Readies drained by `drain`). */
export function loneNode(options: LoneNodeOptions = {}): RaftNode {
  const config: RaftConfig = {
    ...RAFT_DEFAULTS_LOCAL, ...options.tuning, id: nodeId(options.id ?? 'n1'),
    voters: (options.voters ?? ['n1', 'n2', 'n3']).map(nodeId),
    mutants: { ...RAFT_NO_MUTANTS, ...options.mutants },
  };
  return new RaftNode({ config, random: new Prng(options.seed ?? 1),
    state: options.state ?? EMPTY_STATE, nowMs: options.nowMs ?? 0 });
}

/** Takes and advances every Ready of `node` (as if persisted, sent and applied). */
export function drain(node: RaftNode): Ready[] {
  const out: Ready[] = [];
  while (node.hasReady()) {
    const ready = node.ready();
    out.push(ready);
    node.advance(ready);
  }
  return out;
}

/**
 * All messages of some Readies: per Ready, those sent before persisting first (a leader's
 * appends and heartbeats), then those sent after.
 */
export function envelopes(readies: readonly Ready[]): RaftEnvelope[] {
  return readies.flatMap((r) => [...r.messagesBeforePersist, ...r.messages]);
}

/** All messages of some Readies (in `envelopes` order), described as `to: description`. */
export function described(readies: readonly Ready[]): string[] {
  return envelopes(readies).map((e) => `${e.to}: ${describeRaftMessage(e.message)}`);
}
export type { LogIndex, Term };
