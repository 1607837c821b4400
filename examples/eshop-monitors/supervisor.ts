/**
 * The supervisor: it starts the ExampleEshop services and restarts one when a monitor orders it.
 * It is the resource the monitors' leadership protects, so it sits behind a Conclave `Fence`:
 * it remembers the highest fencing token it has accepted and refuses any lower one with 409 and
 * CONCLAVE_FENCING_TOKEN_STALE. A monitor that was deposed while paused (or cut off) still
 * believes it leads; its late order carries its old token and is refused here.
 *
 *   POST /leader  { monitor, token }                      a new leader announces its token
 *   POST /restart { service, token, monitor, incarnation } restart one service
 *   GET  /services                                        the services, ports, pids, restarts
 *
 * Restart orders are idempotent: an order names the incarnation its sender saw fail, and an
 * order for an incarnation already replaced is answered `already-restarted` without a restart
 * (two orders for one failure restart it once).
 *
 * Usage: supervisor.ts [--port 0] [--services catalog,cart,payment]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CoordError, Fence } from 'conclave';
import { emitEvent, parseEventLine, type EshopEventBody } from './events.js';
import { integerField, readJsonBody, sendJson, stringField, watchParent } from './http.js';

const SERVICE_FILE = fileURLToPath(new URL('./service.ts', import.meta.url));
const SOURCE = 'supervisor';

/**
 * Longest wait for a (re)started service to listen. Why 15 s: a process start under tsx takes
 * about half a second on an idle machine and several seconds on a loaded 2-core one.
 */
const SERVICE_START_DEADLINE_MS = 15_000;

interface ManagedService {
  readonly name: string;
  port: number;
  child: ChildProcess | undefined;
  incarnation: number;
  /** Restarts of this service run one at a time, in arrival order. */
  queue: Promise<unknown>;
}

interface RestartOrder {
  readonly service: string;
  readonly token: number;
  readonly monitor: string;
  readonly incarnation: number;
}

type Answer = { readonly status: number; readonly body: unknown };

export class Supervisor {
  private readonly fence = new Fence();
  private readonly services = new Map<string, ManagedService>();
  private stopping = false;

  constructor(names: readonly string[], private readonly emit: (e: EshopEventBody) => void) {
    for (const name of names) {
      this.services.set(name, {
        name, port: 0, child: undefined, incarnation: 1, queue: Promise.resolve(),
      });
    }
  }

  async startAll(): Promise<void> {
    await Promise.all([...this.services.values()].map((service) => this.launch(service)));
  }

  /** A leader announces its token: the fence rises at once, before the leader acts. */
  async register(monitor: string, token: number): Promise<Answer> {
    const accepted = await this.fenced(() => this.fence.accept(token),
      { what: 'register', monitor, token });
    if (!accepted.ok) return accepted.answer;
    this.emit({ kind: 'leader-registered', monitor, token });
    return { status: 200, body: { highest: this.fence.highest } };
  }

  /** Restarts `order.service` if the token is not stale and the incarnation is current. */
  restart(order: RestartOrder): Promise<Answer> {
    const service = this.services.get(order.service);
    if (service === undefined) {
      return Promise.resolve({ status: 404, body: { error: { code: 'NO_SUCH_SERVICE',
        message: `no service ${order.service}` } } });
    }
    // One restart of a service at a time; the fence is checked right before the action.
    const turn = service.queue.then(() => this.restartNow(service, order));
    service.queue = turn.catch(() => undefined);
    return turn;
  }

  describe(): unknown[] {
    return [...this.services.values()].map((s) => ({
      service: s.name, port: s.port, pid: s.child?.pid, incarnation: s.incarnation,
    }));
  }

  /** Kills every service (by the pid this supervisor started). */
  stopAll(): void {
    this.stopping = true;
    for (const service of this.services.values()) service.child?.kill('SIGKILL');
  }

  private async restartNow(service: ManagedService, order: RestartOrder): Promise<Answer> {
    const { monitor, token } = order;
    const guarded = await this.fenced(() => this.fence.guard(token, async () => {
      // Idempotent receiver: the instance this order is about was already replaced.
      if (order.incarnation !== service.incarnation) return 'already-restarted' as const;
      await this.replace(service);
      return 'restarted' as const;
    }), { what: 'restart', service: service.name, monitor, token });
    if (!guarded.ok) return guarded.answer;
    const outcome = guarded.value;
    const { incarnation } = service;
    if (outcome === 'already-restarted') {
      this.emit({ kind: 'duplicate', service: service.name, monitor, token,
        incarnation: order.incarnation, current: incarnation });
      return { status: 200, body: { outcome, incarnation } };
    }
    const pid = service.child?.pid ?? 0;
    this.emit({ kind: 'restarted', service: service.name, monitor, token, incarnation, pid });
    return { status: 200, body: { outcome, incarnation, pid } };
  }

  /** Runs `act`; a stale token becomes a 409 answer (logged), anything else is rethrown. */
  private async fenced<T>(act: () => Promise<T>, about: {
    readonly what: 'restart' | 'register'; readonly service?: string;
    readonly monitor: string; readonly token: number;
  }): Promise<{ readonly ok: true; readonly value: T }
    | { readonly ok: false; readonly answer: Answer }> {
    try {
      return { ok: true, value: await act() };
    } catch (error) {
      if (!(error instanceof CoordError)) throw error;
      const status = error.code === 'CONCLAVE_FENCING_TOKEN_STALE' ? 409 : 400;
      if (status === 409) {
        this.emit({ kind: 'rejected', ...about, highest: this.fence.highest, code: error.code });
      }
      return { ok: false, answer: { status, body: {
        error: { code: error.code, message: error.message }, highest: this.fence.highest,
      } } };
    }
  }

  /** Kills the current instance (a hung one does not exit by itself) and starts the next. */
  private async replace(service: ManagedService): Promise<void> {
    const old = service.child;
    if (old !== undefined && old.exitCode === null && old.signalCode === null) {
      const exited = new Promise((resolve) => old.once('exit', resolve));
      old.kill('SIGKILL');
      await exited;
    }
    service.incarnation += 1;
    await this.launch(service);
  }

  /** Starts one instance and resolves once it listens (on the same port as before, if any). */
  private launch(service: ManagedService): Promise<void> {
    const child = spawn(process.execPath, [...process.execArgv, SERVICE_FILE,
      '--name', service.name, '--port', String(service.port),
      '--incarnation', String(service.incarnation)], { stdio: ['pipe', 'pipe', 'inherit'] });
    service.child = child;
    const incarnation = service.incarnation;
    child.once('exit', (code, signal) => {
      if (this.stopping) return;
      this.emit({ kind: 'service-exited', service: service.name, pid: child.pid ?? 0,
        incarnation, how: signal ?? `code ${code}` });
    });
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(
        `${service.name} did not listen within ${SERVICE_START_DEADLINE_MS} ms`)),
      SERVICE_START_DEADLINE_MS);
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        const event = parseEventLine(line);
        if (event?.kind !== 'service-listening') return;
        clearTimeout(timer);
        service.port = event.port;
        this.emit({ kind: 'service-started', service: service.name, port: event.port,
          pid: child.pid ?? 0, incarnation });
        resolve();
      });
      child.once('exit', () => reject(new Error(`${service.name} exited while starting`)));
    });
  }
}

/** The supervisor's HTTP routes. */
async function route(supervisor: Supervisor, request: IncomingMessage): Promise<Answer> {
  const path = `${request.method ?? ''} ${request.url ?? ''}`;
  if (path === 'GET /services') return { status: 200, body: supervisor.describe() };
  if (path !== 'POST /restart' && path !== 'POST /leader') {
    return { status: 404, body: { error: { code: 'NO_ROUTE', message: path } } };
  }
  const body = await readJsonBody(request);
  const monitor = stringField(body, 'monitor');
  const token = integerField(body, 'token');
  if (monitor === undefined || token === undefined) {
    return { status: 400, body: { error: { code: 'CONCLAVE_REQUEST_INVALID',
      message: 'the body needs monitor (string) and token (integer)' } } };
  }
  if (path === 'POST /leader') return supervisor.register(monitor, token);
  const service = stringField(body, 'service');
  const incarnation = integerField(body, 'incarnation');
  if (service === undefined || incarnation === undefined) {
    return { status: 400, body: { error: { code: 'CONCLAVE_REQUEST_INVALID',
      message: 'a restart needs service (string) and incarnation (integer)' } } };
  }
  return supervisor.restart({ service, token, monitor, incarnation });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    port: { type: 'string', default: '0' },
    services: { type: 'string', default: 'catalog,cart,payment' },
  } });
  const names = (values.services ?? '').split(',').filter((n) => n !== '');
  const supervisor = new Supervisor(names, (event) => emitEvent(SOURCE, event));
  const stop = (): void => {
    supervisor.stopAll();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  watchParent(stop);
  await supervisor.startAll();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    route(supervisor, request).then(
      (answer) => sendJson(response, answer.status, answer.body),
      (error: unknown) => sendJson(response, 500, { error: { code: 'INTERNAL',
        message: String(error) } }));
  });
  server.listen(Number(values.port), '127.0.0.1', () => {
    const address = server.address();
    emitEvent(SOURCE, { kind: 'supervisor-ready',
      port: typeof address === 'object' && address !== null ? address.port : 0 });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`supervisor: ${String(error)}\n`);
    process.exit(1);
  });
}
