/**
 * A monitor's view of the services' health (the seeds' HeartBeat pattern, turned around: the
 * monitor asks, and each answer is a heartbeat). Every `healthIntervalMs` it polls each
 * service's GET /health and feeds the answers to a Conclave `PhiAccrualDetector`; a service the
 * detector no longer finds available is down until it answers again.
 *
 * Two rules keep restarts rare and right:
 * - A monitor's own stall is no evidence against the services: when a tick comes much later
 *   than planned (GC pause, SIGSTOP, overload), every service's silence is forgotten.
 * - A new incarnation (a restarted process) starts a fresh history: the old process's rhythm
 *   says nothing about the new one.
 */
import { nodeId, PhiAccrualDetector, type NodeId } from 'conclave';
import type { MonitorConfig } from './config.js';
import type { EshopEventBody } from './events.js';
import { integerField, requestJson } from './http.js';

export interface ServiceTarget {
  readonly name: string;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
}

interface ServiceHealth {
  readonly target: ServiceTarget;
  readonly id: NodeId;
  /** The incarnation of the latest healthy answer (undefined before the first). */
  incarnation: number | undefined;
  down: boolean;
  polling: boolean;
}

export class HealthWatch {
  private readonly detector: PhiAccrualDetector;
  private readonly services = new Map<string, ServiceHealth>();
  private lastTickMs: number | undefined;

  constructor(
    targets: readonly ServiceTarget[],
    private readonly config: MonitorConfig,
    private readonly emit: (event: EshopEventBody) => void,
  ) {
    this.detector = new PhiAccrualDetector(config.detector);
    const nowMs = performance.now();
    for (const target of targets) {
      const id = nodeId(target.name);
      // Watched from now on: a service that never answers is detected too.
      this.detector.watch(id, nowMs);
      this.services.set(target.name, {
        target, id, incarnation: undefined, down: false, polling: false,
      });
    }
  }

  /**
   * One health round: notice a stall of our own, judge every service, poll every service.
   * Returns whether this monitor was itself stalled since the previous round.
   */
  tick(): boolean {
    const nowMs = performance.now();
    const lateMs = this.lastTickMs === undefined ? 0
      : nowMs - this.lastTickMs - this.config.healthIntervalMs;
    this.lastTickMs = nowMs;
    if (lateMs > this.config.selfStallMs) {
      this.emit({ kind: 'self-stall', stalledMs: Math.round(lateMs) });
      for (const health of this.services.values()) this.restartHistory(health, nowMs);
    }
    for (const health of this.services.values()) {
      this.judge(health, nowMs);
      if (!health.polling) void this.poll(health);
    }
    return lateMs > this.config.selfStallMs;
  }

  /** The services that are down now. */
  downServices(): string[] {
    return [...this.services.values()].filter((h) => h.down).map((h) => h.target.name);
  }

  /** Whether every service has answered at least once and none is down. */
  allHealthy(): boolean {
    return [...this.services.values()].every((h) => h.incarnation !== undefined && !h.down);
  }

  /** The incarnation of `service` last seen healthy (the one a restart order is about). */
  incarnationOf(service: string): number | undefined {
    return this.services.get(service)?.incarnation;
  }

  /** The supervisor replaced `service`: count its silence from now, with a fresh history. */
  restarted(service: string, incarnation: number): void {
    const health = this.services.get(service);
    if (health === undefined) return;
    health.incarnation = incarnation;
    health.down = false;
    this.restartHistory(health, performance.now());
  }

  private judge(health: ServiceHealth, nowMs: number): void {
    if (health.down || this.detector.isAvailable(health.id, nowMs)) return;
    health.down = true;
    const lastHeartbeatMs = this.detector.stats(health.id)?.lastHeartbeatMs ?? nowMs;
    this.emit({ kind: 'service-down', service: health.target.name,
      phi: Math.round(this.detector.phi(health.id, nowMs) * 10) / 10,
      silenceMs: Math.round(nowMs - lastHeartbeatMs) });
  }

  private async poll(health: ServiceHealth): Promise<void> {
    health.polling = true;
    try {
      const answer = await requestJson('GET', `${health.target.url}/health`, undefined,
        this.config.healthTimeoutMs);
      const incarnation = integerField(answer.body, 'incarnation');
      if (answer.status === 200 && incarnation !== undefined) this.heard(health, incarnation);
    } catch {
      // No answer in time, refused, reset: no heartbeat. The detector's silence grows.
    } finally {
      health.polling = false;
    }
  }

  private heard(health: ServiceHealth, incarnation: number): void {
    const nowMs = performance.now();
    const fresh = health.incarnation !== incarnation;
    health.incarnation = incarnation;
    // A new process: the old one's rhythm says nothing about it. (After an outage of the same
    // process, the detector itself leaves the long gap out of its window.)
    if (fresh) this.detector.remove(health.id);
    this.detector.heartbeat(health.id, nowMs);
    if (health.down) {
      health.down = false;
      this.emit({ kind: 'service-up', service: health.target.name, incarnation });
    }
  }

  private restartHistory(health: ServiceHealth, nowMs: number): void {
    this.detector.remove(health.id);
    this.detector.watch(health.id, nowMs);
  }
}
