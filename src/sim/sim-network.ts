/**
 * The simulated network: every message between simulated nodes goes through here, with latency
 * drawn from a distribution, loss, duplication, reordering and partitions (full, partial and
 * asymmetric: links are blocked per direction). Deliveries are mixed into the run's trace hash.
 */
import { assert } from '../core/assert.js';
import type { NodeId } from '../core/ids.js';
import { randomChance, randomFloat } from '../core/random.js';
import type { Transport, TransportHandler } from '../ports/transport.js';
import type { Prng } from './prng.js';
import type { Scheduler } from './scheduler.js';
import type { RecordedMessage } from './sim-recorder.js';
import type { TraceHash } from './trace-hash.js';

export interface NetworkFaults {
  /** Probability that a message is lost. Unit: ratio in [0, 1). */
  readonly lossRate: number;
  /** Probability that a delivered message is delivered twice. Unit: ratio in [0, 1). */
  readonly duplicateRate: number;
  /** Latency floor. Unit: ms. */
  readonly latencyMsMin: number;
  /** Mean of the exponential part added to the floor. Unit: ms. */
  readonly latencyMsMeanExtra: number;
  /** Latency cap (the exponential tail is cut here). Unit: ms. */
  readonly latencyMsMax: number;
  /**
   * When false, stream messages on a link arrive in the order sent (the TCP contract); when
   * true they may overtake each other like datagrams (nastier than the contract).
   */
  readonly reorderStreams: boolean;
}

export const NETWORK_FAULTS_NONE: NetworkFaults = Object.freeze({
  lossRate: 0,
  duplicateRate: 0,
  latencyMsMin: 0.1,
  latencyMsMeanExtra: 0.2,
  latencyMsMax: 2,
  reorderStreams: false,
});

/** A link's own quality on top of the network-wide faults (real links differ). */
export interface LinkQuality {
  /** Extra loss on this link, added to the network-wide rate. Unit: ratio. */
  readonly lossRateExtra: number;
  /** Extra mean of the exponential latency part on this link. Unit: ms. */
  readonly latencyMsMeanExtra: number;
}

export interface NetworkStats {
  sent: number;
  /** Messages a hostile actor forged (`inject`), counted apart from the members' own. */
  injected: number;
  delivered: number;
  dropped: number;
  duplicated: number;
  bytesSent: number;
}

export interface SimNetworkOptions<M> {
  readonly faults: NetworkFaults;
  /** A short deterministic description of a message, mixed into the trace hash. */
  readonly describe: (message: M) => string;
  /** The message's size on the wire, for load figures. Unit: bytes. */
  readonly sizeBytes: (message: M) => number;
  /**
   * How loss treats stream messages. 'drop' (default): lost like a datagram, as a reset
   * connection loses what was in flight. 'retransmit': as TCP does it, each loss delays the
   * message by `streamRetransmitMs` instead (up to 8 tries, then it is lost), so a protocol
   * that sends a stream message once (a join answer) is not judged on datagram loss.
   */
  readonly streamLoss?: 'drop' | 'retransmit';
}

/** TCP's minimum retransmission timeout on Linux (RTO_MIN). Unit: ms. */
export const STREAM_RETRANSMIT_MS = 200;
/** Tries of a stream message under 'retransmit' before it counts as lost. */
const STREAM_TRIES_MAX = 8;

interface Endpoint<M> {
  handler: TransportHandler<M> | undefined;
  up: boolean;
  /** Grows on every restart; stream messages sent to an earlier incarnation are lost. */
  incarnation: number;
}

export class SimNetwork<M> {
  private readonly endpoints = new Map<NodeId, Endpoint<M>>();
  private readonly blockedLinks = new Set<string>();
  private readonly linkQuality = new Map<string, LinkQuality>();
  /** Last scheduled delivery per link, to keep stream order. Unit: ms (virtual). */
  private readonly linkTailMs = new Map<string, number>();
  private faults: NetworkFaults;
  readonly stats: NetworkStats = {
    sent: 0, injected: 0, delivered: 0, dropped: 0, duplicated: 0, bytesSent: 0,
  };
  /** Bytes and messages sent per node, for per-member load figures. */
  readonly sentByNode = new Map<NodeId, { messages: number; bytes: number }>();

  constructor(
    private readonly scheduler: Scheduler,
    private readonly prng: Prng,
    private readonly trace: TraceHash,
    private readonly options: SimNetworkOptions<M>,
  ) {
    this.faults = options.faults;
    validateNetworkFaults(this.faults);
  }

  get currentFaults(): NetworkFaults {
    return this.faults;
  }

  setFaults(faults: NetworkFaults): void {
    validateNetworkFaults(faults);
    this.faults = faults;
  }

  /** The transport a node uses; one per node id, kept across the node's restarts. */
  attach(id: NodeId): Transport<M> {
    assert(!this.endpoints.has(id), () => `node ${id} attached twice`);
    this.endpoints.set(id, { handler: undefined, up: true, incarnation: 0 });
    this.sentByNode.set(id, { messages: 0, bytes: 0 });
    return new SimTransport(this, id);
  }

  /** Marks a node crashed (down) or restarted (up). Peers see their streams to it reset. */
  setUp(id: NodeId, up: boolean): void {
    const endpoint = this.endpoint(id);
    if (endpoint.up === up) return;
    endpoint.up = up;
    if (up) return;
    endpoint.incarnation++;
    // The kernel closes a dead process's sockets: connected peers see a reset soon after, and
    // after the stream data already on the wire (TCP delivers it before the FIN).
    for (const [peerId, peer] of this.endpoints) {
      if (peerId === id || !peer.up || this.isBlocked(id, peerId)) continue;
      const incarnation = peer.incarnation;
      const tailMs = (this.linkTailMs.get(linkKey(id, peerId)) ?? 0) - this.scheduler.nowMs;
      this.scheduler.schedule(Math.max(this.drawLatencyMs(), tailMs), () => {
        if (peer.up && peer.incarnation === incarnation) peer.handler?.onPeerReset?.(id);
      });
    }
  }

  isUp(id: NodeId): boolean {
    return this.endpoint(id).up;
  }

  /** Gives one direction of a link its own extra loss and jitter. */
  setLinkQuality(from: NodeId, to: NodeId, quality: LinkQuality): void {
    assert(quality.lossRateExtra >= 0 && quality.lossRateExtra < 1,
      () => `lossRateExtra not in [0, 1): ${quality.lossRateExtra}`);
    assert(quality.latencyMsMeanExtra >= 0, () => `latencyMsMeanExtra < 0: ${quality.latencyMsMeanExtra}`);
    this.linkQuality.set(linkKey(from, to), quality);
  }

  /** Blocks messages from `from` to `to` (one direction). */
  blockLink(from: NodeId, to: NodeId): void {
    this.blockedLinks.add(linkKey(from, to));
  }

  isBlocked(from: NodeId, to: NodeId): boolean {
    // No key string per message while nothing is blocked (most of every run).
    return this.blockedLinks.size > 0 && this.blockedLinks.has(linkKey(from, to));
  }

  private qualityOf(from: NodeId, to: NodeId): LinkQuality | undefined {
    return this.linkQuality.size === 0 ? undefined : this.linkQuality.get(linkKey(from, to));
  }

  /** Splits the nodes into groups that cannot reach each other (both directions). */
  partition(groups: readonly (readonly NodeId[])[]): void {
    for (const a of groups) {
      for (const b of groups) {
        if (a === b) continue;
        for (const from of a) for (const to of b) this.blockLink(from, to);
      }
    }
    this.scheduler.recorder?.note({ kind: 'partition', atMs: this.scheduler.nowMs,
      links: this.blockedLinkPairs() });
  }

  /** The links cut now, as [from, to] pairs (for the recording). */
  blockedLinkPairs(): string[][] {
    return [...this.blockedLinks].map((key) => key.split('\u0000'));
  }

  /** Removes every partition. */
  heal(): void {
    this.blockedLinks.clear();
    this.scheduler.recorder?.note({ kind: 'heal', atMs: this.scheduler.nowMs });
  }

  send(from: NodeId, to: NodeId, message: M, stream: boolean): void {
    const target = this.endpoints.get(to);
    const sender = this.endpoint(from);
    if (!sender.up) return;
    const size = this.options.sizeBytes(message);
    this.stats.sent++;
    this.stats.bytesSent += size;
    const perNode = this.sentByNode.get(from)!;
    perNode.messages++;
    perNode.bytes += size;
    const quality = this.qualityOf(from, to);
    const lossRate = Math.min(0.99, this.faults.lossRate + (quality?.lossRateExtra ?? 0));
    const recorder = this.scheduler.recorder;
    const record = recorder?.sent(this.scheduler.nowMs, from, to, this.options.describe(message));
    if (target === undefined || this.isBlocked(from, to)) {
      this.stats.dropped++;
      return;
    }
    let retransmitMs = 0;
    if (stream && this.options.streamLoss === 'retransmit') {
      let tries = 1;
      while (tries <= STREAM_TRIES_MAX && randomChance(this.prng, lossRate)) tries++;
      retransmitMs = (tries - 1) * STREAM_RETRANSMIT_MS;
      if (tries > STREAM_TRIES_MAX) {
        this.stats.dropped++;
        return;
      }
    } else if (randomChance(this.prng, lossRate)) {
      this.stats.dropped++;
      return;
    }
    const copies = randomChance(this.prng, this.faults.duplicateRate) ? 2 : 1;
    if (copies === 2) this.stats.duplicated++;
    for (let i = 0; i < copies; i++) {
      this.scheduleDelivery(from, to, target, message, stream, retransmitMs,
        i === 0 ? record : undefined);
    }
  }

  private scheduleDelivery(from: NodeId, to: NodeId, target: Endpoint<M>, message: M,
    stream: boolean, extraMs: number, record: RecordedMessage | undefined): void {
    let delayMs = extraMs + this.drawLatencyMs(this.qualityOf(from, to)?.latencyMsMeanExtra ?? 0);
    if (stream && !this.faults.reorderStreams) {
      const key = linkKey(from, to);
      const tailMs = this.linkTailMs.get(key) ?? 0;
      delayMs = Math.max(delayMs, tailMs - this.scheduler.nowMs);
      this.linkTailMs.set(key, this.scheduler.nowMs + delayMs);
    }
    const incarnation = target.incarnation;
    this.scheduler.schedule(delayMs, () => {
      // A restarted receiver never sees stream messages meant for its previous life, and a link
      // cut while a message is on the wire loses it.
      if (!target.up || (stream && target.incarnation !== incarnation) || this.isBlocked(from, to)) {
        this.stats.dropped++;
        return;
      }
      this.stats.delivered++;
      if (record !== undefined) record[4] = this.scheduler.nowMs;
      this.trace.mixNumber(this.scheduler.nowMs);
      this.trace.mixString(from);
      this.trace.mixString(to);
      this.trace.mixString(this.options.describe(message));
      target.handler?.onMessage(from, message);
    });
  }

  /**
   * A message forged by a hostile actor on its own connection to `to`, claiming to come from
   * `from` (any id, member or not). The members' partitions and losses do not apply to it
   * (it is not their link); it is lost if `to` is down when it arrives, or restarted since it
   * was sent (the connection died with the process).
   */
  inject(from: NodeId, to: NodeId, message: M): void {
    const target = this.endpoint(to);
    this.stats.injected++;
    const incarnation = target.incarnation;
    this.scheduler.schedule(this.drawLatencyMs(), () => {
      if (!target.up || target.incarnation !== incarnation) {
        this.stats.dropped++;
        return;
      }
      this.stats.delivered++;
      this.trace.mixNumber(this.scheduler.nowMs);
      this.trace.mixString(`forged:${from}`);
      this.trace.mixString(to);
      this.trace.mixString(this.options.describe(message));
      target.handler?.onMessage(from, message);
    });
  }

  private drawLatencyMs(linkMeanExtraMs = 0): number {
    const f = this.faults;
    const u = randomFloat(this.prng);
    const extra = -Math.log(1 - u) * (f.latencyMsMeanExtra + linkMeanExtraMs);
    return Math.min(f.latencyMsMax + 20 * linkMeanExtraMs, f.latencyMsMin + extra);
  }

  setHandler(id: NodeId, handler: TransportHandler<M>): void {
    this.endpoint(id).handler = handler;
  }

  private endpoint(id: NodeId): Endpoint<M> {
    const endpoint = this.endpoints.get(id);
    assert(endpoint !== undefined, () => `unknown node ${id}`);
    return endpoint;
  }
}

class SimTransport<M> implements Transport<M> {
  constructor(private readonly network: SimNetwork<M>, readonly localId: NodeId) {}

  send(to: NodeId, message: M): void {
    this.network.send(this.localId, to, message, true);
  }

  sendDatagram(to: NodeId, message: M): void {
    this.network.send(this.localId, to, message, false);
  }

  setHandler(handler: TransportHandler<M>): void {
    this.network.setHandler(this.localId, handler);
  }

  close(): void {
    this.network.setUp(this.localId, false);
  }
}

function linkKey(from: NodeId, to: NodeId): string {
  return `${from}\u0000${to}`;
}

/** Throws an AssertionError listing every bad field at once. */
export function validateNetworkFaults(f: NetworkFaults): void {
  const problems: string[] = [];
  if (!(f.lossRate >= 0 && f.lossRate < 1)) problems.push(`lossRate ${f.lossRate} not in [0, 1)`);
  if (!(f.duplicateRate >= 0 && f.duplicateRate < 1)) {
    problems.push(`duplicateRate ${f.duplicateRate} not in [0, 1)`);
  }
  if (!(f.latencyMsMin >= 0)) problems.push(`latencyMsMin ${f.latencyMsMin} < 0`);
  if (!(f.latencyMsMeanExtra >= 0)) problems.push(`latencyMsMeanExtra ${f.latencyMsMeanExtra} < 0`);
  if (!(f.latencyMsMax >= f.latencyMsMin)) {
    problems.push(`latencyMsMax ${f.latencyMsMax} < latencyMsMin ${f.latencyMsMin}`);
  }
  assert(problems.length === 0, () => `invalid network faults: ${problems.join('; ')}`);
}
