/**
 * The client protocol's HTTP/JSON form (docs/api.md), both ways, as pure functions: a
 * ClientRequest as a method, path and body; an HTTP answer (status, body text, Location) as a
 * ClientAnswer with a CoordError whose code and outcome are the member's; a watch stream's
 * line as a WatchFrame. Everything that arrives is checked here; what cannot be read becomes a
 * CONCLAVE_PROTOCOL error, never an exception.
 */
import type { KvEvent } from '../core/kv/types.js';
import type {
  ClientAnswer, ClientEndpoint, ClientRequest, RefusedAnswer, WatchFrame,
} from '../ports/client-transport.js';
import { CoordError, type CoordErrorCode, type CoordOutcome } from '../errors.js';

export interface HttpRequestShape {
  readonly method: 'GET' | 'POST';
  /** Path and query under the endpoint, such as `/v1/kv/put`. */
  readonly path: string;
  /** Sent as JSON (POST only). */
  readonly body?: Readonly<Record<string, unknown>>;
}

/** The HTTP form of `request`. */
export function httpShape(request: ClientRequest): HttpRequestShape {
  const { kind, ...body } = request;
  switch (kind) {
    case 'put':
    case 'delete':
    case 'txn':
    case 'range':
    case 'compact':
      return { method: 'POST', path: `/v1/kv/${kind}`, body };
    case 'lease-grant':
      return { method: 'POST', path: '/v1/lease/grant', body };
    case 'lease-revoke':
      return { method: 'POST', path: '/v1/lease/revoke', body };
    case 'lease-keepalive':
      return { method: 'POST', path: '/v1/lease/keepalive', body };
    case 'lease-ttl':
      return { method: 'POST', path: '/v1/lease/ttl', body };
    case 'lease-list':
      return { method: 'GET', path: '/v1/lease/list' };
    case 'status':
      return { method: 'GET', path: '/v1/status' };
    case 'auth':
      return { method: 'POST', path: authPath(request.call), body: request.body };
  }
}

/** The HTTP path of an auth call (as src/server/auth-calls.ts serves them). */
function authPath(call: string): string {
  const [group, ...rest] = call.split('-');
  return group === 'auth' ? `/v1/auth/${rest.join('-')}` : `/v1/auth/${group}/${rest.join('-')}`;
}

/** Every code the client recognizes in an error body; others become CONCLAVE_PROTOCOL. */
const KNOWN_CODES: Readonly<Record<CoordErrorCode, true>> = {
  CONCLAVE_CONFIG_INVALID: true, CONCLAVE_USAGE: true, CONCLAVE_NOT_LEADER: true,
  CONCLAVE_NO_QUORUM: true, CONCLAVE_TIMEOUT: true, CONCLAVE_LEASE_EXPIRED: true,
  CONCLAVE_FENCING_TOKEN_STALE: true, CONCLAVE_PROTOCOL: true, CONCLAVE_STORAGE_CORRUPT: true,
  CONCLAVE_UNAVAILABLE: true, CONCLAVE_REQUEST_INVALID: true, CONCLAVE_KV_COMPACTED: true,
  CONCLAVE_KV_FUTURE_REVISION: true, CONCLAVE_DUPLICATE_STALE: true, CONCLAVE_WAL_CORRUPT: true,
  CONCLAVE_STORAGE_IO: true, CONCLAVE_OVERLOADED: true, CONCLAVE_WAL_RECORDS_LOST: true,
  CONCLAVE_DATA_DIR_FOREIGN: true, CONCLAVE_DATA_DIR_INSECURE: true,
  CONCLAVE_IDEMPOTENCY_MISMATCH: true, CONCLAVE_QUOTA_EXCEEDED: true, CONCLAVE_LIMIT_EXCEEDED: true,
  CONCLAVE_RELEASED: true, CONCLAVE_NO_LEADER: true, CONCLAVE_DEADLINE_EXCEEDED: true,
  CONCLAVE_AUTH_FAILED: true, CONCLAVE_PERMISSION_DENIED: true, CONCLAVE_INVALID_TOKEN: true,
};

/** A code as a member wrote it, if the client knows it. */
export function knownCode(code: unknown): CoordErrorCode | undefined {
  return typeof code === 'string' && code in KNOWN_CODES ? code as CoordErrorCode : undefined;
}

/**
 * An HTTP answer of `servedBy` as a ClientAnswer: 2xx with a JSON body is the result; a
 * redirect names the leader (the request was not applied); anything else is the member's
 * error, its code and outcome read from the body, or derived from the status.
 */
export function classifyHttpAnswer(status: number, text: string, location: string | undefined,
  servedBy: ClientEndpoint): ClientAnswer {
  const body = parseJson(text);
  if (status >= 200 && status < 300) {
    if (body !== undefined) return { kind: 'ok', body, servedBy };
    const garbled = new CoordError('CONCLAVE_PROTOCOL',
      `${servedBy} answered ${status} without a JSON body`, { outcome: 'unknown' });
    return { kind: 'refused', error: garbled, servedBy };
  }
  if (status >= 300 && status < 400 && location !== undefined) {
    return redirectAnswer(location, servedBy);
  }
  return errorAnswer(status, body, servedBy);
}

function redirectAnswer(location: string, servedBy: ClientEndpoint): RefusedAnswer {
  const leader = originOf(location, servedBy);
  const error = new CoordError('CONCLAVE_NOT_LEADER', `${servedBy} is not the leader`
    + (leader === undefined ? ` and redirected to ${location.slice(0, 200)}, which is not a `
      + 'member URL' : `; the leader is ${leader}`));
  return { kind: 'refused', error, servedBy, ...(leader === undefined ? {} : { leader }) };
}

/** A member's error answer: code and outcome from the body, or from the HTTP status. */
export function errorAnswer(status: number, body: unknown, servedBy: ClientEndpoint):
  RefusedAnswer {
  const fields = errorFields(body, servedBy);
  const code = knownCode(fields.code) ?? fallbackCode(status);
  const outcome: CoordOutcome = fields.outcome ?? (
    status === 500 || status === 502 || status === 504 ? 'unknown' : 'failed');
  const unrecognized = fields.code !== undefined && code !== fields.code ? ` [${fields.code}]` : '';
  const message = `${fields.message ?? `HTTP ${status}`}${unrecognized} (from ${servedBy})`;
  return {
    kind: 'refused', error: new CoordError(code, message, { outcome }), servedBy,
    ...(fields.leaderUrl === undefined ? {} : { leader: fields.leaderUrl }),
  };
}

interface ErrorFields {
  readonly code?: string;
  readonly message?: string;
  readonly outcome?: CoordOutcome;
  readonly leaderUrl?: string;
}

function errorFields(body: unknown, servedBy: string): ErrorFields {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (typeof error !== 'object' || error === null) return {};
  const { code, message, outcome, leaderUrl } = error;
  const leader = typeof leaderUrl === 'string' ? originOf(leaderUrl, servedBy) : undefined;
  return {
    ...(typeof code === 'string' ? { code: code.slice(0, 100) } : {}),
    ...(typeof message === 'string' ? { message: message.slice(0, 2000) } : {}),
    ...(outcome === 'failed' || outcome === 'unknown' ? { outcome } : {}),
    ...(leader === undefined ? {} : { leaderUrl: leader }),
  };
}

/** The code an error answer without a (known) code gets from its HTTP status. */
export function fallbackCode(status: number): CoordErrorCode {
  if (status === 504) return 'CONCLAVE_TIMEOUT';
  if (status === 410) return 'CONCLAVE_KV_COMPACTED';
  if (status >= 500) return 'CONCLAVE_UNAVAILABLE';
  if (status === 400 || status === 413 || status === 422) return 'CONCLAVE_REQUEST_INVALID';
  return 'CONCLAVE_PROTOCOL';
}

/**
 * The origin (scheme, host, port) of `text`, resolved against `base`, when it is an http(s)
 * URL; else undefined. A member's redirect or hint must name another member's client URL.
 */
export function originOf(text: string, base?: string): string | undefined {
  try {
    const url = base === undefined ? new URL(text) : new URL(text, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * One line of a watch stream as a frame; a line that is not a valid frame is a protocol
 * error (not a torn tail: a torn tail never reaches a full line).
 */
export function parseWatchLine(line: string): WatchFrame | CoordError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return new CoordError('CONCLAVE_PROTOCOL', 'watch stream sent a line that is not JSON: '
      + line.slice(0, 200));
  }
  const m = (parsed ?? {}) as Record<string, unknown>;
  const bad = new CoordError('CONCLAVE_PROTOCOL', 'watch stream sent a malformed message: '
    + line.slice(0, 200));
  switch (m['kind']) {
    case 'progress':
      return isRevision(m['revision']) ? { kind: 'progress', revision: m['revision'] } : bad;
    case 'compacted':
      return isRevision(m['compactRevision'])
        ? { kind: 'compacted', compactRevision: m['compactRevision'] } : bad;
    case 'canceled':
      return isRevision(m['nextRevision'])
        ? { kind: 'canceled', nextRevision: m['nextRevision'] } : bad;
    case 'events': {
      const events = m['events'];
      if (!Array.isArray(events) || !isRevision(m['nextRevision'])
        || !events.every(isEvent)) return bad;
      return { kind: 'events', events, nextRevision: m['nextRevision'] };
    }
    default:
      return { kind: 'other' }; // a newer server's message: ignore it
  }
}

function isRevision(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isEvent(value: unknown): value is KvEvent {
  const event = value as { type?: unknown; kv?: { key?: unknown; modRevision?: unknown } };
  return (event?.type === 'put' || event?.type === 'delete') && typeof event.kv === 'object'
    && typeof event.kv?.key === 'string' && isRevision(event.kv?.modRevision);
}
