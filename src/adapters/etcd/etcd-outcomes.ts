/**
 * What an etcd failure means for the client: an answer from a member (`refused`, with our
 * code and the outcome: `failed` when etcd refused before proposing anything, `unknown` when
 * the request may have been applied) or no answer at all (`lost`, with `sent` false only when no
 * byte can have reached a member). etcd's own errors carry a gRPC status and a message starting
 * with `etcdserver:` (or `mvcc:`); a failure without one is the connection's.
 */
import * as grpc from '@grpc/grpc-js';
import type { ClientEndpoint, LostAnswer, RefusedAnswer } from '../../ports/client-transport.js';
import { CoordError, type CoordErrorCode, type CoordOutcome } from '../../errors.js';
import { EtcdCallError } from './etcd-connection.js';

interface Rule {
  readonly match: RegExp;
  readonly code: CoordErrorCode;
  readonly outcome: CoordOutcome;
}

/**
 * etcd's error messages (its api/v3rpc/rpctypes), first match wins. `failed`: refused before a
 * proposal (a check on the request, the lease, the revision, a quota, auth). `unknown`: it was
 * or may have been proposed (a timeout, a leader change while it waited).
 */
const RULES: readonly Rule[] = [
  { match: /requested lease not found|lease not found/i, code: 'CONCLAVE_LEASE_EXPIRED',
    outcome: 'failed' },
  { match: /required revision has been compacted/i, code: 'CONCLAVE_KV_COMPACTED',
    outcome: 'failed' },
  { match: /required revision is a future revision/i, code: 'CONCLAVE_KV_FUTURE_REVISION',
    outcome: 'failed' },
  { match: /database space exceeded|quota/i, code: 'CONCLAVE_QUOTA_EXCEEDED', outcome: 'failed' },
  { match: /too many requests/i, code: 'CONCLAVE_OVERLOADED', outcome: 'failed' },
  { match: /no leader/i, code: 'CONCLAVE_NO_QUORUM', outcome: 'unknown' },
  { match: /not capable|not primary|leader changed|stopped/i, code: 'CONCLAVE_UNAVAILABLE',
    outcome: 'unknown' },
  { match: /timed out|timeout/i, code: 'CONCLAVE_TIMEOUT', outcome: 'unknown' },
  { match: /request is too large|too many operations|too large/i,
    code: 'CONCLAVE_LIMIT_EXCEEDED', outcome: 'failed' },
];

/** gRPC statuses that are a member's refusal even without a message we recognize. */
const REFUSAL_CODES: ReadonlyMap<grpc.status, CoordErrorCode> = new Map([
  [grpc.status.INVALID_ARGUMENT, 'CONCLAVE_REQUEST_INVALID'],
  [grpc.status.FAILED_PRECONDITION, 'CONCLAVE_REQUEST_INVALID'],
  [grpc.status.OUT_OF_RANGE, 'CONCLAVE_REQUEST_INVALID'],
  [grpc.status.PERMISSION_DENIED, 'CONCLAVE_REQUEST_INVALID'],
  [grpc.status.UNAUTHENTICATED, 'CONCLAVE_REQUEST_INVALID'],
  [grpc.status.NOT_FOUND, 'CONCLAVE_REQUEST_INVALID'],
  [grpc.status.RESOURCE_EXHAUSTED, 'CONCLAVE_LIMIT_EXCEEDED'],
]);

/** The answer a failed etcd call gives the client. */
export function failureAnswer(error: unknown, endpoint: ClientEndpoint, aborted: boolean):
  RefusedAnswer | LostAnswer {
  if (aborted && !(error instanceof EtcdCallError)) {
    return { kind: 'lost', sent: true, aborted: true, detail: 'aborted', servedBy: endpoint,
      cause: error };
  }
  if (!(error instanceof EtcdCallError)) {
    const message = error instanceof Error ? error.message : String(error);
    const refused = error instanceof CoordError ? error : new CoordError('CONCLAVE_PROTOCOL',
      `etcd at ${endpoint}: ${message}`, { outcome: 'unknown', cause: error });
    return { kind: 'refused', error: refused, servedBy: endpoint };
  }
  if (aborted) {
    return { kind: 'lost', sent: error.mayHaveArrived, aborted: true, detail: 'aborted',
      servedBy: endpoint, cause: error };
  }
  const refusal = refusalOf(error, endpoint);
  if (refusal !== undefined) return refusal;
  return { kind: 'lost', sent: error.mayHaveArrived, aborted: false,
    detail: `${grpc.status[error.grpcCode] ?? error.grpcCode}: ${error.details}`,
    servedBy: endpoint, cause: error };
}

/** A member's own error, as ours; undefined when the connection failed instead. */
export function refusalOf(error: EtcdCallError, endpoint: ClientEndpoint):
  RefusedAnswer | undefined {
  const etcdSaid = /etcdserver:|mvcc:|auth:/i.test(error.details);
  const rule = RULES.find((r) => r.match.test(error.details));
  const fallback = REFUSAL_CODES.get(error.grpcCode);
  if (!etcdSaid && fallback === undefined) return undefined;
  const code = rule?.code ?? fallback ?? 'CONCLAVE_UNAVAILABLE';
  const outcome = rule?.outcome ?? (fallback !== undefined ? 'failed' : 'unknown');
  return { kind: 'refused', servedBy: endpoint, error: new CoordError(code,
    `etcd at ${endpoint}: ${error.details}`, { outcome, cause: error }) };
}

/** An answer we could not read: whether it was applied is not known. */
export function garbledAnswer(error: unknown, endpoint: ClientEndpoint): RefusedAnswer {
  const coord = error instanceof CoordError ? error : new CoordError('CONCLAVE_PROTOCOL',
    `etcd at ${endpoint} sent an answer this client cannot read: ${String(error)}`,
    { outcome: 'unknown', cause: error });
  return { kind: 'refused', error: coord, servedBy: endpoint };
}

export function leaseGoneError(leaseId: number, endpoint: ClientEndpoint): CoordError {
  return new CoordError('CONCLAVE_LEASE_EXPIRED',
    `etcd at ${endpoint}: lease ${leaseId} does not exist (expired, revoked, never granted)`);
}
