/**
 * One attempt of a request: an HTTP exchange with one endpoint (following the redirects a
 * follower answers with), classified into what the retry loop needs to know: the answer, or a
 * `CoordError` with its outcome (`failed`: the request was definitely not applied; `unknown`:
 * maybe) and whether another attempt may help.
 */
import { CoordError, type CoordErrorCode, type CoordOutcome } from '../errors.js';
import { originOf } from './endpoints.js';

export interface AttemptRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query under the endpoint, such as `/v1/kv/put`. */
  readonly path: string;
  /** Sent as JSON (POST only). */
  readonly body?: unknown;
}

export interface AttemptLimits {
  readonly timeoutMs: number;
  readonly redirectsMax: number;
  /** Aborts the attempt when the client closes. */
  readonly signal: AbortSignal;
}

export type AttemptResult =
  | { readonly kind: 'ok'; readonly body: unknown; readonly servedBy: string }
  | {
    readonly kind: 'error';
    readonly error: CoordError;
    /** True when another attempt (elsewhere, later) may succeed. */
    readonly retry: boolean;
    /** True when a member answered (the error is its word, not a transport failure). */
    readonly answered: boolean;
    /** The endpoint whose failure this is (after redirects). */
    readonly servedBy: string;
    /** The leader's client URL when the server named it. */
    readonly leaderUrl?: string;
  };

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
};

/** Codes after which another attempt may succeed: the cluster is between leaders or busy. */
const RETRYABLE_CODES: ReadonlySet<CoordErrorCode> = new Set<CoordErrorCode>([
  'CONCLAVE_NOT_LEADER', 'CONCLAVE_NO_QUORUM', 'CONCLAVE_UNAVAILABLE', 'CONCLAVE_TIMEOUT',
  'CONCLAVE_OVERLOADED', 'CONCLAVE_LIMIT_EXCEEDED',
]);

/**
 * Transport errors raised before a byte of the request left: the server never saw it. Anything
 * else (a reset, a socket closed mid-answer) may come after the server acted on it.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Sends `request` to `baseUrl`, following up to `redirectsMax` redirects. Never throws. */
export async function sendAttempt(baseUrl: string, request: AttemptRequest,
  limits: AttemptLimits): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = AbortSignal.any([timeout, limits.signal]);
  let url = `${baseUrl}${request.path}`;
  let servedBy = baseUrl;
  for (let hop = 0; ; hop++) {
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: request.method,
        redirect: 'manual',
        signal,
        ...(request.body === undefined ? {} : {
          body: JSON.stringify(request.body), headers: { 'content-type': 'application/json' },
        }),
      });
      text = await response.text();
    } catch (error) {
      return transportFailure(error, servedBy, limits, timeout.aborted);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const target = new URL(location, url).href;
      const origin = originOf(target);
      if (origin === undefined || hop >= limits.redirectsMax) {
        return redirectFailure(servedBy, target, limits.redirectsMax);
      }
      url = target;
      servedBy = origin;
      continue;
    }
    return classifyResponse(response.status, text, servedBy);
  }
}

function transportFailure(error: unknown, servedBy: string, limits: AttemptLimits,
  timedOut: boolean): AttemptResult {
  if (limits.signal.aborted) {
    const closed = new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed',
      { outcome: 'unknown', cause: error });
    return { kind: 'error', error: closed, retry: false, answered: false, servedBy };
  }
  if (timedOut) {
    const late = new CoordError('CONCLAVE_TIMEOUT',
      `no answer from ${servedBy} within ${limits.timeoutMs} ms`, { outcome: 'unknown' });
    return { kind: 'error', error: late, retry: true, answered: false, servedBy };
  }
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const detail = code ?? (typeof cause?.message === 'string' ? cause.message : String(error));
  const notSent = code !== undefined && NOT_SENT_CODES.has(code);
  const failure = new CoordError('CONCLAVE_UNAVAILABLE', `cannot reach ${servedBy}: ${detail}`,
    { outcome: notSent ? 'failed' : 'unknown', cause: error });
  return { kind: 'error', error: failure, retry: true, answered: false, servedBy };
}

function redirectFailure(servedBy: string, target: string, redirectsMax: number): AttemptResult {
  const error = new CoordError('CONCLAVE_NOT_LEADER',
    `${servedBy} redirected to ${target}; gave up after ${redirectsMax} redirects`);
  return { kind: 'error', error, retry: true, answered: true, servedBy };
}

/** Maps an HTTP answer (2xx: the result; else the error body) to an attempt result. */
export function classifyResponse(status: number, text: string, servedBy: string): AttemptResult {
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (status >= 200 && status < 300) {
    if (body !== undefined) return { kind: 'ok', body, servedBy };
    const garbled = new CoordError('CONCLAVE_PROTOCOL',
      `${servedBy} answered ${status} without a JSON body`, { outcome: 'unknown' });
    return { kind: 'error', error: garbled, retry: false, answered: true, servedBy };
  }
  const fields = errorFields(body);
  const code = fields.code !== undefined && fields.code in KNOWN_CODES
    ? fields.code as CoordErrorCode : fallbackCode(status);
  const outcome: CoordOutcome = fields.outcome ?? (
    status === 500 || status === 502 || status === 504 ? 'unknown' : 'failed');
  const unrecognized = fields.code !== undefined && code !== fields.code ? ` [${fields.code}]` : '';
  const message = `${fields.message ?? `HTTP ${status}`}${unrecognized} (from ${servedBy})`;
  const error = new CoordError(code, message, { outcome });
  const retry = RETRYABLE_CODES.has(code) || status === 502 || status === 503 || status === 504;
  return {
    kind: 'error', error, retry, answered: true, servedBy,
    ...(fields.leaderUrl === undefined ? {} : { leaderUrl: fields.leaderUrl }),
  };
}

interface ErrorFields {
  readonly code?: string;
  readonly message?: string;
  readonly outcome?: CoordOutcome;
  readonly leaderUrl?: string;
}

function errorFields(body: unknown): ErrorFields {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (typeof error !== 'object' || error === null) return {};
  const { code, message, outcome, leaderUrl } = error;
  const leaderOrigin = typeof leaderUrl === 'string' ? originOf(leaderUrl) : undefined;
  return {
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof message === 'string' ? { message } : {}),
    ...(outcome === 'failed' || outcome === 'unknown' ? { outcome } : {}),
    ...(leaderOrigin === undefined ? {} : { leaderUrl: leaderOrigin }),
  };
}

function fallbackCode(status: number): CoordErrorCode {
  if (status === 504) return 'CONCLAVE_TIMEOUT';
  if (status === 410) return 'CONCLAVE_KV_COMPACTED';
  if (status >= 500) return 'CONCLAVE_UNAVAILABLE';
  if (status === 400 || status === 413 || status === 422) return 'CONCLAVE_REQUEST_INVALID';
  return 'CONCLAVE_PROTOCOL';
}
