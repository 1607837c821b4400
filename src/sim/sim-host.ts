/**
 * A simulated machine running one process: its clock (with drift), its disk (with crash
 * semantics), its network endpoint, and the process itself, which can crash (kill -9: unsynced
 * writes lost, timers gone, peers see resets), restart (a fresh process from the same disk), and
 * pause (SIGSTOP: nothing runs, messages queue up, then everything runs late on resume).
 *
 * The process is the real runtime code, given ports: the same code that runs on real adapters.
 */
import { assert } from '../core/assert.js';
import type { NodeId } from '../core/ids.js';
import type { Random } from '../core/random.js';
import type { Clock } from '../ports/clock.js';
import type { Storage } from '../ports/storage.js';
import type { Timer, TimerHandle } from '../ports/timer.js';
import type { Transport, TransportHandler } from '../ports/transport.js';
import type { Prng } from './prng.js';
import type { Scheduler } from './scheduler.js';
import { SimClock, type SimClockOptions } from './sim-clock.js';
import type { SimNetwork } from './sim-network.js';
import type { SimRecorder } from './sim-recorder.js';
import { SimStorage, type SimStorageOptions } from './sim-storage.js';

/** The ports a simulated process is given; one set per life (restart gives a fresh set). */
export interface HostContext<M> {
  readonly id: NodeId;
  readonly clock: Clock;
  readonly timer: Timer;
  readonly transport: Transport<M>;
  readonly storage: Storage;
  readonly random: Random;
  /** How many times this host has started before (0 on the first start). */
  readonly restarts: number;
  /** The run's recording, when one is made (`conclave sim --record`). */
  readonly recorder?: SimRecorder | undefined;
}

/** What a simulated process offers its host. */
export interface SimProcess {
  /** Called when the host crashes: drop references, do no I/O. */
  halt?(): void;
}

export type ProcessFactory<M, P extends SimProcess> = (context: HostContext<M>) => P;

export interface SimHostOptions {
  readonly clock: SimClockOptions;
  readonly storage: SimStorageOptions;
}

export class SimHost<M, P extends SimProcess> {
  readonly clock: SimClock;
  readonly storage: SimStorage;
  private readonly transport: Transport<M>;
  private processValue: P | undefined;
  private life = 0;
  private restartsValue = 0;
  private pausedUntilMs: number | undefined;
  private readonly deferred: (() => void)[] = [];
  private handler: TransportHandler<M> | undefined;

  constructor(
    readonly id: NodeId,
    private readonly scheduler: Scheduler,
    private readonly network: SimNetwork<M>,
    private readonly prng: Prng,
    options: SimHostOptions,
    private readonly factory: ProcessFactory<M, P>,
  ) {
    this.clock = new SimClock(scheduler, options.clock);
    this.storage = new SimStorage(scheduler, prng.fork(), options.storage);
    this.transport = network.attach(id);
    this.transport.setHandler({
      onMessage: (from, message) => this.run(() => this.handler?.onMessage(from, message)),
      onPeerReset: (peer) => this.run(() => this.handler?.onPeerReset?.(peer)),
    });
    this.processValue = this.factory(this.context());
  }

  /** The running process, or undefined while crashed. */
  get process(): P | undefined {
    return this.processValue;
  }

  get isUp(): boolean {
    return this.processValue !== undefined;
  }

  get isPaused(): boolean {
    return this.pausedUntilMs !== undefined;
  }

  get restarts(): number {
    return this.restartsValue;
  }

  /** kill -9: the process is gone, unsynced writes may be lost or torn. */
  crash(): void {
    if (this.processValue === undefined) return;
    this.processValue.halt?.();
    this.processValue = undefined;
    this.handler = undefined;
    this.life++;
    this.pausedUntilMs = undefined;
    this.deferred.length = 0;
    this.clock.cancelAllTimers();
    this.storage.crash();
    this.network.setUp(this.id, false);
    this.scheduler.recorder?.note({ kind: 'crash', atMs: this.scheduler.nowMs, node: this.id });
  }

  /** Starts a fresh process on the same disk. */
  restart(): void {
    assert(this.processValue === undefined, () => `restart of ${this.id}, which is running`);
    this.restartsValue++;
    this.scheduler.recorder?.note({ kind: 'restart', atMs: this.scheduler.nowMs, node: this.id });
    this.network.setUp(this.id, true);
    this.processValue = this.factory(this.context());
  }

  /** SIGSTOP for `durationMs` of real (virtual) time, then SIGCONT. */
  pause(durationMs: number): void {
    if (this.processValue === undefined) return;
    const untilMs = this.scheduler.nowMs + durationMs;
    if (this.pausedUntilMs !== undefined && this.pausedUntilMs >= untilMs) return;
    this.pausedUntilMs = untilMs;
    this.scheduler.recorder?.note({ kind: 'pause', atMs: this.scheduler.nowMs, node: this.id,
      durationMs });
    const life = this.life;
    this.scheduler.schedule(durationMs, () => {
      if (life !== this.life || this.pausedUntilMs !== untilMs) return;
      this.pausedUntilMs = undefined;
      const queued = this.deferred.splice(0);
      for (const work of queued) work();
    });
  }

  /** SIGCONT now, before a pause's own end: queued work runs at once, in order. */
  resume(): void {
    if (this.pausedUntilMs === undefined) return;
    this.pausedUntilMs = undefined;
    this.scheduler.recorder?.note({ kind: 'resume', atMs: this.scheduler.nowMs, node: this.id });
    const queued = this.deferred.splice(0);
    for (const work of queued) work();
  }

  /**
   * Runs `work` on the process's event loop as an outside input (a client request arriving):
   * dropped while the process is crashed, queued while it is paused.
   */
  submit(work: (process: P) => void): void {
    this.run(() => {
      if (this.processValue !== undefined) work(this.processValue);
    });
  }

  /** Runs work on the process's event loop, unless it is crashed; queues it while paused. */
  private run(work: () => void): void {
    if (this.processValue === undefined) return;
    if (this.pausedUntilMs !== undefined) {
      this.deferred.push(work);
      return;
    }
    work();
  }

  private context(): HostContext<M> {
    const life = this.life;
    const host = this;
    const timer: Timer = {
      setTimer(delayMs: number, callback: () => void): TimerHandle {
        return host.clock.setTimer(delayMs, () => {
          if (life === host.life) host.run(callback);
        });
      },
    };
    const transport: Transport<M> = {
      localId: this.id,
      send: (to, message) => {
        if (life === this.life) this.transport.send(to, message);
      },
      sendDatagram: (to, message) => {
        if (life === this.life) this.transport.sendDatagram(to, message);
      },
      setHandler: (handler) => {
        if (life === this.life) this.handler = handler;
      },
      close: () => undefined,
    };
    return {
      id: this.id,
      clock: this.clock,
      timer,
      transport,
      storage: this.storage,
      recorder: this.scheduler.recorder,
      random: this.prng.fork(),
      restarts: this.restartsValue,
    };
  }
}
