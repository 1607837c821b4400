/**
 * Core mode: the monitors elect their leader in a Conclave consistent core (a 3-node Raft
 * cluster of `conclave server` processes). Each monitor campaigns in the election
 * `eshop-monitors` with a lease; the first in line leads, with the election's fencing token
 * (the winning key's create revision, ordered by the Raft log) and its term. The leadership's
 * signal aborts before the server can end the lease (deadline, stall of this process, key
 * deleted), and the monitor then stops ordering at once and campaigns again, at the back of
 * the line.
 */
import {
  connect, LeadershipLostError, runOnce, type ConclaveClient, type Leadership,
} from 'conclave';
import type { Coordination, MonitorLeadership } from './coordination.js';
import type { EshopEventBody } from './events.js';

/** The election's name: every monitor of the shop campaigns in it. */
export const ELECTION_NAME = 'eshop-monitors';

/** Pause after a failed campaign before the next. Unit: ms. Why 200: the core's failover. */
const CAMPAIGN_RETRY_MS = 200;

export interface CoreCoordinationOptions {
  readonly name: string;
  /** The consistent core's client endpoints (host:port). */
  readonly endpoints: readonly string[];
  /** Which service holds the election: Conclave's consistent core, or etcd. Default: core. */
  readonly backend?: 'conclave' | 'etcd';
  /** TTL of the campaign's lease. Unit: ms. */
  readonly leaseTtlMs: number;
  /** The client's `leaseMarginMs`: a stall longer than this ends the leadership. Unit: ms. */
  readonly leaseMarginMs: number;
  readonly emit: (event: EshopEventBody) => void;
}

export class CoreCoordination implements Coordination {
  readonly address = undefined;
  private client: ConclaveClient | undefined;
  private held: Leadership | undefined;
  private readonly stopping = new AbortController();

  constructor(private readonly options: CoreCoordinationOptions) {}

  start(): Promise<void> {
    const endpoints = [...this.options.endpoints];
    const { leaseMarginMs } = this.options;
    this.client = this.options.backend === 'etcd'
      ? connect({ backend: 'etcd', endpoints, leaseMarginMs })
      : connect({ endpoints, leaseMarginMs });
    void this.campaignLoop(this.client);
    return Promise.resolve();
  }

  current(): MonitorLeadership | undefined {
    const held = this.held;
    const client = this.client;
    if (held === undefined || held.signal.aborted || client === undefined) return undefined;
    return { token: held.fencingToken, term: held.term, signal: held.signal,
      runOnce: async (taskId, fn) => {
        const done = await runOnce(client.kv, held, taskId, async () => ({ result: await fn() }));
        return { ran: done.ran, result: done.result, doneBy: done.record.fencingToken };
      } };
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.held?.resign().catch(() => undefined);
    this.client?.close();
  }

  /** Campaign, lead until the signal aborts, campaign again; until stopped. */
  private async campaignLoop(client: ConclaveClient): Promise<void> {
    const { name, emit, leaseTtlMs } = this.options;
    while (!this.stopping.signal.aborted) {
      let leadership: Leadership;
      try {
        leadership = await client.election(ELECTION_NAME).campaign(name,
          { ttlMs: leaseTtlMs, signal: this.stopping.signal });
      } catch (error) {
        if (this.stopping.signal.aborted) return;
        emit({ kind: 'campaign-failed', error: String(error) });
        await new Promise((resolve) => setTimeout(resolve, CAMPAIGN_RETRY_MS));
        continue;
      }
      this.held = leadership;
      emit({ kind: 'became-leader', token: leadership.fencingToken, term: leadership.term });
      await aborted(leadership.signal);
      this.held = undefined;
      const reason: unknown = leadership.signal.reason;
      emit({ kind: 'lost-leadership', token: leadership.fencingToken,
        reason: reason instanceof LeadershipLostError ? reason.lossReason : String(reason) });
    }
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(),
    { once: true }));
}
