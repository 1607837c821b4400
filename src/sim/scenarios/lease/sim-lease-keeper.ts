/**
 * A lease holder on a simulated client, as the real client library holds one (src/client/
 * lease.ts): grant, keep alive every TTL/3 (sooner again after a keep-alive that went
 * unanswered), and a local deadline on the client's own clock,
 *
 *   send time of the last acknowledged keep-alive (or of the grant)
 *     + TTL × (1 − ρ)/(1 + ρ) − marginMs        (leaseHolderDeadlineMs, docs/leases.md),
 *
 * before which no server may have ended the lease. `holds()` is what an election or lock
 * recipe asks before acting as the holder. The holder stops by abandoning the lease (no more
 * keep-alives; it still counts on it until its deadline, as `lease.stopKeepAlive()` does) or
 * by revoking it (it stops counting on it before it sends the revoke).
 */
import { assert } from '../../../core/assert.js';
import { leaseHolderDeadlineMs, LEASE_KEEPALIVE_FRACTION } from '../../../core/kv/index.js';
import type { TimerHandle } from '../../../ports/timer.js';
import type { SimAnswer, SimCoreClient } from './sim-core-client.js';

export interface LeaseKeeperOptions {
  /** Unit: ms. */
  readonly ttlMs: number;
  /** ρ, as the servers use it. Unit: ratio. */
  readonly clockRateErrorMax: number;
  /** Taken off every local deadline (the client library's leaseMarginMs). Unit: ms. */
  readonly marginMs: number;
  /** Retry pause after an unanswered keep-alive, at most. Unit: ms. */
  readonly retryDelayMsMax: number;
}

export type KeeperState = 'new' | 'granting' | 'keeping' | 'abandoned' | 'revoked' | 'lost'
  | 'not-granted';

export class SimLeaseKeeper {
  private stateValue: KeeperState = 'new';
  private leaseIdValue: number | undefined;
  /** The local deadline on the client's clock. Unit: ms. */
  private deadlineMsValue = -Infinity;
  private keepAliveTimer: TimerHandle | undefined;
  private deadlineTimer: TimerHandle | undefined;
  /** Keep-alives answered ok. */
  keepAlivesAcked = 0;

  constructor(
    readonly client: SimCoreClient,
    readonly options: LeaseKeeperOptions,
    /** Told once when the holder learns it lost the lease (deadline passed, or expired). */
    private readonly onLost: (reason: string) => void = () => undefined,
  ) {}

  get state(): KeeperState {
    return this.stateValue;
  }

  get leaseId(): number | undefined {
    return this.leaseIdValue;
  }

  /** The local deadline on the client's clock (−Infinity before the grant). Unit: ms. */
  get deadlineMs(): number {
    return this.deadlineMsValue;
  }

  /** Whether the holder may act as the lease's holder now (its local deadline not passed). */
  holds(): boolean {
    return (this.stateValue === 'keeping' || this.stateValue === 'abandoned')
      && this.client.clock.monotonicMs() < this.deadlineMsValue;
  }

  /** Grants the lease, then keeps it alive in the background. */
  grant(done: (answer: SimAnswer<{ leaseId: number; ttlMs: number }>) => void): void {
    assert(this.stateValue === 'new', () => `grant in state ${this.stateValue}`);
    this.stateValue = 'granting';
    this.client.grant(this.options.ttlMs, (answer) => {
      if (answer.kind !== 'ok') {
        this.stateValue = 'not-granted';
        return done(answer);
      }
      this.stateValue = 'keeping';
      this.leaseIdValue = answer.value.leaseId;
      this.extend(answer.sentAtMs);
      this.schedule(this.options.ttlMs * LEASE_KEEPALIVE_FRACTION);
      done(answer);
    });
  }

  /**
   * No more keep-alives: the servers let the lease run out, and the holder counts on it until
   * its local deadline.
   */
  abandon(): void {
    if (this.stateValue !== 'keeping') return;
    this.stateValue = 'abandoned';
    this.keepAliveTimer?.cancel();
  }

  /** Stops counting on the lease at once, then revokes it. */
  revoke(done: (answer: SimAnswer<{ revision: number; deleted: number }>) => void): void {
    const leaseId = this.leaseIdValue;
    assert(leaseId !== undefined, () => `revoke in state ${this.stateValue}`);
    this.stateValue = 'revoked';
    this.keepAliveTimer?.cancel();
    this.deadlineTimer?.cancel();
    this.client.revoke(leaseId, done);
  }

  private extend(sentAtMs: number): void {
    const deadlineMs = leaseHolderDeadlineMs(sentAtMs, this.options.ttlMs,
      this.options.clockRateErrorMax, this.options.marginMs);
    if (deadlineMs <= this.deadlineMsValue) return;
    this.deadlineMsValue = deadlineMs;
    this.deadlineTimer?.cancel();
    const delayMs = Math.max(0, deadlineMs - this.client.clock.monotonicMs());
    this.deadlineTimer = this.client.clock.setTimer(delayMs, () => {
      this.deadlineTimer = undefined;
      if (this.stateValue === 'keeping') this.lose('the local deadline passed');
    });
  }

  private schedule(delayMs: number): void {
    this.keepAliveTimer = this.client.clock.setTimer(delayMs, () => this.keepAliveOnce());
  }

  private keepAliveOnce(): void {
    const leaseId = this.leaseIdValue;
    if (this.stateValue !== 'keeping' || leaseId === undefined) return;
    const intervalMs = this.options.ttlMs * LEASE_KEEPALIVE_FRACTION;
    this.client.keepAlive(leaseId, (answer) => {
      if (this.stateValue !== 'keeping') return;
      if (answer.kind === 'ok') {
        this.keepAlivesAcked++;
        this.extend(answer.sentAtMs);
        return this.schedule(intervalMs);
      }
      if (answer.kind === 'failed' && answer.code === 'CONCLAVE_LEASE_EXPIRED') {
        return this.lose('a keep-alive was answered CONCLAVE_LEASE_EXPIRED');
      }
      // No answer (leader change, network): try again soon, until the deadline passes.
      this.schedule(Math.min(this.options.retryDelayMsMax, this.options.ttlMs / 10));
    }, { timeoutMs: intervalMs });
  }

  private lose(reason: string): void {
    this.stateValue = 'lost';
    this.keepAliveTimer?.cancel();
    this.deadlineTimer?.cancel();
    this.onLost(reason);
  }
}
