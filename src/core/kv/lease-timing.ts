/**
 * The lease timing formulas, shared by the server (TTL minimum, documented bounds) and the
 * client (the holder's local deadline). docs/leases.md derives each one.
 *
 * ρ (`clockRateErrorMax`): every member's and client's monotonic clock runs between (1 − ρ) and
 * (1 + ρ) times real time. A duration d counted on one clock is at least d / (1 + ρ) and at most
 * d / (1 − ρ) of real time, and a real duration r shows as at least r × (1 − ρ) on any clock.
 */

/** A client keeps a lease alive this often: every TTL / 3 (etcd's client does the same). */
export const LEASE_KEEPALIVE_FRACTION = 1 / 3;

/** What the lease bounds depend on. */
export interface LeaseTiming {
  /** Raft's electionTimeoutMsMax. Unit: ms. */
  readonly electionTimeoutMsMax: number;
  /** ρ: the largest rate error of any clock. Unit: ratio, in [0, 0.2]. */
  readonly clockRateErrorMax: number;
  /** How often the leader checkpoints remaining TTLs. Unit: ms. */
  readonly checkpointIntervalMs: number;
}

/**
 * The share of a TTL a holder may count on its own clock from the moment it sent the request
 * that was acknowledged: (1 − ρ) / (1 + ρ). The server keeps the lease at least TTL / (1 + ρ)
 * of real time after receiving it (later than the send), and the holder's clock shows that real
 * time as at least TTL × (1 − ρ) / (1 + ρ).
 */
export function leaseHolderFraction(clockRateErrorMax: number): number {
  return (1 - clockRateErrorMax) / (1 + clockRateErrorMax);
}

/**
 * The shortest TTL a grant may ask for: 2 × electionTimeoutMsMax / ((1 − ρ)/(1 + ρ) − 1/3),
 * rounded up. Why: a leader change can leave keep-alives unanswered for up to 2 ×
 * electionTimeoutMsMax (followers notice the silence within one, the election completes within
 * another); a holder that keeps alive every TTL/3 must still be inside its local deadline
 * (TTL × (1 − ρ)/(1 + ρ) after its last acknowledged keep-alive) when the new leader answers.
 * With ρ = 0.01 that is about 3.1 × electionTimeoutMsMax (6.2 s on the LAN defaults).
 */
export function leaseTtlMsMin(timing: Pick<LeaseTiming, 'electionTimeoutMsMax' |
  'clockRateErrorMax'>): number {
  const usable = leaseHolderFraction(timing.clockRateErrorMax) - LEASE_KEEPALIVE_FRACTION;
  return Math.ceil((2 * timing.electionTimeoutMsMax) / usable);
}

/**
 * The holder's local deadline on its own monotonic clock: `sentAtMs` (when it sent the grant or
 * keep-alive that was acknowledged) + TTL × (1 − ρ)/(1 + ρ) − `marginMs`. Before it, the server
 * cannot have ended the lease (docs/leases.md, "Never earlier").
 */
export function leaseHolderDeadlineMs(sentAtMs: number, ttlMs: number,
  clockRateErrorMax: number, marginMs: number): number {
  return sentAtMs + ttlMs * leaseHolderFraction(clockRateErrorMax) - marginMs;
}

/**
 * When a lease ends, in real time after its last keep-alive (or grant): never before
 * `earliestMs` = TTL / (1 + ρ) after the leader received it, and the revoke is proposed by
 * `latestMs` = (TTL + checkpointIntervalMs + 2 × electionTimeoutMsMax) / (1 − ρ), however often
 * the leader changes (assumptions in docs/leases.md); the keys go when the revoke commits.
 */
export function leaseEndBoundsMs(ttlMs: number, timing: LeaseTiming):
  { readonly earliestMs: number; readonly latestMs: number } {
  const rho = timing.clockRateErrorMax;
  return {
    earliestMs: ttlMs / (1 + rho),
    latestMs: (ttlMs + timing.checkpointIntervalMs + 2 * timing.electionTimeoutMsMax) / (1 - rho),
  };
}
