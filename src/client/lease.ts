/**
 * Leases from the client's side: grant, keep alive, revoke, time-to-live, list — and, for
 * each lease this client holds, a local deadline on its own monotonic clock that passes before
 * any server could end the lease (docs/leases.md, "The holder's deadline"):
 *
 *   local deadline = (send time of the last acknowledged keep-alive, or of the grant)
 *                    + TTL × (1 − ρ)/(1 + ρ) − leaseMarginMs
 *
 * `lease.signal` aborts at that deadline (or when the lease is revoked, found expired, or the
 * client closes): the foundation the election and lock recipes build on. Background
 * keep-alives (every TTL/3, over one pipelined stream per client) move it on; a keep-alive
 * that gets no answer moves nothing.
 */
import type { Clock } from '../ports/clock.js';
import { leaseHolderDeadlineMs, LEASE_KEEPALIVE_FRACTION } from '../core/kv/lease-timing.js';
import { CoordError } from '../errors.js';
import type { Caller } from './caller.js';
import type { ClientConfig } from './config.js';
import type { WriteLanes } from './lanes.js';
import type { LeaseKeepAliveResult, LeaseStreamClient } from './lease-stream.js';

export type { LeaseKeepAliveResult } from './lease-stream.js';

export interface GrantLeaseOptions {
  /**
   * Time-to-live. Unit: ms. The servers refuse one below their minimum (about 3.1 × their
   * longest election timeout: 6.2 s with the LAN defaults) with CONCLAVE_REQUEST_INVALID
   * naming it.
   */
  readonly ttlMs: number;
  /**
   * Keep the lease alive in the background every TTL/3 until it is revoked, lost, or the client
   * closes. Default: true.
   */
  readonly autoKeepAlive?: boolean;
}

export interface LeaseTimeToLive {
  readonly leaseId: number;
  /** The granted TTL. Unit: ms. */
  readonly ttlMs: number;
  /** The leader's remaining TTL. Unit: ms. */
  readonly remainingMs: number;
  /** The keys attached, when asked for. */
  readonly keys?: readonly string[];
}

export interface LeaseListing {
  readonly leaseId: number;
  readonly ttlMs: number;
  /** The leader's remaining TTL (absent while the lease is being revoked). Unit: ms. */
  readonly remainingMs?: number;
  readonly keyCount: number;
}

export interface LeaseRevokeResult {
  readonly revision: number;
  /** Keys deleted with the lease. */
  readonly deleted: number;
}

export interface LeaseComponents {
  readonly caller: Caller;
  readonly lanes: WriteLanes;
  readonly stream: LeaseStreamClient;
  readonly clock: Clock;
  readonly config: ClientConfig;
  /** Aborted when the client closes. */
  readonly closing: AbortSignal;
}

/** A lease this client holds. */
export class Lease {
  private readonly controller = new AbortController();
  private deadlineMs: number;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private autoKeepAlive = false;

  /** Use `client.grantLease()` or `client.leases.grant()`. */
  constructor(
    /** The lease id (the log index of its grant). */
    readonly id: number,
    /** The granted TTL. Unit: ms. */
    readonly ttlMs: number,
    /** When the grant request was sent, on the client's monotonic clock. */
    sentAtMs: number,
    private readonly c: LeaseComponents,
  ) {
    this.deadlineMs = -Infinity;
    this.extend(sentAtMs);
    const onClose = (): void => this.end(new CoordError('CONCLAVE_UNAVAILABLE',
      'the client was closed'));
    c.closing.addEventListener('abort', onClose, { once: true });
    this.controller.signal.addEventListener('abort',
      () => c.closing.removeEventListener('abort', onClose), { once: true });
  }

  /**
   * Aborts when this client can no longer count on the lease: at the local deadline (before any
   * server could end it), on a keep-alive answered CONCLAVE_LEASE_EXPIRED, on `revoke()`, or
   * when the client closes. `signal.reason` is a CoordError saying which.
   */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The local deadline, on the client's monotonic clock (`performance.now()`). Unit: ms. */
  get expiresAtMs(): number {
    return this.deadlineMs;
  }

  /** Time left before the local deadline (0 once the signal aborted). Unit: ms. */
  get remainingMs(): number {
    if (this.signal.aborted) return 0;
    return Math.max(0, this.deadlineMs - this.c.clock.monotonicMs());
  }

  /**
   * One keep-alive now; on success the local deadline moves to its send time + TTL × (1 −
   * ρ)/(1 + ρ) − margin. Rejects with CONCLAVE_LEASE_EXPIRED (and aborts the signal) when the
   * lease is gone, or another CoordError when no leader answered (the deadline stays).
   */
  async keepAlive(): Promise<LeaseKeepAliveResult> {
    if (this.signal.aborted) throw this.signal.reason as CoordError;
    const sentAtMs = this.c.clock.monotonicMs();
    try {
      const result = await this.c.stream.keepAlive(this.id);
      this.extend(sentAtMs);
      return result;
    } catch (error) {
      if (error instanceof CoordError && error.code === 'CONCLAVE_LEASE_EXPIRED') this.end(error);
      throw error;
    }
  }

  /** Starts background keep-alives every TTL/3 (a no-op when they run). */
  startKeepAlive(): void {
    if (this.autoKeepAlive || this.signal.aborted) return;
    this.autoKeepAlive = true;
    this.schedule(this.ttlMs * LEASE_KEEPALIVE_FRACTION);
  }

  /** Stops background keep-alives; the lease then runs out on its own. */
  stopKeepAlive(): void {
    this.autoKeepAlive = false;
    clearTimeout(this.keepAliveTimer);
  }

  /** The leader's view: TTL, remaining TTL and (with `keys`) the keys attached. */
  timeToLive(options: { keys?: boolean } = {}): Promise<LeaseTimeToLive> {
    return leaseTimeToLive(this.c.caller, this.id, options.keys === true);
  }

  /** Ends the lease now: its keys are deleted; the signal aborts. */
  async revoke(): Promise<LeaseRevokeResult> {
    this.stopKeepAlive();
    this.end(new CoordError('CONCLAVE_LEASE_EXPIRED', `lease ${this.id} revoked by its holder`));
    return revokeLease(this.c, this.id);
  }

  private extend(sentAtMs: number): void {
    const deadlineMs = leaseHolderDeadlineMs(sentAtMs, this.ttlMs,
      this.c.config.clockRateErrorMax, this.c.config.leaseMarginMs);
    if (this.signal.aborted || deadlineMs <= this.deadlineMs) return;
    this.deadlineMs = deadlineMs;
    clearTimeout(this.deadlineTimer);
    const delayMs = Math.max(0, deadlineMs - this.c.clock.monotonicMs());
    this.deadlineTimer = setTimeout(() => this.end(new CoordError('CONCLAVE_LEASE_EXPIRED',
      `lease ${this.id}: no keep-alive acknowledged in time; the local deadline passed`)),
    delayMs);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.keepAliveTimer);
    if (!this.autoKeepAlive || this.signal.aborted) return;
    this.keepAliveTimer = setTimeout(() => {
      this.keepAlive().then(() => this.schedule(this.ttlMs * LEASE_KEEPALIVE_FRACTION), () => {
        // No answer (leader change, network): try again soon, until the deadline passes.
        this.schedule(Math.min(this.c.config.backoffMsMax, this.ttlMs / 10));
      });
    }, delayMs);
  }

  private end(reason: CoordError): void {
    if (this.signal.aborted) return;
    this.stopKeepAlive();
    clearTimeout(this.deadlineTimer);
    this.controller.abort(reason);
  }
}

/** Lease calls that need no held lease (CLI, tools): `client.leases`. */
export class LeaseClient {
  constructor(private readonly c: LeaseComponents) {}

  /** Grants a lease and (by default) keeps it alive in the background. */
  async grant(options: GrantLeaseOptions): Promise<Lease> {
    const sentAtMs = this.c.clock.monotonicMs();
    const body = await this.c.lanes.with((ticket) => this.c.caller.call(
      { method: 'POST', path: '/v1/lease/grant', body: { ttlMs: options.ttlMs, ...ticket } },
      { leaderOnly: true }));
    const { leaseId, ttlMs } = body as { kind?: unknown; leaseId?: unknown; ttlMs?: unknown };
    if ((body as { kind?: unknown }).kind !== 'lease-grant' || typeof leaseId !== 'number'
      || typeof ttlMs !== 'number') {
      throw new CoordError('CONCLAVE_PROTOCOL', `expected a lease grant, got `
        + `${JSON.stringify(body).slice(0, 200)}`, { outcome: 'unknown' });
    }
    // From the first attempt's send: a retry may find the grant applied by an earlier one.
    const lease = new Lease(leaseId, ttlMs, sentAtMs, this.c);
    if (options.autoKeepAlive !== false) lease.startKeepAlive();
    return lease;
  }

  /** One keep-alive of any lease (e.g. one another process holds), over HTTP. */
  async keepAliveOnce(leaseId: number): Promise<LeaseKeepAliveResult> {
    return await this.c.caller.call({ method: 'POST', path: '/v1/lease/keepalive',
      body: { leaseId } }, { leaderOnly: true }) as LeaseKeepAliveResult;
  }

  timeToLive(leaseId: number, options: { keys?: boolean } = {}): Promise<LeaseTimeToLive> {
    return leaseTimeToLive(this.c.caller, leaseId, options.keys === true);
  }

  revoke(leaseId: number): Promise<LeaseRevokeResult> {
    return revokeLease(this.c, leaseId);
  }

  /** Every lease, as the leader sees it. */
  async list(): Promise<readonly LeaseListing[]> {
    const body = await this.c.caller.call({ method: 'GET', path: '/v1/lease/list' },
      { leaderOnly: true }) as { leases?: unknown };
    if (!Array.isArray(body.leases)) {
      throw new CoordError('CONCLAVE_PROTOCOL', 'expected { leases: [...] }');
    }
    return body.leases as LeaseListing[];
  }
}

async function leaseTimeToLive(caller: Caller, leaseId: number, keys: boolean):
  Promise<LeaseTimeToLive> {
  return await caller.call({ method: 'POST', path: '/v1/lease/ttl',
    body: { leaseId, ...(keys ? { keys: true } : {}) } }, { leaderOnly: true }) as LeaseTimeToLive;
}

async function revokeLease(c: LeaseComponents, leaseId: number): Promise<LeaseRevokeResult> {
  const body = await c.lanes.with((ticket) => c.caller.call(
    { method: 'POST', path: '/v1/lease/revoke', body: { leaseId, ...ticket } },
    { leaderOnly: true })) as { kind?: unknown; revision?: unknown; deleted?: unknown };
  if (body.kind !== 'lease-revoke' || typeof body.revision !== 'number'
    || typeof body.deleted !== 'number') {
    throw new CoordError('CONCLAVE_PROTOCOL', `expected a lease revoke, got `
      + `${JSON.stringify(body).slice(0, 200)}`, { outcome: 'unknown' });
  }
  return { revision: body.revision, deleted: body.deleted };
}
