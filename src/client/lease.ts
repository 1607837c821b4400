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
import { leaseHolderDeadlineMs, LEASE_KEEPALIVE_FRACTION } from '../core/kv/lease-timing.js';
import type { TimerHandle } from '../ports/timer.js';
import { CoordError } from '../errors.js';
import type { Caller } from './caller.js';
import type { ClientContext } from './context.js';
import type { SignalOptions } from './kv.js';
import type { WriteLanes } from './lanes.js';
import type { LeaseKeepAliveResult, LeaseStreamClient } from './lease-stream.js';

export type { LeaseKeepAliveResult } from './lease-stream.js';

export interface GrantLeaseOptions extends SignalOptions {
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
  readonly context: ClientContext;
  readonly caller: Caller;
  readonly lanes: WriteLanes;
  readonly stream: LeaseStreamClient;
  /** Told of every lease granted, before the grant resolves (ClientComponents.onLease). */
  readonly onLease?: ((lease: Lease) => void) | undefined;
}

/** Options of `timeToLive`. */
export interface TimeToLiveOptions extends SignalOptions {
  /** Also list the keys attached. Default: false. */
  readonly keys?: boolean;
}

/** A lease this client holds. */
export class Lease {
  private readonly controller = new AbortController();
  private deadlineMs: number;
  private deadlineTimer: TimerHandle | undefined;
  private keepAliveTimer: TimerHandle | undefined;
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
    const { closing } = c.context;
    closing.addEventListener('abort', onClose, { once: true });
    this.controller.signal.addEventListener('abort',
      () => closing.removeEventListener('abort', onClose), { once: true });
  }

  /**
   * Aborts when this client can no longer count on the lease: at the local deadline (before any
   * server could end it), on a keep-alive answered CONCLAVE_LEASE_EXPIRED, on `revoke()`, or
   * when the client closes. `signal.reason` is a CoordError saying which.
   */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The local deadline, on the client's monotonic clock (`Clock.monotonicMs()`). Unit: ms. */
  get expiresAtMs(): number {
    return this.deadlineMs;
  }

  /** Time left before the local deadline (0 once the signal aborted). Unit: ms. */
  get remainingMs(): number {
    if (this.signal.aborted) return 0;
    return Math.max(0, this.deadlineMs - this.c.context.clock.monotonicMs());
  }

  /** Background keep-alives are running (`startKeepAlive()` and not stopped or ended). */
  get keepingAlive(): boolean {
    return this.autoKeepAlive && !this.signal.aborted;
  }

  /**
   * One keep-alive now; on success the local deadline moves to its send time + TTL × (1 −
   * ρ)/(1 + ρ) − margin. Rejects with CONCLAVE_LEASE_EXPIRED (and aborts the signal) when the
   * lease is gone, or another CoordError when no leader answered (the deadline stays).
   */
  async keepAlive(options: SignalOptions = {}): Promise<LeaseKeepAliveResult> {
    if (this.signal.aborted) throw this.signal.reason as CoordError;
    const sentAtMs = this.c.context.clock.monotonicMs();
    try {
      const result = await this.c.stream.keepAlive(this.id, options.signal);
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
    this.keepAliveTimer?.cancel();
  }

  /** The leader's view: TTL, remaining TTL and (with `keys`) the keys attached. */
  timeToLive(options: TimeToLiveOptions = {}): Promise<LeaseTimeToLive> {
    return leaseTimeToLive(this.c.caller, this.id, options);
  }

  /** Ends the lease now: its keys are deleted; the signal aborts. */
  async revoke(options: SignalOptions = {}): Promise<LeaseRevokeResult> {
    this.stopKeepAlive();
    this.end(new CoordError('CONCLAVE_LEASE_EXPIRED', `lease ${this.id} revoked by its holder`));
    return revokeLease(this.c, this.id, options.signal);
  }

  private extend(sentAtMs: number): void {
    const { config, clock, timer } = this.c.context;
    const deadlineMs = leaseHolderDeadlineMs(sentAtMs, this.ttlMs,
      config.clockRateErrorMax, config.leaseMarginMs);
    if (this.signal.aborted || deadlineMs <= this.deadlineMs) return;
    this.deadlineMs = deadlineMs;
    this.deadlineTimer?.cancel();
    const delayMs = Math.max(0, deadlineMs - clock.monotonicMs());
    this.deadlineTimer = timer.setTimer(delayMs, () => this.end(new CoordError(
      'CONCLAVE_LEASE_EXPIRED',
      `lease ${this.id}: no keep-alive acknowledged in time; the local deadline passed`)));
  }

  private schedule(delayMs: number): void {
    this.keepAliveTimer?.cancel();
    if (!this.autoKeepAlive || this.signal.aborted) return;
    this.keepAliveTimer = this.c.context.timer.setTimer(delayMs, () => {
      this.keepAlive().then(() => this.schedule(this.ttlMs * LEASE_KEEPALIVE_FRACTION), () => {
        // No answer (leader change, network): try again soon, until the deadline passes.
        this.schedule(Math.min(this.c.context.config.backoffMsMax, this.ttlMs / 10));
      });
    });
  }

  private end(reason: CoordError): void {
    if (this.signal.aborted) return;
    this.stopKeepAlive();
    this.deadlineTimer?.cancel();
    this.controller.abort(reason);
  }
}

/** Lease calls that need no held lease (CLI, tools): `client.leases`. */
export class LeaseClient {
  constructor(private readonly c: LeaseComponents) {}

  /** Grants a lease and (by default) keeps it alive in the background. */
  async grant(options: GrantLeaseOptions): Promise<Lease> {
    const sentAtMs = this.c.context.clock.monotonicMs();
    const { signal } = options;
    const body = await this.c.lanes.with((ticket) => this.c.caller.call(
      { kind: 'lease-grant', ttlMs: options.ttlMs, ...ticket },
      { leaderOnly: true, signal }), signal);
    const { leaseId, ttlMs } = body as { kind?: unknown; leaseId?: unknown; ttlMs?: unknown };
    if ((body as { kind?: unknown }).kind !== 'lease-grant' || typeof leaseId !== 'number'
      || typeof ttlMs !== 'number') {
      throw new CoordError('CONCLAVE_PROTOCOL', `expected a lease grant, got `
        + `${JSON.stringify(body).slice(0, 200)}`, { outcome: 'unknown' });
    }
    // From the first attempt's send: a retry may find the grant applied by an earlier one.
    const lease = new Lease(leaseId, ttlMs, sentAtMs, this.c);
    this.c.onLease?.(lease);
    if (options.autoKeepAlive !== false) lease.startKeepAlive();
    return lease;
  }

  /** One keep-alive of any lease (e.g. one another process holds), as one request. */
  async keepAliveOnce(leaseId: number, options: SignalOptions = {}):
    Promise<LeaseKeepAliveResult> {
    return await this.c.caller.call({ kind: 'lease-keepalive', leaseId },
      { leaderOnly: true, signal: options.signal }) as LeaseKeepAliveResult;
  }

  timeToLive(leaseId: number, options: TimeToLiveOptions = {}): Promise<LeaseTimeToLive> {
    return leaseTimeToLive(this.c.caller, leaseId, options);
  }

  revoke(leaseId: number, options: SignalOptions = {}): Promise<LeaseRevokeResult> {
    return revokeLease(this.c, leaseId, options.signal);
  }

  /** Every lease, as the leader sees it. */
  async list(options: SignalOptions = {}): Promise<readonly LeaseListing[]> {
    const body = await this.c.caller.call({ kind: 'lease-list' },
      { leaderOnly: true, signal: options.signal }) as { leases?: unknown };
    if (!Array.isArray(body.leases)) {
      throw new CoordError('CONCLAVE_PROTOCOL', 'expected { leases: [...] }');
    }
    return body.leases as LeaseListing[];
  }
}

async function leaseTimeToLive(caller: Caller, leaseId: number, options: TimeToLiveOptions):
  Promise<LeaseTimeToLive> {
  return await caller.call({ kind: 'lease-ttl', leaseId,
    ...(options.keys === true ? { keys: true } : {}) },
  { leaderOnly: true, signal: options.signal }) as LeaseTimeToLive;
}

async function revokeLease(c: LeaseComponents, leaseId: number,
  signal: AbortSignal | undefined): Promise<LeaseRevokeResult> {
  const body = await c.lanes.with((ticket) => c.caller.call(
    { kind: 'lease-revoke', leaseId, ...ticket }, { leaderOnly: true, signal }),
  signal) as { kind?: unknown; revision?: unknown; deleted?: unknown };
  if (body.kind !== 'lease-revoke' || typeof body.revision !== 'number'
    || typeof body.deleted !== 'number') {
    throw new CoordError('CONCLAVE_PROTOCOL', `expected a lease revoke, got `
      + `${JSON.stringify(body).slice(0, 200)}`, { outcome: 'unknown' });
  }
  return { revision: body.revision, deleted: body.deleted };
}
