/**
 * The lease tracker's configuration, and the checks that tie it to Raft's timing: the shortest
 * TTL a grant may ask for, and the rule that a checkpoint interval is not shorter than a
 * heartbeat (it would fill the log without tightening any bound).
 */
import type { ConfigProblem } from '../../core/config.js';
import { leaseTtlMsMin, type LeaseTiming } from '../../core/kv/lease-timing.js';

/**
 * TEST-ONLY planted bugs. Each flag turns on one small, clearly marked branch of the lease
 * tracker that breaks a rule of docs/leases.md, so the simulator (`conclave sim --scenario lease
 * --mutant NAME`) can prove that its checkers catch it. Production configs leave `mutants` out;
 * nothing outside tests should ever set one.
 */
export interface LeaseMutants {
  /**
   * Rules 4 and 5 broken: an office is not closed when its node stops leading. It keeps its
   * deadlines, answers keep-alives, proposes expiries without a leadership confirmation, and
   * carries on unchanged (nothing re-read from the log) when its node leads again.
   */
  readonly deposedLeaderRevokes: boolean;
  /**
   * Rule 3 broken (etcd-io/etcd#9395): a new leader restarts every lease's full TTL at its
   * election instead of counting on from the log's remaining TTL.
   */
  readonly ttlResetOnElection: boolean;
}

/** No mutant: what a config without `mutants` means. */
export const LEASE_NO_MUTANTS: LeaseMutants = Object.freeze({
  deposedLeaderRevokes: false,
  ttlResetOnElection: false,
});

export interface LeaseConfig {
  /**
   * How often the leader records, through the log, the remaining TTL of every lease kept alive
   * since the previous checkpoint (and clears its `renewing` mark). A later leader counts on
   * from there instead of restarting the TTL, so a lease with no keep-alives ends within
   * TTL + checkpointIntervalMs + 2 × electionTimeoutMsMax of its last keep-alive.
   * Unit: ms. Default: 5000.
   * Trade-off: each kept-alive lease costs about two small log records per interval (its
   * checkpoint, then the renewal mark written by its next keep-alive); shorter tightens the
   * upper bound. etcd checkpoints every 5 minutes, but its leaders restart the full TTL anyway.
   */
  readonly checkpointIntervalMs: number;
  /**
   * Most leases in one checkpoint, renewal or expiry entry; more go in several entries.
   * Unit: leases. Default: 1000 (about 30 KiB per entry: well under Raft's 1 MiB message).
   * Trade-off: larger entries commit more leases per round trip but delay the heartbeats and
   * appends queued behind them. With one expiry entry in flight at a time this is also the
   * expiry rate limit per commit round (etcd revokes at most 1000 leases a second).
   */
  readonly leasesPerEntryMax: number;
  /**
   * After a failed leadership confirmation or proposal (the cluster is between leaders or the
   * leader is stepping down), wait this long before trying again. Unit: ms. Default: 100 (a LAN
   * heartbeat interval).
   */
  readonly retryDelayMs: number;
  /**
   * How long keep-alives wait for one another before their leadership confirmation starts,
   * counted from the start of the previous one. Keep-alives that arrive a few at a time (1000
   * leases renewed at TTL/3 are 300 a second, a few per event-loop turn) then share one
   * heartbeat round, and their renewal marks one log entry, instead of costing a round and an
   * entry every few milliseconds. A keep-alive that finds no confirmation begun this recently
   * starts one at once, and so do `KEEP_ALIVE_BATCH_AT_ONCE` (64) waiting ones: a lone
   * keep-alive or a pipelined stream is not slowed down. Unit: ms. Default: 0 (no lingering:
   * every event-loop turn's keep-alives get their own round); the server sets its heartbeat
   * interval. At most heartbeatIntervalMs: an answer comes up to this much later, which the
   * holder's slack absorbs (docs/leases.md, the shortest TTL), and rounds spaced by a heartbeat
   * interval take the place of Raft's idle heartbeats instead of adding to them.
   */
  readonly keepAliveLingerMs?: number;
  /**
   * Most callers (keep-alives and time-to-live questions) a leader's lease tracker holds
   * waiting at once, wherever they wait: for its office to be established after an election,
   * for a leadership confirmation, or for a renewal mark to commit. One more is refused at once
   * with CONCLAVE_OVERLOADED (the client backs off and retries) rather than queued without end
   * behind a slow or lost quorum. A waiter is a lease id, a kind and a callback, about 150
   * bytes, so the count bounds the memory too. Unit: callers. Default: 200,000 (twice the
   * store's default `leasesMax`: every lease may have a keep-alive and a question waiting
   * through a leader change; about 30 MB at the bound).
   * Trade-off: lower sheds a flood sooner and caps the memory lower, but refuses keep-alives a
   * healthy leader would have answered once its election settled.
   */
  readonly waitersMax?: number;
  /** TEST-ONLY planted bugs, see {@link LeaseMutants}. Default: absent (no mutant). */
  readonly mutants?: LeaseMutants;
}

/** LeaseConfig.waitersMax when absent. Unit: callers. */
export const LEASE_WAITERS_MAX_DEFAULT = 200_000;

export const LEASE_DEFAULTS: LeaseConfig = Object.freeze({
  checkpointIntervalMs: 5000,
  leasesPerEntryMax: 1000,
  retryDelayMs: 100,
  keepAliveLingerMs: 0,
  waitersMax: LEASE_WAITERS_MAX_DEFAULT,
});

/** The Raft timing the lease rules depend on (fields of RaftTuning). */
export interface LeaseRaftTiming {
  readonly heartbeatIntervalMs: number;
  readonly electionTimeoutMsMax: number;
  /** ρ, Raft's `clockRateErrorMax`: the same bound for leases. */
  readonly clockRateErrorMax: number;
}

/** Every rule `config` breaks under `raft`; empty when it is valid. */
export function validateLeaseConfig(config: LeaseConfig, raft: LeaseRaftTiming): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const field of ['checkpointIntervalMs', 'leasesPerEntryMax', 'retryDelayMs'] as const) {
    const value = config[field];
    if (!Number.isSafeInteger(value) || value < 1) {
      problems.push({ field, value, rule: 'must be an integer >= 1' });
    }
  }
  const waitersMax: unknown = config.waitersMax ?? LEASE_WAITERS_MAX_DEFAULT;
  if (typeof waitersMax !== 'number' || !Number.isSafeInteger(waitersMax) || waitersMax < 1) {
    problems.push({ field: 'waitersMax', value: waitersMax, rule: 'must be an integer >= 1' });
  }
  const lingerMs: unknown = config.keepAliveLingerMs ?? 0;
  if (typeof lingerMs !== 'number' || !Number.isSafeInteger(lingerMs) || lingerMs < 0) {
    problems.push({ field: 'keepAliveLingerMs', value: lingerMs, rule: 'must be an integer >= 0' });
  } else if (lingerMs > raft.heartbeatIntervalMs) {
    problems.push({ field: 'keepAliveLingerMs,heartbeatIntervalMs',
      value: { keepAliveLingerMs: lingerMs, heartbeatIntervalMs: raft.heartbeatIntervalMs },
      rule: 'keepAliveLingerMs must be at most heartbeatIntervalMs: a keep-alive\'s answer waits '
        + 'up to that long for company, and the holder\'s slack is planned for one heartbeat' });
  }
  const mutants: unknown = config.mutants;
  for (const name of mutants === undefined ? [] : Object.keys(LEASE_NO_MUTANTS)) {
    const value: unknown = (mutants as Record<string, unknown> | null)?.[name];
    if (typeof value !== 'boolean') {
      problems.push({ field: `mutants.${name}`, value, rule: 'must be a boolean' });
    }
  }
  const rho = raft.clockRateErrorMax;
  if (!(rho >= 0 && rho <= 0.2)) {
    problems.push({ field: 'clockRateErrorMax', value: rho,
      rule: 'must be in [0, 0.2] for leases (the TTL minimum grows without bound near 0.5)' });
  }
  if (config.checkpointIntervalMs < raft.heartbeatIntervalMs) {
    problems.push({ field: 'checkpointIntervalMs,heartbeatIntervalMs',
      value: { checkpointIntervalMs: config.checkpointIntervalMs,
        heartbeatIntervalMs: raft.heartbeatIntervalMs },
      rule: 'checkpointIntervalMs must be at least heartbeatIntervalMs: a checkpoint takes a '
        + 'commit round, and the bound gains nothing from more' });
  }
  return problems;
}

/** The timing behind the bounds, from the lease config and Raft's. */
export function leaseTimingOf(config: LeaseConfig, raft: LeaseRaftTiming): LeaseTiming {
  return { electionTimeoutMsMax: raft.electionTimeoutMsMax,
    clockRateErrorMax: raft.clockRateErrorMax, checkpointIntervalMs: config.checkpointIntervalMs };
}

/**
 * Why a grant of `ttlMs` is refused before it is proposed (undefined: accepted here; the store
 * still checks the maximum). The message names the minimum and the formula behind it.
 */
export function leaseTtlProblem(ttlMs: number, timing: LeaseTiming): string | undefined {
  if (!Number.isSafeInteger(ttlMs)) return 'ttlMs must be an integer (ms)';
  const minMs = leaseTtlMsMin(timing);
  if (ttlMs >= minMs) return undefined;
  return `ttlMs must be at least ${minMs} ms (is ${ttlMs}): 2 × electionTimeoutMsMax `
    + `(${timing.electionTimeoutMsMax} ms) / ((1 − ρ)/(1 + ρ) − 1/3) with ρ = `
    + `${timing.clockRateErrorMax}, so that a lease kept alive every TTL/3 outlives a leader `
    + 'change (docs/leases.md)';
}
