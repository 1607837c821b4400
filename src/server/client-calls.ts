/**
 * One client call, whatever carried it: the HTTP/JSON API (http-api.ts) and the multiplexed
 * stream (client-stream.ts) both hand a call's name and its body (a JSON object, or the same
 * object decoded from msgpack) to `runCall`, which validates it with the strict parsers of
 * client-requests.ts, checks writes against the space quota, redirects leader-only calls,
 * calls the consistent core, and shapes the answer. So limits, validation and idempotency are
 * the same on both doors; only the framing of the answer differs.
 *
 * `done` is called exactly once per call: with the result, with an error and its outcome
 * (`failed`: certainly not applied; `unknown`: it may apply, retry with the same clientId and
 * sequence), or with the leader to go to.
 */
import type { NodeId } from '../core/ids.js';
import {
  commandDenial, leaseDenial, readDenial, validateKvWatchRequest,
  type KvApplyResult, type KvErrorResult, type KvKeySelector, type KvRangeResult,
} from '../core/kv/index.js';
import { CoordError, type CoordOutcome } from '../errors.js';
import type {
  ConsistentCore, KvWrite, LeaseOutcome, ReadOutcome, WriteOutcome,
} from '../runtime/core/consistent-core.js';
import { AUTH_CALL_NAMES, OPEN_AUTH_CALLS, runAuthCall, type AuthCallName } from './auth-calls.js';
import type { AuthGate } from './auth-gate.js';
import type { ConnectionState } from './client-guard.js';
import type { ClientLimits } from './client-limits.js';
import {
  parseLeaseQuery, parseRange, parseWrite, WRITE_PATHS, type Body, type WritePath,
} from './client-requests.js';
import { callDeadline, type LeaderlessAnswer, type WaitingKind } from './request-verdicts.js';
import type { SpaceQuota } from './space-quota.js';
import type { WatchHub } from './watch-hub.js';

/** Every call of the client protocol, by name (the HTTP path of each: docs/api.md). */
export const CALL_NAMES = ['put', 'delete', 'txn', 'compact', 'range', 'lease-grant',
  'lease-revoke', 'lease-keepalive', 'lease-ttl', 'lease-list', 'status',
  ...AUTH_CALL_NAMES] as const;

export type CallName = typeof CALL_NAMES[number];

const CALL_NAME_SET: ReadonlySet<string> = new Set(CALL_NAMES);

export function isCallName(name: unknown): name is CallName {
  return typeof name === 'string' && CALL_NAME_SET.has(name);
}

/** The HTTP path of each write call (client-requests.ts parses by path). */
const WRITE_PATH_OF: Readonly<Partial<Record<CallName, WritePath>>> = Object.fromEntries(
  Object.entries(WRITE_PATHS).map(([path, kind]) => [kind, path as WritePath]));

export interface ClientCallsOptions {
  readonly core: ConsistentCore;
  readonly quota: SpaceQuota;
  /** The client URL (http://host:port) of each member, to send clients to the leader. */
  readonly clientUrlOf: (id: NodeId) => string | undefined;
  readonly status: () => unknown;
  /** See HttpApiOptions.requestTimeoutMs. Unit: ms. */
  readonly requestTimeoutMs: number;
  /** The core's keep-alive, or a wrapper of it that counts served keep-alives. */
  readonly keepAlive?: ConsistentCore['keepAlive'];
  /** What a member that knows no leader answers (request-verdicts.ts); NO_QUORUM if absent. */
  readonly leaderless?: LeaderlessAnswer;
  /** Tokens and passwords (auth-gate.ts). Absent: no auth calls, and no call is checked. */
  readonly auth?: AuthGate;
}

/**
 * The options, and what one call brought with it: the deadline its client sent, and the user
 * its token speaks for (absent while auth is off).
 */
type CallContext = ClientCallsOptions & { readonly clientDeadlineMs?: number;
  readonly principal?: string };

/** Calls answered without a token while auth is on: leader discovery and logging in. */
const OPEN_CALLS: ReadonlySet<string> = new Set(['status', ...OPEN_AUTH_CALLS]);

export type CallAnswer =
  | { readonly kind: 'ok'; readonly body: unknown }
  | { readonly kind: 'error'; readonly error: CoordError; readonly outcome: CoordOutcome }
  /** Not the leader, and it knows who is: the call was not applied. */
  | { readonly kind: 'redirect'; readonly leaderId: NodeId; readonly leaderUrl: string };

/**
 * Runs the call `name` with `body`; see the module comment. `token`: the caller's bearer
 * token (HTTP's Authorization header, the stream's hello or auth frame). Never throws.
 */
export function runCall(o: ClientCallsOptions, name: CallName, body: Body,
  done: (answer: CallAnswer) => void, clientDeadlineMs?: number, token?: string): void {
  let settled = false;
  const once = (answer: CallAnswer): void => {
    if (settled) return;
    settled = true;
    done(answer);
  };
  try {
    const principal = OPEN_CALLS.has(name) ? undefined : o.auth?.principalOf(token);
    if (principal instanceof CoordError) return once(failed(principal));
    const context = clientDeadlineMs === undefined && principal === undefined ? o
      : { ...o, ...(clientDeadlineMs === undefined ? {} : { clientDeadlineMs }),
        ...(principal === undefined ? {} : { principal }) };
    dispatch(context, name, body, once);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    once(failed(error instanceof CoordError ? error
      : new CoordError('CONCLAVE_PROTOCOL', message)));
  }
}

function dispatch(o: CallContext, name: CallName, body: Body,
  done: (answer: CallAnswer) => void): void {
  const writePath = WRITE_PATH_OF[name];
  if (writePath !== undefined) return write(o, parseWrite(writePath, body), done);
  if ((AUTH_CALL_NAMES as readonly string[]).includes(name)) return authCall(o, name, body, done);
  switch (name) {
    case 'range':
      return read(o, body, done);
    case 'lease-keepalive': {
      const { leaseId } = parseLeaseQuery(body, false);
      const keepAlive = o.keepAlive ?? o.core.keepAlive.bind(o.core);
      if (leaseRefused(o, leaseId, 'keep-alive', done)) return;
      return leaseCall(o, done, (answer) => keepAlive(leaseId, answer));
    }
    case 'lease-ttl': {
      const { leaseId, keys } = parseLeaseQuery(body, true);
      if (leaseRefused(o, leaseId, 'time-to-live', done)) return;
      return leaseCall(o, done, (answer) => o.core.timeToLive(leaseId, keys, answer));
    }
    case 'lease-list':
      noFields(name, body);
      return leaseCall(o, done, (answer) => o.core.listLeases((outcome) => answer(
        outcome.kind === 'ok' ? { kind: 'ok', value: { leases: ownLeases(o, outcome.value) } }
          : outcome)));
    case 'status':
      noFields(name, body);
      return done({ kind: 'ok', body: o.status() });
    default:
      throw new CoordError('CONCLAVE_USAGE', `no call ${name}; see docs/protocol.md`);
  }
}

/** An auth call (auth-calls.ts), its changes proposed as writes are. */
function authCall(o: CallContext, name: CallName, body: Body,
  done: (answer: CallAnswer) => void): void {
  const gate = o.auth;
  if (gate === undefined) {
    return done(failed(new CoordError('CONCLAVE_USAGE', `${name}: this member serves no auth`)));
  }
  runAuthCall({ core: o.core, gate, principal: o.principal,
    write: (command) => write(o, command, done),
    ok: (value) => done({ kind: 'ok', body: value }),
    fail: (error) => done(failed(error)) }, name as AuthCallName, body);
}

/** True (and answered) when the caller may not act on the lease. */
function leaseRefused(o: CallContext, leaseId: number, action: 'keep-alive' | 'time-to-live',
  done: (a: CallAnswer) => void): boolean {
  if (o.principal === undefined) return false;
  const denied = leaseDenial(o.core.store.auth, o.principal, o.core.store.lease(leaseId),
    action);
  if (denied === undefined) return false;
  done(failed(new CoordError('CONCLAVE_PERMISSION_DENIED', denied)));
  return true;
}

/** The leases the caller may see: its own, or every one for root (and with auth off). */
function ownLeases<T extends { leaseId: number }>(o: CallContext, leases: readonly T[])
  : readonly T[] {
  const principal = o.principal;
  const store = o.core.store;
  if (principal === undefined || store.auth.isRoot(principal)) return leases;
  return leases.filter((l) => store.lease(l.leaseId)?.owner === principal);
}

/** Why the caller may not read `selector` (undefined: it may), as an error to answer. */
export function readRefusal(o: Pick<ClientCallsOptions, 'auth' | 'core'>, token: string | undefined,
  selector: KvKeySelector): CoordError | undefined {
  const principal = o.auth?.principalOf(token);
  if (principal === undefined) return undefined;
  if (principal instanceof CoordError) return principal;
  const denied = readDenial(o.core.store.auth, principal, selector);
  return denied === undefined ? undefined : new CoordError('CONCLAVE_PERMISSION_DENIED', denied);
}

function noFields(name: string, body: Body): void {
  if (Object.keys(body).length > 0) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID', `${name} takes no fields`);
  }
}

function failed(error: CoordError): CallAnswer {
  return { kind: 'error', error, outcome: 'failed' };
}

function write(o: CallContext, given: KvWrite, done: (a: CallAnswer) => void): void {
  if (sentToLeader(o, done)) return;
  const principal = o.principal;
  let command = given;
  if (principal !== undefined) {
    // Checked on the leader's state now, and again when it applies (authorize.ts).
    const denied = commandDenial(o.core.store.auth, principal, given,
      (id) => o.core.store.lease(id));
    if (denied !== undefined) {
      return done(failed(new CoordError('CONCLAVE_PERMISSION_DENIED', denied)));
    }
    command = { ...given, principal } as KvWrite;
  }
  const admitted = o.quota.admit(command);
  if (admitted instanceof CoordError) return done(failed(admitted));
  const timeout = timeoutAnswer(o, done, 'write');
  o.core.write(command, (outcome: WriteOutcome) => {
    clearTimeout(timeout);
    admitted.release();
    if (outcome.kind !== 'applied') {
      return done({ kind: 'error', error: outcome.error, outcome: outcome.kind });
    }
    done(applyAnswer(outcome.result));
  });
}

/** A leader-only lease call: redirected by followers, answered after a confirmation. */
function leaseCall<T>(o: CallContext, done: (a: CallAnswer) => void,
  call: (answer: (outcome: LeaseOutcome<T>) => void) => void): void {
  if (sentToLeader(o, done)) return;
  const timeout = timeoutAnswer(o, done, 'lease');
  call((outcome) => {
    clearTimeout(timeout);
    if (outcome.kind === 'ok') return done({ kind: 'ok', body: outcome.value });
    done(failed(outcome.error));
  });
}

function read(o: CallContext, body: Body, done: (a: CallAnswer) => void): void {
  const { request, consistency } = parseRange(body);
  if (o.principal !== undefined) {
    const denied = readDenial(o.core.store.auth, o.principal, request);
    if (denied !== undefined) {
      return done(failed(new CoordError('CONCLAVE_PERMISSION_DENIED', denied)));
    }
  }
  if (consistency === 'linearizable' && sentToLeader(o, done)) return;
  const timeout = timeoutAnswer(o, done, 'read');
  o.core.read(request, consistency, (outcome: ReadOutcome) => {
    clearTimeout(timeout);
    if (outcome.kind === 'failed') return done(failed(outcome.error));
    done(applyAnswer(outcome.result));
  });
}

/**
 * Answers at the call's deadline (the client's, or the server's own request timeout):
 * `unknown` for a write that may still apply, `failed` for a read and for lease calls (an
 * unanswered keep-alive promises nothing: the client must not count on it).
 */
function timeoutAnswer(o: CallContext, done: (a: CallAnswer) => void,
  kind: WaitingKind): NodeJS.Timeout {
  const deadline = callDeadline(o.clientDeadlineMs, o.requestTimeoutMs, kind);
  return setTimeout(() => done({ kind: 'error', error: deadline.error,
    outcome: deadline.error.outcome }), deadline.ms);
}

/** True when the call was answered here: this member does not lead. */
function sentToLeader(o: ClientCallsOptions, done: (a: CallAnswer) => void): boolean {
  const status = o.core.status();
  if (status.role === 'leader') return false;
  const leaderUrl = status.leaderId === undefined ? undefined : o.clientUrlOf(status.leaderId);
  if (status.leaderId === undefined || leaderUrl === undefined) {
    done(failed(o.leaderless?.() ?? new CoordError('CONCLAVE_NO_QUORUM', `${o.core.id} knows `
      + `no leader (term ${status.term}); the cluster may have lost its majority`)));
    return true;
  }
  done({ kind: 'redirect', leaderId: status.leaderId, leaderUrl });
  return true;
}

/** A store result as an answer: its errors as CoordErrors (outcome failed: nothing applied). */
export function applyAnswer(result: KvApplyResult | KvRangeResult | KvErrorResult): CallAnswer {
  if (result.kind !== 'error') return { kind: 'ok', body: result };
  const error = result.error;
  const make = (code: CoordError['code'], message: string): CallAnswer =>
    failed(new CoordError(code, message));
  switch (error.code) {
    case 'compacted':
      return make('CONCLAVE_KV_COMPACTED', `revision compacted; the oldest kept is after `
        + `${error.compactRevision}`);
    case 'future-revision':
      return make('CONCLAVE_KV_FUTURE_REVISION', `revision ${error.revision} is beyond the `
        + `current ${error.currentRevision}`);
    case 'duplicate-stale':
      return make('CONCLAVE_DUPLICATE_STALE', `sequence ${error.sequence} of ${error.clientId} `
        + `is older than ${error.sequenceApplied}, already applied`);
    case 'idempotency-mismatch':
      return make('CONCLAVE_IDEMPOTENCY_MISMATCH', `sequence ${error.sequence} of client `
        + `${error.clientId} was applied to another request; this one was not applied: use `
        + 'the next sequence for a new request');
    case 'invalid':
      return make('CONCLAVE_REQUEST_INVALID',
        error.problems.map((p) => `${p.field}: ${p.rule}`).join('; '));
    case 'bad-command':
      return make('CONCLAVE_PROTOCOL', error.reason);
    case 'lease-not-found':
      return make('CONCLAVE_LEASE_EXPIRED', `lease ${error.leaseId} does not exist: it `
        + 'expired, was revoked or was never granted');
    case 'lease-limit':
      return make('CONCLAVE_REQUEST_INVALID', 'the cluster already holds its maximum of '
        + `${error.leasesMax} leases (leasesMax); revoke some first`);
    case 'permission-denied':
      return make('CONCLAVE_PERMISSION_DENIED', error.reason);
    case 'auth-refused':
      return make('CONCLAVE_REQUEST_INVALID', error.reason);
  }
}

/** A watch asked for, as the store judges it: CONCLAVE_REQUEST_INVALID naming each problem. */
export function checkWatch(core: Pick<ConsistentCore, 'store'>, selector: KvKeySelector,
  fromRevision: number): void {
  const problems = validateKvWatchRequest(Math.max(1, fromRevision), selector, undefined,
    core.store.config);
  if (problems.length > 0) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID',
      problems.map((p) => `${p.field}: ${p.rule}`).join('; '));
  }
}

/**
 * Whether one more watch may open on `connection`: undefined, or the error (with the HTTP
 * status HTTP answers it with) at the per-connection or per-member watcher limit.
 */
export function watchRefusal(limits: ClientLimits, watches: Pick<WatchHub, 'size'>,
  connection: ConnectionState): { error: CoordError; status: number } | undefined {
  if (connection.watchers >= limits.connectionWatchersMax) {
    return { status: 429, error: new CoordError('CONCLAVE_LIMIT_EXCEEDED', `this connection `
      + `has the most watch streams one may open (${limits.connectionWatchersMax}, `
      + '--max-connection-watchers)') };
  }
  if (watches.size >= limits.watchersMax) {
    return { status: 503, error: new CoordError('CONCLAVE_LIMIT_EXCEEDED', `this member has `
      + `the most watch streams it takes (${limits.watchersMax}, --max-watchers); retry later `
      + 'or on another member') };
  }
  return undefined;
}
