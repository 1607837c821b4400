/**
 * `connect()` and the client it returns: the entry point of the library.
 */
import { randomUUID } from 'node:crypto';
import type { Random } from '../core/random.js';
import { formatConfigProblems } from '../core/config.js';
import type { Clock } from '../ports/clock.js';
import { SystemClock } from '../adapters/system-clock.js';
import { SystemRandom } from '../adapters/system-random.js';
import { ConfigInvalidError, CoordError } from '../errors.js';
import { Caller } from './caller.js';
import { CLIENT_DEFAULTS, validateClientConfig, type ClientConfig,
  type ConnectOptions } from './config.js';
import { Election } from './election.js';
import { parseEndpoint } from './endpoints.js';
import { KvClient } from './kv.js';
import { WriteLanes } from './lanes.js';
import { LeaseClient, type GrantLeaseOptions, type Lease } from './lease.js';
import { LeaseStreamClient } from './lease-stream.js';
import { acquireLock, withLock, type Lock, type LockOptions } from './lock.js';
import type { RecipeComponents } from './recipe-driver.js';
import { EndpointRouter } from './router.js';
import { gatherStatus, type ClusterStatus } from './status.js';
import { Watch, type WatchOptions, type WatchSelector } from './watch.js';

/** What the client reads time and randomness from; tests may pass their own. */
export interface ClientComponents {
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** For back-off jitter. Default: the operating system's randomness. */
  readonly random?: Random;
}

/**
 * A client of a Conclave cluster. It finds the leader itself, retries what is safe to retry,
 * and rejects with a `CoordError` whose `code` says what went wrong and whose `outcome` says
 * whether a write may have been applied (`unknown`) or certainly was not (`failed`).
 */
export class ConclaveClient {
  /** The key-value store. */
  readonly kv: KvClient;
  /** Leases by id: grant, keep alive once, time-to-live, revoke, list. */
  readonly leases: LeaseClient;
  /** This client's session id; writes use `${clientId}.${lane}`. */
  readonly clientId: string;
  readonly config: ClientConfig;
  private readonly closing = new AbortController();
  private readonly router: EndpointRouter;
  private readonly lanes: WriteLanes;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly watches = new Set<Watch>();
  private readonly recipes: RecipeComponents;

  /** Use `connect()`. */
  constructor(config: ClientConfig, components: ClientComponents = {}) {
    const problems = validateClientConfig(config);
    if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
    this.config = config;
    this.clientId = config.clientId ?? `c-${randomUUID()}`;
    this.clock = components.clock ?? new SystemClock();
    this.random = components.random ?? new SystemRandom();
    this.router = new EndpointRouter(config.endpoints.map((e) => {
      const parsed = parseEndpoint(e);
      return 'url' in parsed ? parsed.url : e; // validated above
    }));
    this.lanes = new WriteLanes(this.clientId, config.writesInflightMax);
    const caller = new Caller(config, { clock: this.clock, random: this.random,
      router: this.router, signal: this.closing.signal });
    this.kv = new KvClient(caller, this.lanes);
    const stream = new LeaseStreamClient(config, { clock: this.clock, router: this.router,
      signal: this.closing.signal });
    this.leases = new LeaseClient({ caller, lanes: this.lanes, stream, clock: this.clock,
      config, closing: this.closing.signal });
    this.recipes = { kv: this.kv, leases: this.leases, clock: this.clock, config,
      watch: (selector, options) => this.watch(selector, options) };
  }

  /**
   * Grants a lease of `ttlMs` and (unless `autoKeepAlive: false`) keeps it alive every TTL/3
   * over one pipelined stream. `lease.signal` aborts before any server could end the lease if
   * keep-alives stop being acknowledged. Attach keys with `kv.put(key, value, { lease: lease.id
   * })`: they are deleted when the lease ends.
   *
   * ```ts
   * const lease = await client.grantLease({ ttlMs: 10_000 });
   * await client.kv.put('services/a', 'up', { lease: lease.id });
   * lease.signal.addEventListener('abort', () => stopServing());
   * ```
   */
  grantLease(options: GrantLeaseOptions): Promise<Lease> {
    if (this.closing.signal.aborted) return Promise.reject(closedError());
    return this.leases.grant(options);
  }

  /** The endpoint that last served a leader-only request (or was named leader), if any. */
  get leaderUrl(): string | undefined {
    return this.router.leaderUrl;
  }

  /** Every endpoint the client knows (the configured ones and leaders learned since). */
  get endpoints(): readonly string[] {
    return this.router.endpoints;
  }

  /**
   * Events on one key or a prefix, from `fromRevision` (default: from now on), as an async
   * iterator that reconnects by itself and never skips or repeats an event. It throws a
   * `WatchCompactedError` (code CONCLAVE_KV_COMPACTED) when the history no longer holds the
   * revision it needs, and CONCLAVE_UNAVAILABLE after `retryDeadlineMs` without any member.
   */
  watch(selector: WatchSelector, options: WatchOptions = {}): Watch {
    if (this.closing.signal.aborted) throw closedError();
    const watch = new Watch(selector, options, this.config, { clock: this.clock,
      random: this.random, router: this.router, signal: this.closing.signal,
      onEnd: (ended) => this.watches.delete(ended) });
    this.watches.add(watch);
    return watch;
  }

  /**
   * The election `name` (letters, digits, `.`, `_`, `-`; else a UsageError, CONCLAVE_USAGE):
   * `campaign(id)` resolves with a leadership carrying a fencing token, a term and a `signal`
   * that aborts when it ends; `leader()`; `observe()` (docs/elections.md).
   *
   * ```ts
   * const leadership = await client.election('billing').campaign('node-a', { value: url });
   * leadership.signal.addEventListener('abort', () => stopLeading());
   * await fence.accept(leadership.fencingToken);   // at the resource
   * ```
   */
  election(name: string): Election {
    if (this.closing.signal.aborted) throw closedError();
    return new Election(name, this.recipes);
  }

  /**
   * Waits for the lock `name` and resolves once held: `{ fencingToken, term, signal, unlock() }`.
   * Rejects as `election(name).campaign()` does (CONCLAVE_USAGE for a bad name).
   */
  lock(name: string, options: LockOptions = {}): Promise<Lock> {
    if (this.closing.signal.aborted) return Promise.reject(closedError());
    return acquireLock(this.recipes, name, this.clientId, options);
  }

  /** Runs `fn` holding the lock `name`, then unlocks (also when `fn` throws). */
  withLock<T>(name: string, fn: (lock: Lock) => Promise<T> | T,
    options: LockOptions = {}): Promise<T> {
    if (this.closing.signal.aborted) return Promise.reject(closedError());
    return withLock(this.recipes, name, this.clientId, fn, options);
  }

  /** The cluster's view, asked of every endpoint at once (see ClusterStatus). */
  status(): Promise<ClusterStatus> {
    if (this.closing.signal.aborted) return Promise.reject(closedError());
    return gatherStatus(this.router.endpoints, { timeoutMs: this.config.requestTimeoutMs,
      redirectsMax: this.config.redirectsMax, signal: this.closing.signal });
  }

  /**
   * Ends every watch and aborts calls in flight (they reject with CONCLAVE_UNAVAILABLE; a write
   * already sent has outcome `unknown`). Later calls reject at once.
   */
  close(): void {
    this.closing.abort();
    this.lanes.close();
    for (const watch of this.watches) watch.close();
    this.watches.clear();
  }
}

/**
 * A client of the cluster at `options.endpoints`. No I/O happens until the first call, so this
 * never fails for an unreachable cluster (calls do); it throws ConfigInvalidError
 * (CONCLAVE_CONFIG_INVALID) listing every bad option.
 *
 * ```ts
 * const client = connect({ endpoints: ['127.0.0.1:2379', '127.0.0.1:2381'] });
 * await client.kv.put('config/mode', 'blue');
 * ```
 */
export function connect(options: ConnectOptions, components: ClientComponents = {}):
  ConclaveClient {
  return new ConclaveClient({ ...CLIENT_DEFAULTS, ...stripUndefined(options) }, components);
}

function stripUndefined<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as T;
}

function closedError(): CoordError {
  return new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed');
}
