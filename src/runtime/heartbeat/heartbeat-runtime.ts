/**
 * The HeartBeat pattern as a running component: every `heartbeatIntervalMs` this node sends a
 * small datagram to each peer, feeds the heartbeats it receives into one or more failure
 * detectors, and re-evaluates them every `checkIntervalMs`, reporting each change of a peer's
 * status (available ⇄ suspected) with the detector that decided it.
 *
 * Runs unchanged over real adapters (UDP, system clock) and in the simulator.
 */
import { assert } from '../../core/assert.js';
import type { NodeId } from '../../core/ids.js';
import type { Clock } from '../../ports/clock.js';
import type { Timer, TimerHandle } from '../../ports/timer.js';
import type { Transport } from '../../ports/transport.js';

/** What the runtime needs of a failure detector (both of core/detector's detectors fit). */
export interface MonitoringDetector {
  heartbeat(peer: NodeId, nowMs: number): void;
  watch(peer: NodeId, nowMs: number): void;
  isAvailable(peer: NodeId, nowMs: number): boolean;
  remove(peer: NodeId): void;
}

export interface HeartbeatMessage {
  readonly kind: 'heartbeat';
  /** The sender's process incarnation: a restarted peer starts a fresh detector history. */
  readonly incarnation: number;
  readonly sequence: number;
}

export interface HeartbeatRuntimeConfig {
  readonly peers: readonly NodeId[];
  /** How often heartbeats are sent. Unit: ms. */
  readonly heartbeatIntervalMs: number;
  /** How often detectors are evaluated; the resolution of detection times. Unit: ms. */
  readonly checkIntervalMs: number;
  /** This process's incarnation (restart count), carried in every heartbeat. */
  readonly incarnation: number;
}

export interface HeartbeatComponents {
  readonly clock: Clock;
  readonly timer: Timer;
  readonly transport: Transport<HeartbeatMessage>;
  readonly detectors: readonly { readonly name: string; readonly detector: MonitoringDetector }[];
  /** Called on every status change a detector decides. */
  readonly onStatusChange: (change: PeerStatusChange) => void;
}

export interface PeerStatusChange {
  readonly detector: string;
  readonly peer: NodeId;
  readonly available: boolean;
  readonly nowMs: number;
}

export class HeartbeatRuntime {
  private sequence = 0;
  private readonly peerIncarnation = new Map<NodeId, number>();
  /** Last status reported, per detector (outer) and peer (inner, in `config.peers` order). */
  private readonly suspected: boolean[][];
  private readonly timers: TimerHandle[] = [];
  private stopped = false;

  constructor(private readonly config: HeartbeatRuntimeConfig,
    private readonly c: HeartbeatComponents) {
    assert(config.heartbeatIntervalMs > 0,
      () => `heartbeatIntervalMs must be > 0: ${config.heartbeatIntervalMs}`);
    assert(config.checkIntervalMs > 0,
      () => `checkIntervalMs must be > 0: ${config.checkIntervalMs}`);
    this.suspected = c.detectors.map(() => config.peers.map(() => false));
    const nowMs = c.clock.monotonicMs();
    for (const peer of config.peers) {
      for (const { detector } of c.detectors) detector.watch(peer, nowMs);
    }
    c.transport.setHandler({ onMessage: (from, message) => this.onHeartbeat(from, message) });
    this.sendHeartbeats();
    this.check();
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.splice(0)) timer.cancel();
  }

  isSuspected(detector: string, peer: NodeId): boolean {
    const d = this.c.detectors.findIndex((entry) => entry.name === detector);
    const p = this.config.peers.indexOf(peer);
    return d >= 0 && p >= 0 && this.suspected[d]![p]!;
  }

  private sendHeartbeats(): void {
    if (this.stopped) return;
    const message: HeartbeatMessage = {
      kind: 'heartbeat',
      incarnation: this.config.incarnation,
      sequence: this.sequence++,
    };
    for (const peer of this.config.peers) this.c.transport.sendDatagram(peer, message);
    this.rearm(this.config.heartbeatIntervalMs, () => this.sendHeartbeats(), 0);
  }

  private check(): void {
    if (this.stopped) return;
    const nowMs = this.c.clock.monotonicMs();
    const peers = this.config.peers;
    for (let d = 0; d < this.c.detectors.length; d++) {
      const { name, detector } = this.c.detectors[d]!;
      const suspected = this.suspected[d]!;
      for (let p = 0; p < peers.length; p++) {
        const available = detector.isAvailable(peers[p]!, nowMs);
        if (available !== suspected[p]) continue;
        suspected[p] = !available;
        this.c.onStatusChange({ detector: name, peer: peers[p]!, available, nowMs });
      }
    }
    this.rearm(this.config.checkIntervalMs, () => this.check(), 1);
  }

  private onHeartbeat(from: NodeId, message: HeartbeatMessage): void {
    if (this.stopped || message.kind !== 'heartbeat') return;
    const nowMs = this.c.clock.monotonicMs();
    const known = this.peerIncarnation.get(from);
    if (known !== undefined && message.incarnation < known) return; // a stale life's datagram
    if (known !== undefined && message.incarnation > known) {
      // A restarted peer: its old inter-arrival history says nothing about the new process.
      for (const { detector } of this.c.detectors) {
        detector.remove(from);
        detector.watch(from, nowMs);
      }
    }
    this.peerIncarnation.set(from, message.incarnation);
    for (const { detector } of this.c.detectors) detector.heartbeat(from, nowMs);
  }

  private rearm(delayMs: number, run: () => void, slot: number): void {
    this.timers[slot] = this.c.timer.setTimer(delayMs, run);
  }
}
