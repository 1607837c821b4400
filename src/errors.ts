/**
 * Errors users can match on: every operating error that crosses a boundary (client, server, CLI)
 * is a `CoordError` with a stable `code`. docs/errors.md lists each code with what to do.
 * Match on `error.code`, not on the class: codes survive serialization and library copies.
 */

export type CoordErrorCode =
  | 'CONCLAVE_CONFIG_INVALID'
  | 'CONCLAVE_USAGE'
  | 'CONCLAVE_NOT_LEADER'
  | 'CONCLAVE_NO_LEADER'
  | 'CONCLAVE_NO_QUORUM'
  | 'CONCLAVE_TIMEOUT'
  | 'CONCLAVE_DEADLINE_EXCEEDED'
  | 'CONCLAVE_LEASE_EXPIRED'
  | 'CONCLAVE_RELEASED'
  | 'CONCLAVE_FENCING_TOKEN_STALE'
  | 'CONCLAVE_PROTOCOL'
  | 'CONCLAVE_STORAGE_CORRUPT'
  | 'CONCLAVE_UNAVAILABLE'
  | 'CONCLAVE_REQUEST_INVALID'
  | 'CONCLAVE_KV_COMPACTED'
  | 'CONCLAVE_KV_FUTURE_REVISION'
  | 'CONCLAVE_DUPLICATE_STALE'
  | 'CONCLAVE_IDEMPOTENCY_MISMATCH'
  | 'CONCLAVE_QUOTA_EXCEEDED'
  | 'CONCLAVE_LIMIT_EXCEEDED'
  | 'CONCLAVE_WAL_CORRUPT'
  | 'CONCLAVE_WAL_RECORDS_LOST'
  | 'CONCLAVE_STORAGE_IO'
  | 'CONCLAVE_OVERLOADED'
  | 'CONCLAVE_DATA_DIR_FOREIGN'
  | 'CONCLAVE_DATA_DIR_INSECURE'
  /** Authentication failed: no such user, or a wrong password (which of the two is not said). */
  | 'CONCLAVE_AUTH_FAILED'
  /** The authenticated user lacks the permission the call needs; nothing was applied. */
  | 'CONCLAVE_PERMISSION_DENIED'
  /** Auth is on and the call carried no token, or one that is expired, forged or revoked. */
  | 'CONCLAVE_INVALID_TOKEN';

/**
 * Whether the operation behind an error may have taken effect: `failed` means definitely not
 * (safe to retry or give up), `unknown` means maybe (a write may have been applied: retry it
 * with the same idempotency key, or read to find out).
 */
export type CoordOutcome = 'failed' | 'unknown';

export class CoordError extends Error {
  override name = 'CoordError';
  /** Default: 'failed' (errors that are not about a possibly-applied operation). */
  readonly outcome: CoordOutcome;
  constructor(readonly code: CoordErrorCode, message: string,
    options?: { cause?: unknown; outcome?: CoordOutcome }) {
    super(message, options);
    this.outcome = options?.outcome ?? 'failed';
  }
}

/** Thrown when a configuration breaks one or more rules; the message lists every one. */
export class ConfigInvalidError extends CoordError {
  override name = 'ConfigInvalidError';
  constructor(message: string) {
    super('CONCLAVE_CONFIG_INVALID', message);
  }
}

/** Thrown when a command line or API call is malformed (unknown flag, value out of range). */
export class UsageError extends CoordError {
  override name = 'UsageError';
  constructor(message: string) {
    super('CONCLAVE_USAGE', message);
  }
}
