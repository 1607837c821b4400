/**
 * The load generator: its own Node process (so its CPU is measured apart from the harness), the
 * same code for both systems. `inflight` closed-loop lanes each keep one request outstanding on
 * their own keep-alive connection to the leader: a warm-up, then a fixed window in which every
 * completion is counted and its latency kept. What a lane sends is its `kind` (lib/requests.ts):
 * puts by default, range reads, or lease grants, keep-alives and revokes. Talks to the harness
 * over the IPC channel: `window-start` when the window opens, then `done` with the figures (the
harness may end the window early with `stop`).
 *
 * Conclave is driven over its multiplexed stream (docs/protocol.md: every lane's requests on
 * one WebSocket, as the client library does by default); BENCH_CONCLAVE_HTTP=1 drives its
 * HTTP/JSON API instead, one keep-alive connection per lane.
 *
 * Run by the harness as: node --import tsx bench/lib/load-client.ts '<LoadClientOptions JSON>'
 */
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import { StreamClientTransport } from '../../src/adapters/stream-client-transport.js';
import type { ClientRequest } from '../../src/ports/client-transport.js';
import { post } from './http.js';
import { requestSource, type RequestKind, type RequestSource } from './requests.js';
import { LatencyRecorder, type LatencySummary } from './stats.js';
import type { SystemName } from './wire.js';

export interface LoadClientOptions {
  readonly system: SystemName;
  /** host:port of the member to send every request to (the leader). */
  readonly endpoint: string;
  /** Closed-loop lanes, each with one request outstanding. Unit: requests. */
  readonly inflight: number;
  readonly warmupMs: number;
  readonly windowMs: number;
  readonly keySpaceSize: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
  /** What to send. Default: put. */
  readonly kind?: RequestKind;
  /** TTL of granted leases (lease-grant). Unit: s. */
  readonly leaseTtlS?: number;
  /** A JSON file holding the lease ids to keep alive or revoke (an array of decimal strings). */
  readonly leaseIdsFile?: string;
  /** The auth token every request carries (bench --auth). */
  readonly token?: string | undefined;
  /**
   * Open-loop pacing: at most this many requests started per second across all lanes, each at
   * its own slot (a lane behind its slot sends at once, so a slow cluster shows as a rate below
   * the asked one, never as a burst). Default: none (closed loop). Unit: requests/s.
   */
  readonly ratePerS?: number;
}

export type LoadClientMessage =
  | { readonly kind: 'window-start' }
  | { readonly kind: 'done'; readonly result: LoadClientResult };

/** From the harness: `stop` ends the window now (its figures are sent as usual). */
export type LoadClientCommand = { readonly kind: 'stop' };

export interface LoadClientResult {
  /** Requests answered with 200 (and accepted) inside the window. */
  readonly ops: number;
  /** Requests that failed (non-200, refused answer or no answer) inside the window. */
  readonly errors: number;
  readonly firstError: string | undefined;
  /** The window's real length (shorter when a pool of leases to revoke ran out). Unit: ms. */
  readonly windowMs: number;
  readonly latency: LatencySummary;
  /** lease-grant: every lease id granted, warm-up included. */
  readonly leaseIds: readonly string[];
}

/** A request gives up after this long (a healthy one takes milliseconds). Unit: ms. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Pause after a failed request, so a broken endpoint is not hammered in a hot loop. Unit: ms. */
const ERROR_PAUSE_MS = 10;

type Phase = 'warmup' | 'window' | 'drain' | 'done';

/** Hands out send slots `1000 / ratePerS` ms apart; each caller waits for its own slot. */
class Pacer {
  private readonly startMs = performance.now();
  private issued = 0;

  constructor(private readonly ratePerS: number) {}

  async next(): Promise<void> {
    const slotMs = this.startMs + (1000 * this.issued++) / this.ratePerS;
    const waitMs = slotMs - performance.now();
    if (waitMs > 0) await sleep(waitMs);
  }
}

/** The stream op of each HTTP path the request sources use. */
const STREAM_OPS: Readonly<Record<string, ClientRequest['kind']>> = {
  '/v1/kv/put': 'put', '/v1/kv/range': 'range', '/v1/lease/grant': 'lease-grant',
  '/v1/lease/revoke': 'lease-revoke', '/v1/lease/keepalive': 'lease-keepalive',
};

class Lanes {
  phase: Phase = 'warmup';
  readonly recorder = new LatencyRecorder();
  errors = 0;
  firstError: string | undefined;
  /** Resolves when the first lane finds its source used up (the pool of leases to revoke). */
  readonly exhausted: Promise<void>;
  private markExhausted: () => void = () => undefined;
  private readonly agent: http.Agent;
  /** Conclave's stream, shared by every lane (undefined: HTTP). */
  private readonly stream: StreamClientTransport | undefined;
  /** Open-loop pacing (`ratePerS`), else undefined: closed loop. */
  private readonly pacer: Pacer | undefined;

  constructor(private readonly options: LoadClientOptions, readonly source: RequestSource) {
    this.pacer = options.ratePerS === undefined ? undefined : new Pacer(options.ratePerS);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: options.inflight });
    this.exhausted = new Promise((resolve) => (this.markExhausted = resolve));
    this.stream = options.system === 'conclave' && process.env['BENCH_CONCLAVE_HTTP'] !== '1'
      ? new StreamClientTransport(options.token === undefined ? {}
        : { credentials: { token: () => options.token } }) : undefined;
  }

  /** One request over the stream: undefined when it was answered and accepted. */
  private async overStream(stream: StreamClientTransport, path: string, body: string):
    Promise<string | undefined> {
    const kind = STREAM_OPS[path];
    if (kind === undefined) return `no stream op for ${path}`;
    const request = { kind, ...(JSON.parse(body) as object) } as ClientRequest;
    const answer = await stream.call(`http://${this.options.endpoint}`, request,
      { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (answer.kind === 'lost') return `lost: ${answer.detail}`;
    if (answer.kind === 'refused') return `${answer.error.code} ${answer.error.message}`;
    const text = this.source.keepBody ? JSON.stringify(answer.body) : '';
    return this.source.accept(text) ? undefined : `refused: ${text.slice(0, 200)}`;
  }

  /** One closed-loop lane: sends until the run is done or its source runs out. */
  async lane(lane: number): Promise<void> {
    const clientId = `bench-${process.pid}-${lane}`;
    const { endpoint } = this.options;
    const { path, keepBody } = this.source;
    for (let sequence = 1; this.phase !== 'done'; sequence++) {
      const body = this.source.next(lane, clientId, sequence);
      if (body === undefined) return this.markExhausted();
      await this.pacer?.next();
      const startMs = performance.now();
      let failure: string | undefined;
      try {
        if (this.stream !== undefined) {
          failure = await this.overStream(this.stream, path, body);
        } else {
          const answer = await post(endpoint, path, body,
            { agent: this.agent, timeoutMs: REQUEST_TIMEOUT_MS, keepBody,
              token: this.options.token });
          const text = answer.body.slice(0, 200);
          if (answer.status !== 200) failure = `HTTP ${answer.status} ${text}`.trimEnd();
          else if (!this.source.accept(answer.body)) failure = `refused: ${text}`;
        }
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
      const inWindow = this.phase === 'window';
      if (failure === undefined) {
        if (inWindow) this.recorder.record(performance.now() - startMs);
        continue;
      }
      if (inWindow) {
        this.errors++;
        this.firstError ??= failure;
      }
      await sleep(ERROR_PAUSE_MS);
    }
  }
}

async function main(options: LoadClientOptions): Promise<void> {
  const leaseIds = options.leaseIdsFile === undefined ? []
    : JSON.parse(readFileSync(options.leaseIdsFile, 'utf8')) as string[];
  const source = requestSource({
    system: options.system, kind: options.kind ?? 'put', keySpaceSize: options.keySpaceSize,
    keyBytes: options.keyBytes, valueBytes: options.valueBytes,
    leaseTtlS: options.leaseTtlS ?? 60, leaseIds,
  });
  const lanes = new Lanes(options, source);
  const running = Promise.all(Array.from({ length: options.inflight }, (_, i) => lanes.lane(i)));
  // A source that runs out (revokes) ends the warm-up or the window early: from then on fewer
  // lanes are busy, which is no longer the load asked for.
  await Promise.race([sleep(options.warmupMs), lanes.exhausted]);
  lanes.phase = 'window';
  const windowStartMs = performance.now();
  send({ kind: 'window-start' });
  await Promise.race([sleep(options.windowMs), lanes.exhausted, stopAsked()]);
  const windowMs = performance.now() - windowStartMs;
  lanes.phase = source.afterWindow === 'drain' ? 'drain' : 'done';
  if (source.afterWindow === 'finish') await running;
  const result: LoadClientResult = {
    ops: lanes.recorder.size, errors: lanes.errors, firstError: lanes.firstError, windowMs,
    latency: lanes.recorder.summary(), leaseIds: source.produced(),
  };
  if (source.afterWindow !== 'drain') {
    // Report and exit at once: lanes still waiting on a reply are not counted.
    return send({ kind: 'done', result }, () => process.exit(0));
  }
  send({ kind: 'done', result });
  await running;
  process.exit(0);
}

/** Resolves when the harness sends `stop` (ends the window before `windowMs`). */
function stopAsked(): Promise<void> {
  return new Promise((resolve) => {
    process.on('message', (message: LoadClientCommand) => {
      if (message.kind === 'stop') resolve();
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function send(message: LoadClientMessage, then?: () => void): void {
  if (process.send === undefined) {
    throw new Error('load-client: run me from the harness (no IPC channel)');
  }
  process.send(message, undefined, {}, () => then?.());
}

const argument = process.argv[2];
if (argument === undefined) {
  process.stderr.write('usage: node --import tsx bench/lib/load-client.ts \'<options JSON>\'\n');
  process.exit(2);
}
main(JSON.parse(argument) as LoadClientOptions).catch((error: unknown) => {
  const text = error instanceof Error ? error.stack ?? error.message : String(error);
  process.stderr.write(`load-client: ${text}\n`);
  process.exit(1);
});
