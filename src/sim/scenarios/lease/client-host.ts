/**
 * The machine a simulated client runs on: its own drifting clock, and a process that can be
 * frozen (SIGSTOP, a long GC pause, a suspended VM: nothing runs, timers and messages wait, then
 * everything runs late, in the order it became due) and cut off from the network (every message
 * to or from it is lost, as with a pulled cable). Clients never crash: a crashed client is a
 * client that stopped keeping its lease alive, which the workloads already do.
 *
 * Elections and locks must hold through freezes no longer than the holder's lease margin (the
 * timing assumption docs/elections.md states); longer ones are the `--timing-violated` mode.
 *
 * The client process runs the shipped, async client: each timer callback and each message is a
 * task of its own, after which its promise reactions run (the SettleGate is told, and settles
 * them before the next event). On resume, what came due runs one task per event, in order.
 */
import { assert } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import type { Clock } from '../../../ports/clock.js';
import type { Timer, TimerHandle } from '../../../ports/timer.js';
import type { Transport, TransportHandler } from '../../../ports/transport.js';
import type { Scheduler } from '../../scheduler.js';
import { SimClock, type SimClockOptions } from '../../sim-clock.js';
import type { SimNetwork } from '../../sim-network.js';
import type { SettleGate } from '../../settle.js';
import type { LeaseNetMessage } from './core-protocol.js';

export interface ClientHostCounts {
  pauses: number;
  /** Real (virtual) time spent frozen. Unit: ms. */
  pausedMs: number;
  cuts: number;
  /** Messages to or from the client lost to a cut. */
  cutDropped: number;
}

export class SimClientHost {
  readonly clock: SimClock;
  /** What the client process uses: its clock, and timers that wait while it is frozen. */
  readonly processClock: Clock & Timer;
  readonly transport: Transport<LeaseNetMessage>;
  readonly counts: ClientHostCounts = { pauses: 0, pausedMs: 0, cuts: 0, cutDropped: 0 };
  private pausedUntilMs: number | undefined;
  private pausedSinceMs = 0;
  private cutUntilMs = -Infinity;
  private readonly deferred: (() => void)[] = [];
  /** Deferred work is being run, one task per event, after a resume. */
  private draining = false;
  private readonly network: Transport<LeaseNetMessage>;

  constructor(
    readonly id: NodeId,
    private readonly scheduler: Scheduler,
    network: SimNetwork<LeaseNetMessage>,
    clock: SimClockOptions,
    /** Told whenever client code ran, so its promise reactions settle before the next event. */
    private readonly gate?: SettleGate,
  ) {
    this.clock = new SimClock(scheduler, clock);
    this.network = network.attach(id);
    const simClock = this.clock;
    this.processClock = {
      monotonicMs: () => simClock.monotonicMs(),
      wallMs: () => simClock.wallMs(),
      setTimer: (delayMs, callback): TimerHandle => {
        // A timer cancelled after it came due but before the frozen process ran it never runs
        // (as clearTimeout on an overdue timer in Node).
        let cancelled = false;
        const inner = simClock.setTimer(delayMs, () => this.run(() => {
          if (!cancelled) callback();
        }));
        return { cancel: () => {
          cancelled = true;
          inner.cancel();
        } };
      },
    };
    this.transport = {
      localId: id,
      send: (to, message) => this.send(to, message, true),
      sendDatagram: (to, message) => this.send(to, message, false),
      setHandler: (handler) => this.network.setHandler(this.receiving(handler)),
      close: () => undefined,
    };
  }

  get isPaused(): boolean {
    return this.pausedUntilMs !== undefined;
  }

  get isCut(): boolean {
    return this.scheduler.nowMs < this.cutUntilMs;
  }

  /** Freezes the process for `durationMs` of real (virtual) time (longer pauses win). */
  pause(durationMs: number): void {
    assert(durationMs >= 0, () => `${this.id}: pause of ${durationMs} ms`);
    const untilMs = this.scheduler.nowMs + durationMs;
    if (this.pausedUntilMs !== undefined && this.pausedUntilMs >= untilMs) return;
    if (this.pausedUntilMs === undefined) {
      this.counts.pauses++;
      this.pausedSinceMs = this.scheduler.nowMs;
    }
    this.pausedUntilMs = untilMs;
    this.scheduler.schedule(durationMs, () => {
      if (this.pausedUntilMs === untilMs) this.resume();
    });
  }

  /**
   * Lets the process run again now: what became due while it was frozen runs, in order, one
   * task per event at this instant (each task's promise reactions run before the next task).
   */
  resume(): void {
    if (this.pausedUntilMs === undefined) return;
    this.pausedUntilMs = undefined;
    this.counts.pausedMs += this.scheduler.nowMs - this.pausedSinceMs;
    this.drain();
  }

  /** Cuts the client off the network for `durationMs` (or until `reconnect`). */
  cut(durationMs: number): void {
    if (!this.isCut) this.counts.cuts++;
    this.cutUntilMs = Math.max(this.cutUntilMs, this.scheduler.nowMs + durationMs);
  }

  reconnect(): void {
    this.cutUntilMs = -Infinity;
  }

  private run(work: () => void): void {
    // While queued work drains, newer work waits behind it: the process keeps its order.
    if (this.pausedUntilMs !== undefined || this.deferred.length > 0 || this.draining) {
      this.deferred.push(work);
      return;
    }
    this.gate?.mark();
    work();
  }

  /** Runs the next deferred task, and schedules the one after, until frozen again or done. */
  private drain(): void {
    if (this.draining || this.deferred.length === 0) return;
    this.draining = true;
    const next = (): void => {
      // Work that ran may have frozen the process again: the rest then waits for the resume.
      if (this.pausedUntilMs !== undefined) {
        this.draining = false;
        return;
      }
      const work = this.deferred.shift();
      if (work === undefined) {
        this.draining = false;
        return;
      }
      this.gate?.mark();
      work();
      if (this.deferred.length > 0) this.scheduler.schedule(0, next);
      else this.draining = false;
    };
    this.scheduler.schedule(0, next);
  }

  private send(to: NodeId, message: LeaseNetMessage, stream: boolean): void {
    if (this.isCut) {
      this.counts.cutDropped++;
      return;
    }
    if (stream) this.network.send(to, message);
    else this.network.sendDatagram(to, message);
  }

  private receiving(handler: TransportHandler<LeaseNetMessage>):
    TransportHandler<LeaseNetMessage> {
    return {
      onMessage: (from, message) => {
        if (this.isCut) {
          this.counts.cutDropped++;
          return;
        }
        this.run(() => handler.onMessage(from, message));
      },
      onPeerReset: (peer) => this.run(() => handler.onPeerReset?.(peer)),
    };
  }
}
