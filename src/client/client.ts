/**
 * The client of a Conclave cluster, on ports: `new ConclaveClient(config, components)` runs on
 * whatever clock, timers, randomness and transport it is given (ClientComponents, as
 * ConsistentCore takes its own), so the simulator runs this very code. `connect()`
 * (connect.ts) passes the real ones.
 */
import { formatConfigProblems } from '../core/config.js';
import type { Random } from '../core/random.js';
import { ConfigInvalidError, CoordError } from '../errors.js';
import { Caller } from './caller.js';
import { validateClientConfig, type ClientConfig } from './config.js';
import {
  abortedCall, callSignal, type ClientComponents, type ClientContext,
} from './context.js';
import { Election } from './election.js';
import { KvClient, type SignalOptions } from './kv.js';
import { WriteLanes } from './lanes.js';
import { LeaseClient, type GrantLeaseOptions, type Lease } from './lease.js';
import { LeaseStreamClient } from './lease-stream.js';
import { acquireLock, withLock, type Lock, type LockOptions } from './lock.js';
import type { RecipeComponents } from './recipe-driver.js';
import { EndpointRouter } from './router.js';
import { gatherStatus, type ClusterStatus } from './status.js';
import { Watch, type WatchOptions, type WatchSelector } from './watch.js';

/**
 * What the client library offers, whatever carries it: `ConclaveClient` over a ClientTransport
 * (HTTP, the simulator's network) implements it; another backend (etcd's gRPC API) may
 * implement a transport, or this whole interface. Application code that takes a `Client`
 * works with either.
 */
export interface Client {
  readonly kv: Pick<KvClient, 'put' | 'get' | 'range' | 'delete' | 'txn' | 'cas'>;
  readonly leases: Pick<LeaseClient, 'grant' | 'keepAliveOnce' | 'timeToLive' | 'revoke'
    | 'list'>;
  readonly clientId: string;
  grantLease(options: GrantLeaseOptions): Promise<Lease>;
  watch(selector: WatchSelector, options?: WatchOptions): Watch;
  election(name: string): Election;
  lock(name: string, options?: LockOptions): Promise<Lock>;
  withLock<T>(name: string, fn: (lock: Lock) => Promise<T> | T, options?: LockOptions):
    Promise<T>;
  status(options?: SignalOptions): Promise<ClusterStatus>;
  close(): void;
}

/**
 * A client of a Conclave cluster. It finds the leader itself, retries what is safe to retry,
 * and rejects with a `CoordError` whose `code` says what went wrong and whose `outcome` says
 * whether a write may have been applied (`unknown`) or certainly was not (`failed`). Every call
 * takes a `signal` that ends it at once.
 */
export class ConclaveClient implements Client {
  /** The key-value store. */
  readonly kv: KvClient;
  /** Leases by id: grant, keep alive once, time-to-live, revoke, list. */
  readonly leases: LeaseClient;
  /** This client's session id; writes use `${clientId}.${lane}`. */
  readonly clientId: string;
  readonly config: ClientConfig;
  private readonly closing = new AbortController();
  private readonly context: ClientContext;
  private readonly lanes: WriteLanes;
  private readonly watches = new Set<Watch>();
  private readonly recipes: RecipeComponents;
  private readonly caller: Caller;

  /**
   * Use `connect()` for a cluster over HTTP. This constructor takes the ports directly (the
   * simulator's, or a test's); endpoints are then whatever the transport understands.
   */
  constructor(config: ClientConfig, private readonly components: ClientComponents) {
    const problems = validateClientConfig(config, (text) =>
      typeof text === 'string' && text !== '' ? undefined : 'must be a non-empty string');
    if (problems.length > 0) throw new ConfigInvalidError(formatConfigProblems(problems));
    this.config = config;
    this.clientId = config.clientId ?? randomClientId(components.random);
    const { clock, timer, random, transport } = components;
    this.context = { config, clock, timer, random, transport,
      router: new EndpointRouter(config.endpoints), closing: this.closing.signal };
    this.lanes = new WriteLanes(this.clientId, config.writesInflightMax);
    const caller = new Caller(this.context);
    this.caller = caller;
    this.kv = new KvClient(caller, this.lanes);
    this.leases = new LeaseClient({ context: this.context, caller, lanes: this.lanes,
      stream: new LeaseStreamClient(this.context), onLease: components.onLease });
    this.recipes = { kv: this.kv, leases: this.leases, clock, timer, config,
      watch: (selector, options) => this.watch(selector, options),
      campaignMutants: components.campaignMutants };
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
    return this.context.router.leaderUrl;
  }

  /** Every endpoint the client knows (the configured ones and leaders learned since). */
  get endpoints(): readonly string[] {
    return this.context.router.endpoints;
  }

  /**
   * Events on one key or a prefix, from `fromRevision` (default: from now on), as an async
   * iterator that reconnects by itself and never skips or repeats an event. It throws a
   * `WatchCompactedError` (code CONCLAVE_KV_COMPACTED) when the history no longer holds the
   * revision it needs, and CONCLAVE_UNAVAILABLE after `retryDeadlineMs` without any member.
   */
  watch(selector: WatchSelector, options: WatchOptions = {}): Watch {
    if (this.closing.signal.aborted) throw closedError();
    const watch = new Watch(selector, options, this.context,
      (ended) => this.watches.delete(ended));
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

  /**
   * An authentication call (docs/api.md, "Authentication"): `auth-enable`, `user-add`
   * (`{ name, password }`), `role-grant-permission` (`{ name, type, key, prefix? }`), ...
   * Changes go to the leader; listings are answered by any member. Resolves with the answer's
   * body; rejects with a CoordError (CONCLAVE_PERMISSION_DENIED without the role root).
   */
  authCall(call: string, body: Readonly<Record<string, unknown>> = {},
    options: SignalOptions = {}): Promise<unknown> {
    return this.caller.call({ kind: 'auth', call, body },
      { leaderOnly: !AUTH_READS.has(call), signal: options.signal });
  }

  /** The cluster's view, asked of every endpoint at once (see ClusterStatus). */
  async status(options: SignalOptions = {}): Promise<ClusterStatus> {
    if (this.closing.signal.aborted) throw closedError();
    const signal = callSignal(this.closing.signal, options.signal);
    // Reading changes nothing: an aborted status is `failed` whatever had left.
    const status = await gatherStatus(this.context, signal).catch((error: unknown) => {
      throw signal.aborted ? abortedCall(options.signal, false) : error;
    });
    if (signal.aborted) throw abortedCall(options.signal, false);
    return status;
  }

  /**
   * Ends every watch and aborts calls in flight (they reject with CONCLAVE_UNAVAILABLE; a write
   * already sent has outcome `unknown`), and closes the transport. Later calls reject at once.
   */
  close(): void {
    if (this.closing.signal.aborted) return;
    this.closing.abort();
    this.lanes.close();
    for (const watch of this.watches) watch.close();
    this.watches.clear();
    this.components.transport.close();
  }
}

/** Auth calls any member answers from its own store. */
const AUTH_READS: ReadonlySet<string> = new Set(['auth-authenticate', 'auth-status',
  'user-get', 'user-list', 'role-get', 'role-list']);

/** `c-` and 128 random bits as a UUID-shaped hex string (from the client's Random). */
function randomClientId(random: Random): string {
  const hex = Array.from({ length: 4 }, () =>
    random.nextUint32().toString(16).padStart(8, '0')).join('');
  return `c-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-`
    + hex.slice(20);
}

function closedError(): CoordError {
  return new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed');
}
