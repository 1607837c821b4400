/**
 * A fake consistent core for the client's lease tests, in the manner of fake-cluster.ts: N
 * HTTP servers on 127.0.0.1 running the real client protocol (http-api.ts, with watches) and the
 * real keep-alive stream (lease-stream.ts) over one shared KvStore and one real LeaseTracker on the
 * system clock, with a log that commits at once. The leader is whoever the test elects (the
 * tracker then starts a new office; streams on the old leader close, as the server does).
 * `dropKeepAlives` swallows keep-alives (no answer ever comes), as a partition would.
 * Not a test file itself.
 */
import {
  createServer, type IncomingMessage, type Server, type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SystemClock } from '../../src/adapters/system-clock.js';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import {
  encodeValidKvCommand, KV_STORE_DEFAULTS, KvStore, type KvApplyResult, type KvCommand,
  type KvKeySelector, type KvRangeRequest, type LeaseTiming,
} from '../../src/core/kv/index.js';
import { CoordError } from '../../src/errors.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import {
  LeaseTracker, leaseTtlProblem, type LeaseAnswer, type LeaseConfig,
} from '../../src/runtime/lease/index.js';
import type {
  ConsistentCore, KvWrite, LeaseListing, LeaseOutcome, LeaseStatus, ReadOutcome, WriteOutcome,
} from '../../src/runtime/core/consistent-core.js';
import { CLIENT_LIMITS_DEFAULTS } from '../../src/server/client-limits.js';
import { clientDoor, createHttpApi } from '../../src/server/http-api.js';
import { ClientStreamHub } from '../../src/server/client-stream.js';
import { httpPathOf } from './fake-cluster.js';
import { LeaseStreamHub } from '../../src/server/lease-stream.js';
import { leaderlessAnswer } from '../../src/server/request-verdicts.js';
import { WatchHub } from '../../src/server/watch-hub.js';

/** Fast timing: a 30 ms election timeout makes the TTL minimum 93 ms. */
export const FAKE_TIMING: LeaseTiming = { electionTimeoutMsMax: 30, clockRateErrorMax: 0.01,
  checkpointIntervalMs: 50 };
const LEASE: LeaseConfig = { checkpointIntervalMs: 50, leasesPerEntryMax: 1000, retryDelayMs: 10 };

export interface FakeTls {
  readonly cert: string;
  readonly key: string;
  readonly ca?: string;
  readonly requestCert?: boolean;
}

interface FakeLeaseNode {
  readonly id: NodeId;
  readonly server: Server;
  readonly streams: LeaseStreamHub;
  readonly clientStreams: ClientStreamHub;
  readonly watches: WatchHub;
  url: string;
  endpoint: string;
}

export class LeaseFakeCluster {
  readonly store = new KvStore(KV_STORE_DEFAULTS);
  readonly clock = new SystemClock();
  readonly tracker: LeaseTracker;
  readonly nodes: FakeLeaseNode[] = [];
  /** When true, keep-alives get no answer (the client's local deadline must run out). */
  dropKeepAlives = false;
  /** Every HTTP request's method and path (with its query), in arrival order, on any node. */
  readonly requests: string[] = [];
  /** Keep-alives that reached the tracker. */
  keepAlivesSeen = 0;
  leaderId: NodeId | undefined;
  private term = 0;
  private index = 0;

  private constructor() {
    this.tracker = new LeaseTracker(LEASE, {
      clock: this.clock, timer: this.clock, leases: this.store,
      propose: (command, done) => {
        const result = this.apply(command);
        setImmediate(() => done({ kind: 'applied', result }));
      },
      confirmLeadership: (done) => setImmediate(() => done(this.leaderId !== undefined)),
    });
  }

  /**
   * `tls`: serve HTTPS (and wss) with this certificate; with `ca` and `requestCert`, clients
   * must present a certificate that chains to `ca` (mutual TLS).
   */
  static async start(nodes = 3, tls?: FakeTls): Promise<LeaseFakeCluster> {
    const cluster = new LeaseFakeCluster();
    for (let i = 1; i <= nodes; i++) await cluster.listen(nodeId(`n${i}`), tls);
    cluster.elect('n1');
    return cluster;
  }

  get endpoints(): string[] {
    return this.nodes.map((n) => n.endpoint);
  }

  /** A new leader in a new term: the tracker starts a new office; old streams close. */
  elect(id: string): void {
    for (const node of this.nodes) node.streams.closeAll('not the leader any more');
    this.tracker.becomeFollower();
    this.leaderId = nodeId(id);
    this.term += 1;
    this.tracker.becomeLeader(this.term);
  }

  async stop(): Promise<void> {
    this.tracker.stop();
    for (const node of this.nodes) {
      node.streams.closeAll('stopping');
      node.clientStreams.closeAll('stopping');
      node.watches.closeAll();
      node.server.closeAllConnections();
      await new Promise<void>((resolve) => node.server.close(() => resolve()));
    }
  }

  private apply(command: KvCommand): KvApplyResult {
    const encoded = encodeValidKvCommand(command, this.store.config);
    if (encoded.kind !== 'ok') throw new Error(JSON.stringify(encoded.problems));
    this.index += 1;
    const result = this.store.apply(this.index, command);
    this.tracker.onApplied(result);
    // Watchers see every change, lease expiries included (the election tests wait on them).
    for (const node of this.nodes) node.watches.notify();
    return result;
  }

  private async listen(id: NodeId, tls: FakeTls | undefined): Promise<void> {
    const core = this.core(id);
    const clientUrlOf = (other: NodeId): string | undefined =>
      this.nodes.find((n) => n.id === other)?.url;
    const watches = new WatchHub(core.store, CLIENT_LIMITS_DEFAULTS);
    const door = clientDoor(core);
    const api = createHttpApi({ core, watches, clientUrlOf, logger: SILENT_LOGGER,
      ...door, requestTimeoutMs: 2000, metrics: () => '', status: () => ({}) });
    const clientStreams = new ClientStreamHub({ watches, guard: door.guard, limits: door.limits,
      logger: SILENT_LOGGER, calls: { core, quota: door.quota, clientUrlOf,
        status: () => ({}), requestTimeoutMs: 2000 },
      intercept: (op, body) => void this.requests.push(httpPathOf(op, body)) });
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.requests.push(`${req.method ?? '?'} ${req.url ?? '/'}`);
      api(req, res);
    };
    const server: Server = tls === undefined ? createServer(handler)
      : createHttpsServer({ cert: tls.cert, key: tls.key,
        ...(tls.ca === undefined ? {} : { ca: tls.ca }),
        ...(tls.requestCert === true ? { requestCert: true, rejectUnauthorized: true } : {}),
      }, handler);
    const streams = new LeaseStreamHub({ core, clientUrlOf, logger: SILENT_LOGGER,
      leaderless: leaderlessAnswer(core, 1000) });
    server.on('upgrade', (req, socket, head) => {
      if (clientStreams.handleUpgrade(req, socket, head)) return;
      if (!streams.handleUpgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const scheme = tls === undefined ? 'http' : 'https';
    this.nodes.push({ id, server, streams, clientStreams, watches, url: `${scheme}://127.0.0.1:${port}`,
      endpoint: `127.0.0.1:${port}` });
  }

  /** The parts of ConsistentCore the HTTP API, the watch hub and the stream use. */
  private core(id: NodeId): ConsistentCore {
    const leader = (): boolean => this.leaderId === id;
    const notLeader = (): CoordError => new CoordError('CONCLAVE_NOT_LEADER', 'not leader');
    const fake = {
      id,
      store: this.store,
      status: () => ({ role: leader() ? 'leader' : 'follower', term: this.term,
        leaderId: this.leaderId }),
      write: (write: KvWrite, done: (outcome: WriteOutcome) => void) => {
        if (!leader()) return done({ kind: 'failed', error: notLeader() });
        const problem = write.kind === 'lease-grant'
          ? leaseTtlProblem(write.ttlMs, FAKE_TIMING) : undefined;
        if (problem !== undefined) {
          return done({ kind: 'failed', error: new CoordError('CONCLAVE_REQUEST_INVALID',
            problem) });
        }
        const result = this.apply({ ...write, nowMs: Date.now() } as KvCommand);
        setImmediate(() => done({ kind: 'applied', result }));
      },
      read: (request: KvRangeRequest, _consistency: string,
        done: (outcome: ReadOutcome) => void) => done({ kind: 'ok',
        result: this.store.range(request) }),
      eventsSince: (from: number, selector: KvKeySelector, limit?: number) =>
        this.store.eventsSince(from, selector, limit),
      keepAlive: (leaseId: number, done: (outcome: LeaseOutcome<LeaseStatus>) => void) => {
        if (this.dropKeepAlives) return;
        this.keepAlivesSeen += 1;
        if (!leader()) return done({ kind: 'failed', error: notLeader() });
        this.tracker.keepAlive(leaseId, (answer) => done(outcomeOf(answer)));
      },
      timeToLive: (leaseId: number, keys: boolean, done: (outcome: LeaseOutcome<LeaseStatus
        & { keys?: readonly string[] }>) => void) => {
        this.tracker.timeToLive(leaseId, (answer) => {
          const outcome = outcomeOf(answer);
          done(outcome.kind === 'ok' && keys
            ? { kind: 'ok', value: { ...outcome.value, keys: this.store.leaseKeys(leaseId) } }
            : outcome);
        });
      },
      listLeases: (done: (outcome: LeaseOutcome<readonly LeaseListing[]>) => void) => {
        done({ kind: 'ok', value: this.store.leases().map((lease) => ({ leaseId: lease.id,
          ttlMs: lease.ttlMs, keyCount: this.store.leaseKeyCount(lease.id) })) });
      },
    };
    return fake as unknown as ConsistentCore;
  }
}

function outcomeOf(answer: LeaseAnswer): LeaseOutcome<LeaseStatus> {
  switch (answer.kind) {
    case 'ok':
      return { kind: 'ok', value: { leaseId: answer.leaseId, ttlMs: answer.ttlMs,
        remainingMs: Math.floor(answer.remainingMs) } };
    case 'not-found':
      return { kind: 'failed', error: new CoordError('CONCLAVE_LEASE_EXPIRED', 'no such lease') };
    case 'not-leader':
      return { kind: 'failed', error: new CoordError('CONCLAVE_NOT_LEADER', 'not leader') };
    case 'unavailable':
      return { kind: 'failed', error: new CoordError('CONCLAVE_UNAVAILABLE', answer.reason) };
    case 'overloaded':
      return { kind: 'failed', error: new CoordError('CONCLAVE_OVERLOADED', answer.reason) };
  }
}
