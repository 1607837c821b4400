/**
 * One health monitor of ExampleEshop (the seeds' Leader and Followers example). Every monitor
 * checks every service; only the leader orders restarts, each order carrying its fencing token:
 *
 * 1. On becoming leader it announces its token to the supervisor (POST /leader). The
 *    supervisor's fence rises at once, so the previous leader's orders are refused from then
 *    on, even for a service the new leader never touches.
 * 2. For each service that is down, it orders one restart (POST /restart) with the incarnation
 *    it saw fail, and retries while the service stays down and the order got no answer.
 * 3. It acts only while its leadership holds in its own view (`current()` is checked right
 *    before each order, so it stops the moment the leadership signal aborts), never in the
 *    round right after a stall of its own (its view is stale), and never again with a token
 *    the supervisor refused.
 *
 * What no check can prevent: an order issued just before a pause (GC, SIGSTOP, a slow network)
 * arrives after the leadership has moved on. The supervisor's Fence refuses it.
 *
 * Usage: monitor.ts --name monitor-1 --supervisor http://127.0.0.1:P --services cart=URL,...
 *          --coordination gossip --bind 127.0.0.1:0 [--seeds H:P,...]
 *        | --coordination core|etcd --endpoints H:P,H:P,H:P
 *        [--config '{"healthIntervalMs":100,...}']
 * Commands on stdin (from the scenario runner): `pause-before-next-order`, `disarm`.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigInvalidError, formatConfigProblems } from 'conclave';
import { MONITOR_DEFAULTS, validateMonitorConfig, type MonitorConfig } from './config.js';
import { GossipCoordination, type Coordination, type MonitorLeadership } from './coordination.js';
import { emitEvent, type EshopEventBody } from './events.js';
import { HealthWatch, type ServiceTarget } from './health.js';
import { integerField, requestJson, stringField, watchParent } from './http.js';

export interface MonitorParts {
  readonly name: string;
  readonly supervisorUrl: string;
  readonly health: HealthWatch;
  readonly coordination: Coordination;
  readonly config: MonitorConfig;
  readonly emit: (event: EshopEventBody) => void;
}

export class Monitor {
  private registeredToken: number | undefined;
  private registering = false;
  /** Tokens the supervisor refused: a newer leader exists, never act with them again. */
  private readonly refusedTokens = new Set<number>();
  private readonly ordering = new Set<string>();
  private readonly retryAtMs = new Map<string, number>();
  private pauseBeforeNextOrder = false;

  constructor(private readonly parts: MonitorParts) {}

  /**
   * The scenario runner's fault: stop this process right after it issues its next order
   * (`armed`), or not any more.
   */
  setPauseBeforeNextOrder(armed: boolean): void {
    this.pauseBeforeNextOrder = armed;
  }

  /** One round: health first, then, if this monitor leads, the orders. */
  tick(): void {
    // Back from a stall of our own, our view of the leadership is as old as the stall: let the
    // coordination catch up (gossip read, the lease's stall watch) before acting on it.
    if (this.parts.health.tick()) return;
    const leadership = this.parts.coordination.current();
    if (leadership === undefined || this.refusedTokens.has(leadership.token)) return;
    if (this.registeredToken !== leadership.token) {
      if (!this.registering) void this.register(leadership);
      return;
    }
    const nowMs = performance.now();
    for (const service of this.parts.health.downServices()) {
      if (this.ordering.has(service) || (this.retryAtMs.get(service) ?? 0) > nowMs) continue;
      void this.order(service, leadership);
    }
  }

  private async register(leadership: MonitorLeadership): Promise<void> {
    this.registering = true;
    const { token } = leadership;
    try {
      const answer = await requestJson('POST', `${this.parts.supervisorUrl}/leader`,
        { monitor: this.parts.name, token }, this.parts.config.orderTimeoutMs);
      if (answer.status === 200) {
        this.registeredToken = token;
        this.parts.emit({ kind: 'registered', token });
      } else if (answer.status === 409) {
        this.refuse(token, answer.body);
      }
    } catch {
      // The supervisor did not answer: the next tick tries again.
    } finally {
      this.registering = false;
    }
  }

  private async order(service: string, leadership: MonitorLeadership): Promise<void> {
    const incarnation = this.parts.health.incarnationOf(service);
    if (incarnation === undefined) return;
    const { token } = leadership;
    this.ordering.add(service);
    try {
      const answer = leadership.runOnce === undefined
        ? await this.send(service, incarnation, leadership)
        : await this.sendOnce(service, incarnation, leadership);
      if (answer !== undefined) this.answered(service, token, answer);
    } catch (error) {
      this.failed(service, token, String(error));
    } finally {
      this.ordering.delete(service);
    }
  }

  /** Issues the restart order and waits for the supervisor's answer. */
  private send(service: string, incarnation: number, leadership: MonitorLeadership):
    Promise<OrderAnswer> {
    const { token } = leadership;
    this.parts.emit({ kind: 'order-sent', service, token, incarnation });
    // Not tied to the leadership's signal: aborting cannot recall bytes already sent. Once
    // issued, only the supervisor's Fence can stop a late order.
    const answer = requestJson('POST', `${this.parts.supervisorUrl}/restart`,
      { service, token, term: leadership.term, monitor: this.parts.name, incarnation },
      this.parts.config.orderTimeoutMs);
    if (this.pauseBeforeNextOrder) this.pauseNow(service, token);
    return answer;
  }

  /**
   * The order as a task of the whole line of leaders (runOnce): recorded done with the
   * supervisor's answer, so a new leader that also saw this incarnation fail does not order it
   * again; one whose leader died before recording it is ordered again (the supervisor answers
   * `already-restarted` if the first order got through). Undefined: an earlier leader did it.
   */
  private async sendOnce(service: string, incarnation: number, leadership: MonitorLeadership):
    Promise<OrderAnswer | undefined> {
    let answer: OrderAnswer | undefined;
    const task = await leadership.runOnce!(`restart-${service}-${incarnation}`, async () => {
      answer = await this.send(service, incarnation, leadership);
      // Only a restart the supervisor confirmed is done; anything else stays for a retry.
      if (!restartConfirmed(answer)) throw new Error('not confirmed');
      return answer;
    }).catch((error: unknown) => {
      if (answer !== undefined && !restartConfirmed(answer)) return undefined;
      throw error;
    });
    if (task === undefined) return answer; // the supervisor refused or failed: handle that
    if (task.ran) return answer;
    const recorded = integerField((task.result as OrderAnswer | undefined)?.body, 'incarnation');
    if (recorded !== undefined) this.parts.health.restarted(service, recorded);
    this.parts.emit({ kind: 'order-found-done', service, token: leadership.token,
      doneBy: task.doneBy, incarnation: recorded ?? incarnation });
    return undefined;
  }

  /** The supervisor's answer to an order. */
  private answered(service: string, token: number, { status, body }: OrderAnswer): void {
    const outcome = stringField(body, 'outcome');
    const current = integerField(body, 'incarnation');
    if (status === 200 && current !== undefined
      && (outcome === 'restarted' || outcome === 'already-restarted')) {
      this.parts.health.restarted(service, current);
      this.parts.emit({ kind: 'order-done', service, token, outcome, incarnation: current });
    } else if (status === 409) {
      const error = (body as { error?: { code?: string; message?: string } }).error;
      this.parts.emit({ kind: 'order-rejected', service, token,
        code: error?.code ?? 'unknown', message: error?.message ?? '' });
      this.refuse(token, body);
    } else {
      this.failed(service, token, `HTTP ${status}: ${JSON.stringify(body)}`);
    }
  }

  private failed(service: string, token: number, error: string): void {
    this.parts.emit({ kind: 'order-failed', service, token, error });
    this.retryAtMs.set(service, performance.now() + this.parts.config.orderRetryMs);
  }

  private refuse(token: number, body: unknown): void {
    this.refusedTokens.add(token);
    this.parts.emit({ kind: 'stale-leadership', token,
      highest: integerField(body, 'highest') ?? -1 });
  }

  /**
   * The fault the paused-leader scenario injects, at the worst moment: after the last check
   * and after the order was issued, before it leaves. The process stops itself (SIGSTOP) and
   * goes on where it stopped when the runner sends SIGCONT.
   */
  private pauseNow(service: string, token: number): void {
    this.pauseBeforeNextOrder = false;
    this.parts.emit({ kind: 'pausing', service, token });
    const startMs = performance.now();
    process.kill(process.pid, 'SIGSTOP');
    this.parts.emit({ kind: 'resumed', pausedMs: Math.round(performance.now() - startMs) });
  }
}

interface OrderAnswer {
  readonly status: number;
  readonly body: unknown;
}

function restartConfirmed({ status, body }: OrderAnswer): boolean {
  const outcome = stringField(body, 'outcome');
  return status === 200 && integerField(body, 'incarnation') !== undefined
    && (outcome === 'restarted' || outcome === 'already-restarted');
}

/** `name=url,name=url` → targets. */
function parseServices(text: string): ServiceTarget[] {
  return text.split(',').filter((p) => p !== '').map((pair) => {
    const at = pair.indexOf('=');
    return { name: pair.slice(0, at), url: pair.slice(at + 1) };
  });
}

async function makeCoordination(
  values: Record<string, string | undefined>, name: string, config: MonitorConfig,
  emit: (event: EshopEventBody) => void,
): Promise<Coordination> {
  if (values['coordination'] === 'gossip') {
    const seeds = (values['seeds'] ?? '').split(',').filter((s) => s !== '');
    return new GossipCoordination({ name, bind: values['bind'] ?? '127.0.0.1:0', seeds, emit });
  }
  if (values['coordination'] === 'core' || values['coordination'] === 'etcd') {
    // Loaded only in core and etcd modes: it needs the election API of the Conclave client.
    const { CoreCoordination } = await import('./core-coordination.js');
    const endpoints = (values['endpoints'] ?? '').split(',').filter((e) => e !== '');
    return new CoreCoordination({ name, endpoints, leaseTtlMs: config.leaseTtlMs,
      leaseMarginMs: config.leaseMarginMs, emit,
      backend: values['coordination'] === 'etcd' ? 'etcd' : 'conclave' });
  }
  throw new ConfigInvalidError(`--coordination must be gossip, core or etcd, got ${
    JSON.stringify(values['coordination'])}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    name: { type: 'string' }, supervisor: { type: 'string' }, services: { type: 'string' },
    coordination: { type: 'string' }, bind: { type: 'string' }, seeds: { type: 'string' },
    endpoints: { type: 'string' }, config: { type: 'string', default: '{}' },
  } });
  const name = values.name ?? '';
  const config: MonitorConfig = { ...MONITOR_DEFAULTS,
    ...(JSON.parse(values.config ?? '{}') as Partial<MonitorConfig>) };
  const problems = validateMonitorConfig(config);
  if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
  const emit = (event: EshopEventBody): void => emitEvent(name, event);
  const health = new HealthWatch(parseServices(values.services ?? ''), config, emit);
  const coordination = await makeCoordination(values, name, config, emit);
  const monitor = new Monitor({ name, supervisorUrl: values.supervisor ?? '', health,
    coordination, config, emit });
  const stop = (): void => {
    void coordination.stop().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  watchParent(() => process.exit(0), (line) => {
    if (line === 'pause-before-next-order') monitor.setPauseBeforeNextOrder(true);
    if (line === 'disarm') monitor.setPauseBeforeNextOrder(false);
  });
  await coordination.start();
  let ready = false;
  setInterval(() => {
    monitor.tick();
    if (!ready && health.allHealthy()) {
      ready = true;
      emit({ kind: 'monitor-ready',
        ...(coordination.address === undefined ? {} : { address: coordination.address }) });
    }
  }, config.healthIntervalMs);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`monitor: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
