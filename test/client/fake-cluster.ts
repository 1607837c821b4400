/**
 * A fake consistent core for client tests: N HTTP servers on 127.0.0.1 (port 0) that run the
 * real client protocol (src/server/http-api.ts, src/server/watch-hub.ts) over one shared, real
 * KvStore, i.e. a cluster with instant replication. The leader is whoever the test says; the
 * others redirect to it (or answer NO_QUORUM when `leaderKnown` is false). Faults are queued
 * per node: answers lost after the write applied, answers that never come, 504s with outcome
 * unknown, nodes that refuse connections, watch streams cut mid-line.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import {
  KV_STORE_DEFAULTS, KvStore, type KvKeySelector, type KvRangeRequest, type KvStoreConfig,
} from '../../src/core/kv/index.js';
import { CoordError } from '../../src/errors.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import type {
  ConsistentCore, KvWrite, ReadOutcome, WriteOutcome,
} from '../../src/runtime/core/consistent-core.js';
import { CLIENT_LIMITS_DEFAULTS } from '../../src/server/client-limits.js';
import { leaderlessError } from '../../src/runtime/core/leaderless.js';
import { ClientStreamHub, type StreamFault } from '../../src/server/client-stream.js';
import { clientDoor, createHttpApi } from '../../src/server/http-api.js';
import { WatchHub } from '../../src/server/watch-hub.js';

/** Faults at the HTTP layer, consumed by the next request whose path starts with `path`. */
export type HttpFault =
  /** The request is handled (a write applies) but the connection drops instead of answering. */
  | { readonly path: string; readonly action: 'drop-response' }
  /** The request is handled but the answer never comes (the client times out). */
  | { readonly path: string; readonly action: 'hang' }
  /** A watch stream sends `messages` event messages, half of the next line, then drops. */
  | { readonly path: string; readonly action: 'cut-watch'; readonly messages: number };

/** Faults in the fake core, consumed by the next write. */
export type CoreFault = 'unknown-after-apply' | 'unknown-without-apply';

export class FakeNode {
  readonly faults: HttpFault[] = [];
  readonly coreFaults: CoreFault[] = [];
  /** Every request's method and path, in arrival order. */
  readonly requests: string[] = [];
  readonly hub: WatchHub;
  private server: Server | undefined;
  private streams: ClientStreamHub | undefined;
  private portValue = 0;

  constructor(readonly id: NodeId, private readonly cluster: FakeCluster) {
    this.hub = new WatchHub(this.core().store, CLIENT_LIMITS_DEFAULTS);
  }

  get port(): number {
    return this.portValue;
  }

  get url(): string {
    return `http://127.0.0.1:${this.portValue}`;
  }

  get endpoint(): string {
    return `127.0.0.1:${this.portValue}`;
  }

  get role(): 'leader' | 'follower' {
    return this.cluster.leaderId === this.id ? 'leader' : 'follower';
  }

  /** Listens (again, on the same port after `down()`); does nothing when already up. */
  async up(): Promise<void> {
    if (this.server !== undefined) return;
    const core = this.core();
    const door = clientDoor(core);
    const clientUrlOf = (id: NodeId): string | undefined =>
      this.cluster.nodes.find((n) => n.id === id)?.url;
    const status = (): unknown => this.cluster.statusOf(this);
    const leaderless = (): ReturnType<typeof leaderlessError> => leaderlessError({
      memberId: this.id, term: this.cluster.term,
      leaderContactAgeMs: this.cluster.leaderContactAgeMs, upMs: Infinity,
      electionWindowMs: 7_500 });
    const api = createHttpApi({
      core, watches: this.hub, logger: SILENT_LOGGER, ...door,
      requestTimeoutMs: this.cluster.requestTimeoutMs, leaderless, clientUrlOf,
      metrics: () => '', status,
    });
    this.streams = new ClientStreamHub({ watches: this.hub, guard: door.guard,
      limits: door.limits, logger: SILENT_LOGGER,
      calls: { core, quota: door.quota, clientUrlOf, status,
        requestTimeoutMs: this.cluster.requestTimeoutMs, leaderless },
      intercept: (op, body) => this.intercept(op, body) });
    const streams = this.streams;
    const server = createServer((req, res) => this.handle(api, req, res));
    server.on('upgrade', (req, socket, head) => {
      if (!streams.handleUpgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(this.portValue, '127.0.0.1', resolve));
    this.portValue = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every connection: clients get ECONNREFUSED. */
  async down(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    this.hub.closeAll();
    this.streams?.closeAll('down');
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(api: (req: IncomingMessage, res: ServerResponse) => void, req: IncomingMessage,
    res: ServerResponse): void {
    const path = req.url ?? '/';
    this.requests.push(`${req.method ?? '?'} ${path}`);
    const at = this.faults.findIndex((f) => path.startsWith(f.path));
    const fault = at >= 0 ? this.faults.splice(at, 1)[0] : undefined;
    if (fault?.action === 'drop-response') {
      res.end = (() => {
        res.socket?.destroy();
        return res;
      }) as typeof res.end;
    } else if (fault?.action === 'hang') {
      res.writeHead = (() => res) as unknown as typeof res.writeHead;
      res.end = (() => res) as typeof res.end;
    } else if (fault?.action === 'cut-watch') {
      cutWatchAfter(res, fault.messages);
    }
    api(req, res);
  }

  /**
   * A stream request, recorded as the HTTP request it stands for (`POST /v1/kv/put`), with
   * the HTTP faults queued for that path applied to it the stream's way.
   */
  private intercept(op: string, body: Readonly<Record<string, unknown>>):
    StreamFault | undefined {
    const path = httpPathOf(op, body);
    this.requests.push(path);
    const at = this.faults.findIndex((f) => path.split(' ')[1]?.startsWith(f.path));
    const fault = at >= 0 ? this.faults.splice(at, 1)[0] : undefined;
    if (fault === undefined) return undefined;
    if (fault.action === 'cut-watch') return { action: 'cut-watch', messages: fault.messages };
    return { action: fault.action === 'hang' ? 'hang' : 'drop' };
  }

  /** The parts of ConsistentCore the HTTP API and the watch hub use. */
  private core(): ConsistentCore {
    const cluster = this.cluster;
    const node = this;
    let readerSequence = 0;
    const fake = {
      get id(): NodeId {
        return node.id;
      },
      get store(): KvStore {
        return cluster.store;
      },
      status: () => ({ role: node.role, term: cluster.term,
        leaderId: cluster.leaderKnown ? cluster.leaderId : undefined }),
      write: (command: KvWrite, done: (outcome: WriteOutcome) => void) =>
        cluster.write(node, command, done),
      read: (request: KvRangeRequest, consistency: 'linearizable' | 'serializable',
        done: (outcome: ReadOutcome) => void) => {
        if (consistency === 'serializable') {
          return done({ kind: 'ok', result: cluster.store.range(request) });
        }
        // The fake models a linearizable read as a barrier through its (fault-injecting) log.
        readerSequence += 1;
        const barrier: KvWrite = { kind: 'txn', clientId: `fake-reader-${node.id}`,
          sequence: readerSequence, compare: [], success: [], failure: [] };
        cluster.write(node, barrier, (outcome) => {
          if (outcome.kind !== 'applied') return done({ kind: 'failed', error: outcome.error });
          done({ kind: 'ok', result: cluster.store.range(request) });
        });
      },
      eventsSince: (from: number, selector: KvKeySelector, limit?: number) =>
        cluster.store.eventsSince(from, selector, limit),
    };
    return fake as unknown as ConsistentCore;
  }
}

/** The HTTP request (method and path) a stream request stands for. */
export function httpPathOf(op: string, body: Readonly<Record<string, unknown>>): string {
  if (op === 'watch') {
    const query = new URLSearchParams({ key: String(body['key']),
      fromRevision: String(body['fromRevision'] ?? 0) });
    if (body['prefix'] === true) query.set('prefix', 'true');
    return `GET /v1/watch?${query.toString()}`;
  }
  if (op === 'status') return 'GET /v1/status';
  if (op === 'lease-list') return 'GET /v1/lease/list';
  if (op.startsWith('lease-')) return `POST /v1/lease/${op.slice('lease-'.length)}`;
  return `POST /v1/kv/${op}`;
}

/** Makes a watch response write `messages` event messages, then half a line, then drop. */
function cutWatchAfter(res: ServerResponse, messages: number): void {
  type Write = (chunk: string | Uint8Array, done?: () => void) => boolean;
  const write = res.write.bind(res) as Write;
  let sent = 0;
  let cut = false;
  res.write = ((chunk: string | Uint8Array, done?: () => void) => {
    // The hub writes a message as several chunks; an events message starts with its head.
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    if (cut) {
      done?.();
      return true;
    }
    if (!text.startsWith('{"kind":"events"')) return write(chunk, done);
    if (sent === messages) {
      cut = true;
      write(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
      res.socket?.end(); // end, not destroy: flush what was written, then drop mid-response
      done?.();
      return true;
    }
    sent += 1;
    return write(chunk, done);
  }) as typeof res.write;
}

export interface FakeClusterOptions {
  readonly nodes?: number;
  readonly kv?: Partial<KvStoreConfig>;
  /** Delay before a write applies, so that requests overlap. Unit: ms. Default: 0. */
  readonly applyDelayMs?: number;
}

export class FakeCluster {
  readonly store: KvStore;
  readonly nodes: FakeNode[] = [];
  leaderId: NodeId | undefined;
  /** When false, followers know no leader and answer NO_QUORUM instead of redirecting. */
  leaderKnown = true;
  /**
   * What a leaderless member says it knows: since when it heard from a leader (ms). Default:
   * never, so NO_QUORUM; at most 7 500 (the fake's election window): NO_LEADER.
   */
  leaderContactAgeMs = Infinity;
  /** The members' own request timeout (HttpApiOptions.requestTimeoutMs). Unit: ms. */
  requestTimeoutMs = 5000;
  term = 1;
  /** Client ids with a write in flight in the fake core, and every violation seen. */
  readonly inflight = new Set<string>();
  readonly inflightViolations: string[] = [];
  /** Every write the core applied: `${clientId}#${sequence}` (retries included). */
  readonly applied: string[] = [];
  private index = 0;

  private constructor(private readonly options: FakeClusterOptions) {
    this.store = new KvStore({ ...KV_STORE_DEFAULTS, ...options.kv });
    for (let i = 1; i <= (options.nodes ?? 3); i++) {
      this.nodes.push(new FakeNode(nodeId(`n${i}`), this));
    }
    this.leaderId = this.nodes[0]?.id;
  }

  static async start(options: FakeClusterOptions = {}): Promise<FakeCluster> {
    const cluster = new FakeCluster(options);
    for (const node of cluster.nodes) await node.up();
    return cluster;
  }

  node(id: string): FakeNode {
    const node = this.nodes.find((n) => n.id === id);
    if (node === undefined) throw new Error(`no node ${id}`);
    return node;
  }

  get endpoints(): string[] {
    return this.nodes.map((n) => n.endpoint);
  }

  /** A new leader in a new term (the generation clock moves on). */
  elect(id: string | undefined): void {
    this.leaderId = id === undefined ? undefined : nodeId(id);
    this.term += 1;
  }

  /** Drops history through `revision` (as etcd's Compact). */
  compact(revision: number): void {
    this.store.apply(++this.index, { kind: 'compact', clientId: 'test-compactor',
      sequence: this.index, nowMs: this.nowMs(), revision });
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) await node.down();
  }

  write(node: FakeNode, command: KvWrite, done: (outcome: WriteOutcome) => void): void {
    if (node.role !== 'leader') {
      return done({ kind: 'failed', error: new CoordError('CONCLAVE_NOT_LEADER', 'not leader') });
    }
    const fault = node.coreFaults.shift();
    if (fault === 'unknown-without-apply') {
      return done({ kind: 'unknown', error: new CoordError('CONCLAVE_TIMEOUT', 'lost') });
    }
    // The client library always sends an idempotency key.
    const clientId = String(command.clientId);
    if (this.inflight.has(clientId)) {
      this.inflightViolations.push(`${clientId}#${command.sequence}`);
    }
    this.inflight.add(clientId);
    const apply = (): void => {
      this.inflight.delete(clientId);
      const result = this.store.apply(++this.index, { ...command, nowMs: this.nowMs() });
      this.applied.push(`${clientId}#${command.sequence}`);
      for (const n of this.nodes) n.hub.notify();
      if (fault === 'unknown-after-apply') {
        return done({ kind: 'unknown', error: new CoordError('CONCLAVE_TIMEOUT', 'lost') });
      }
      done({ kind: 'applied', result });
    };
    const delayMs = this.options.applyDelayMs ?? 0;
    if (delayMs > 0) setTimeout(apply, delayMs);
    else apply();
  }

  statusOf(node: FakeNode): unknown {
    const leader = node.role === 'leader';
    return {
      id: node.id, role: node.role, term: this.term,
      leaderId: this.leaderKnown ? this.leaderId : undefined,
      commitIndex: this.index, appliedIndex: this.index, lastIndex: this.index,
      revision: this.store.revision,
      members: this.nodes.map((n) => ({
        id: n.id, clientUrl: n.url, peerUrl: `127.0.0.1:${n.port + 1}`,
        ...(leader ? { role: n.role, matchIndex: this.index } : {}),
      })),
    };
  }

  /** Log time: fixed steps, so runs do not depend on the wall clock. */
  private nowMs(): number {
    return 1_700_000_000_000 + this.index;
  }
}
