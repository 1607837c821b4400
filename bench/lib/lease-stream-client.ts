/**
 * The keep-alive stream client: its own Node process, the same code for both systems, sending
 * keep-alives over WebSockets to the leader (Conclave's /v1/lease/stream; etcd's gateway,
 * which carries WebSocket messages onto a gRPC LeaseKeepAlive stream). Two modes:
 *
 * - `closed-loop`: `connections` WebSockets, each with `inflightPerConnection` lanes; a lane
 *   renews its own lease, sends the next keep-alive when the last is answered. A warm-up, then
 *   a window in which each answer is counted and its latency kept (the keep-alive rate).
 * - `renew`: grants `leases` leases of `leaseTtlS` over HTTP, then renews each every TTL/3
 *   (etcd's clientv3 and Conclave's client both renew at a third of the TTL) over one
 *   WebSocket, spread evenly in time; after one period the window opens (the harness reads the
 *   servers' CPU over it); afterwards every lease is revoked. The cost of live leases.
 *
 * Talks to the harness as the load client does (lib/load-client.ts): `window-start`, `done`.
 * Run as: node --import tsx bench/lib/lease-stream-client.ts '<StreamClientOptions JSON>'
 */
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import WebSocket from 'ws';
import { post } from './http.js';
import { leaseWire, type LeaseWire } from './lease-wire.js';
import type { LoadClientMessage, LoadClientResult } from './load-client.js';
import { LatencyRecorder } from './stats.js';
import type { SystemName } from './wire.js';

export interface StreamClientOptions {
  readonly system: SystemName;
  /** host:port of the leader. */
  readonly endpoint: string;
  readonly mode: 'closed-loop' | 'renew';
  /** closed-loop: WebSockets opened. */
  readonly connections: number;
  /** closed-loop: lanes per WebSocket, each with one keep-alive outstanding. */
  readonly inflightPerConnection: number;
  /** closed-loop: JSON file with the lease ids to renew (lane i renews lease i mod n). */
  readonly leaseIdsFile?: string;
  /** renew: leases granted and kept alive. */
  readonly leases: number;
  /** renew: their TTL. Unit: s. */
  readonly leaseTtlS: number;
  readonly warmupMs: number;
  readonly windowMs: number;
}

/**
 * A grant or revoke gives up after this long. Unit: ms. Keep-alives have no timeout of their
 * own (a timer each would cost the client as much as the request): one never answered is
 * simply not counted, and a closed connection fails every keep-alive waiting on it.
 */
const REQUEST_TIMEOUT_MS = 10_000;
/** Lanes granting and revoking the renew mode's leases over HTTP. */
const SETUP_LANES = 64;
/** How often the renew mode looks for leases due. Unit: ms. */
const RENEW_TICK_MS = 10;
const ERROR_PAUSE_MS = 10;

/** One WebSocket of keep-alives; `keepAlive` resolves true when the lease lives. */
class KeepAliveStream {
  private readonly byId = new Map<number, (ok: boolean) => void>();
  private readonly inOrder: ((ok: boolean) => void)[] = [];
  private inOrderHead = 0;
  private nextId = 1;
  firstError: string | undefined;

  private constructor(private readonly ws: WebSocket, private readonly wire: LeaseWire) {
    ws.on('message', (data) => this.answered(String(data)));
    ws.on('close', (code, reason) => this.failAll(`closed ${code} ${String(reason)}`));
    ws.on('error', (error) => this.failAll(error.message));
  }

  static open(endpoint: string, wire: LeaseWire): Promise<KeepAliveStream> {
    const ws = new WebSocket(`ws://${endpoint}${wire.streamPath}`, { perMessageDeflate: false });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new KeepAliveStream(ws, wire)));
      ws.once('error', reject);
      ws.once('unexpected-response', (_request, response) => {
        reject(new Error(`${wire.streamPath}: HTTP ${response.statusCode ?? 0}`));
      });
    });
  }

  keepAlive(leaseId: string): Promise<boolean> {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(false);
    const id = this.nextId++;
    return new Promise((resolve) => {
      if (this.wire.streamAnswers === 'by-id') this.byId.set(id, resolve);
      else this.inOrder.push(resolve);
      this.ws.send(this.wire.streamMessage(id, leaseId));
    });
  }

  close(): void {
    this.ws.close(1000, 'done');
  }

  private answered(text: string): void {
    const answer = this.wire.streamAnswer(text);
    if (!answer.ok) this.firstError ??= text.slice(0, 200);
    let resolve: ((ok: boolean) => void) | undefined;
    if (this.wire.streamAnswers === 'by-id') {
      resolve = answer.id === undefined ? undefined : this.byId.get(answer.id);
      if (answer.id !== undefined) this.byId.delete(answer.id);
    } else {
      resolve = this.inOrder[this.inOrderHead];
      this.inOrderHead++;
      if (this.inOrderHead > 1024) {
        this.inOrder.splice(0, this.inOrderHead);
        this.inOrderHead = 0;
      }
    }
    resolve?.(answer.ok);
  }

  private failAll(why: string): void {
    this.firstError ??= why;
    for (const resolve of this.byId.values()) resolve(false);
    this.byId.clear();
    for (const resolve of this.inOrder.slice(this.inOrderHead)) resolve(false);
    this.inOrder.length = 0;
    this.inOrderHead = 0;
  }
}

/** Counts answers inside the window; the same for both modes. */
class Tally {
  inWindow = false;
  readonly recorder = new LatencyRecorder();
  errors = 0;

  record(ok: boolean, startMs: number): void {
    if (!this.inWindow) return;
    if (ok) this.recorder.record(performance.now() - startMs);
    else this.errors++;
  }
}

async function closedLoop(o: StreamClientOptions, wire: LeaseWire): Promise<void> {
  const leaseIds = JSON.parse(readFileSync(o.leaseIdsFile ?? '', 'utf8')) as string[];
  const streams = await Promise.all(
    Array.from({ length: o.connections }, () => KeepAliveStream.open(o.endpoint, wire)));
  const tally = new Tally();
  let done = false;
  const lane = async (stream: KeepAliveStream, leaseId: string): Promise<void> => {
    while (!done) {
      const startMs = performance.now();
      const ok = await stream.keepAlive(leaseId);
      tally.record(ok, startMs);
      if (!ok) await sleep(ERROR_PAUSE_MS);
    }
  };
  streams.forEach((stream, s) => {
    for (let i = 0; i < o.inflightPerConnection; i++) {
      const leaseId = leaseIds[(s * o.inflightPerConnection + i) % leaseIds.length];
      if (leaseId !== undefined) void lane(stream, leaseId);
    }
  });
  await sleep(o.warmupMs);
  const result = await openWindow(o, tally, streams);
  done = true;
  finish(result);
}

async function renew(o: StreamClientOptions, wire: LeaseWire): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: SETUP_LANES });
  const leaseIds = await grantAll(o, wire, agent);
  const stream = await KeepAliveStream.open(o.endpoint, wire);
  const periodMs = (o.leaseTtlS * 1000) / 3;
  const tally = new Tally();
  // Lease i is due at i/n of a period, then once a period: an even flow, as many clients make.
  const dueMs = leaseIds.map((_, i) => performance.now() + (i * periodMs) / leaseIds.length);
  const tick = setInterval(() => {
    const nowMs = performance.now();
    leaseIds.forEach((leaseId, i) => {
      if (dueMs[i]! > nowMs) return;
      dueMs[i] = dueMs[i]! + periodMs;
      const startMs = performance.now();
      void stream.keepAlive(leaseId).then((ok) => tally.record(ok, startMs));
    });
  }, RENEW_TICK_MS);
  await sleep(periodMs); // every lease renewed once: the steady state
  const result = await openWindow(o, tally, [stream]);
  clearInterval(tick);
  stream.close();
  send({ kind: 'done', result });
  await revokeAll(o, wire, agent, leaseIds);
  agent.destroy();
  process.exit(0);
}

/** Opens the window, waits it out, and sums it up. */
async function openWindow(o: StreamClientOptions, tally: Tally,
  streams: readonly KeepAliveStream[]): Promise<LoadClientResult> {
  tally.inWindow = true;
  const startMs = performance.now();
  send({ kind: 'window-start' });
  await sleep(o.windowMs);
  tally.inWindow = false;
  return {
    ops: tally.recorder.size, errors: tally.errors,
    firstError: streams.map((s) => s.firstError).find((e) => e !== undefined),
    windowMs: performance.now() - startMs, latency: tally.recorder.summary(), leaseIds: [],
  };
}

async function grantAll(o: StreamClientOptions, wire: LeaseWire,
  agent: http.Agent): Promise<string[]> {
  const granted: string[] = [];
  const grant = async (_: unknown, clientId: string, sequence: number): Promise<void> => {
    const answer = await post(o.endpoint, wire.grantPath,
      wire.grantBody(o.leaseTtlS, clientId, sequence),
      { agent, timeoutMs: REQUEST_TIMEOUT_MS, keepBody: true });
    const id = answer.status === 200 ? wire.leaseIdOf(answer.body) : undefined;
    if (id === undefined) throw new Error(`grant failed: HTTP ${answer.status} ${answer.body}`);
    granted.push(id);
  };
  await forEachLane('grant', Array.from({ length: o.leases }), SETUP_LANES, grant);
  return granted;
}

/** Revokes the leases (not measured), so the next measurement starts without them. */
async function revokeAll(o: StreamClientOptions, wire: LeaseWire, agent: http.Agent,
  leaseIds: readonly string[]): Promise<void> {
  let failed = 0;
  const revoke = async (leaseId: string, clientId: string, sequence: number): Promise<void> => {
    const answer = await post(o.endpoint, wire.revokePath,
      wire.revokeBody(leaseId, clientId, sequence),
      { agent, timeoutMs: REQUEST_TIMEOUT_MS, keepBody: false });
    if (answer.status !== 200) failed++;
  };
  await forEachLane('revoke', leaseIds, SETUP_LANES, revoke);
  if (failed > 0) process.stderr.write(`lease-stream-client: ${failed} revokes failed\n`);
}

/**
 * Runs `work` once per item, `lanes` at a time. Each lane is a client id of its own (named
 * after `what`: a Conclave client id's sequence numbers must not repeat) with its own sequence.
 */
async function forEachLane<T>(what: string, items: readonly T[], lanes: number,
  work: (item: T, clientId: string, sequence: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    const clientId = `bench-${what}-${process.pid}-${lane}`;
    for (let sequence = 1; next < items.length; sequence++) {
      await work(items[next++]!, clientId, sequence);
    }
  }));
}

function finish(result: LoadClientResult): void {
  send({ kind: 'done', result }, () => process.exit(0));
}

function send(message: LoadClientMessage, then?: () => void): void {
  if (process.send === undefined) {
    throw new Error('lease-stream-client: run me from the harness (no IPC channel)');
  }
  process.send(message, undefined, {}, () => then?.());
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const argument = process.argv[2];
if (argument === undefined) {
  process.stderr.write(
    'usage: node --import tsx bench/lib/lease-stream-client.ts \'<options JSON>\'\n');
  process.exit(2);
}
const options = JSON.parse(argument) as StreamClientOptions;
const wire = leaseWire(options.system);
(options.mode === 'renew' ? renew(options, wire) : closedLoop(options, wire))
  .catch((error: unknown) => {
    const text = error instanceof Error ? error.stack ?? error.message : String(error);
    process.stderr.write(`lease-stream-client: ${text}\n`);
    process.exit(1);
  });
