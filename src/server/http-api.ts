/**
 * The client protocol: HTTP/JSON under /v1/ (curl-able; docs/api.md), plus streaming watches
 * (newline-delimited JSON) and /metrics (Prometheus text). Leases: grant and revoke are writes;
 * keep-alive, time-to-live and list are answered by the leader after it confirmed its
 * leadership (docs/leases.md); pipelined keep-alives go over the WebSocket of lease-stream.ts.
 *
 * Writes go to the leader: a follower answers 307 with the leader's client URL in `Location`
 * (curl -L and the client library follow it). Every error is JSON `{ error: { code, message,
 * outcome } }` where `outcome` says whether the request may have been applied: `failed`
 * (definitely not) or `unknown` (maybe: retry with the same clientId and sequence).
 *
 * Nothing a client sends is trusted: bodies are read within the limits of the ClientGuard,
 * then each call runs as on the multiplexed stream (client-calls.ts: validated strictly into
 * typed requests, writes checked against the space quota before they are proposed), and
 * watches are checked against the watcher limits.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NodeId } from '../core/ids.js';
import { parseRequestTimeout, REQUEST_TIMEOUT_HEADER } from '../adapters/request-deadline.js';
import { CoordError, type CoordErrorCode } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import { AUTH_CALL_NAMES, authCallPath } from './auth-calls.js';
import { bearerToken, type AuthGate } from './auth-gate.js';
import {
  checkWatch, readRefusal, runCall, watchRefusal, type CallName, type ClientCallsOptions,
} from './client-calls.js';
import { ClientGuard, Refusal } from './client-guard.js';
import { CLIENT_LIMITS_DEFAULTS, type ClientLimits } from './client-limits.js';
import { decodeJsonBody, parseWatchQuery, type Body } from './client-requests.js';
import type { OpsRoutes } from './ops-api.js';
import { SpaceQuota } from './space-quota.js';
import { leaderlessAnswer, type LeaderlessAnswer } from './request-verdicts.js';
import type { WatchHub, WatchSink } from './watch-hub.js';

export interface HttpApiOptions {
  readonly core: ConsistentCore;
  readonly watches: WatchHub;
  readonly guard: ClientGuard;
  readonly quota: SpaceQuota;
  readonly limits: ClientLimits;
  /** The client URL (http://host:port) of each member, to redirect to the leader. */
  readonly clientUrlOf: (id: NodeId) => string | undefined;
  /** The Prometheus text of /metrics (prom-client renders it asynchronously). */
  readonly metrics: () => string | Promise<string>;
  readonly status: () => unknown;
  readonly logger: Logger;
  /**
   * How long a write or linearizable read may wait for the log before the answer is 504
   * CONCLAVE_TIMEOUT with outcome `unknown` (it may still apply: retry with the same clientId
   * and sequence). Unit: ms. The server sets 2 × the longest election timeout: long enough to
   * ride out one election, short enough that a deposed leader's clients hear back.
   */
  readonly requestTimeoutMs: number;
  /**
   * What a member that knows no leader answers (request-verdicts.ts). Default: judged with
   * the longest election timeout taken as requestTimeoutMs / 2 (the server's relation).
   */
  readonly leaderless?: LeaderlessAnswer;
  /** The operator's routes (ops-api.ts), offered each request first. Default: none. */
  readonly opsRoutes?: OpsRoutes;
  /** Tokens and passwords; every call is checked while auth is on. Default: no auth calls. */
  readonly auth?: AuthGate;
}

/** The door of `createHttpApi` with `limits` (default: CLIENT_LIMITS_DEFAULTS) over `core`. */
export function clientDoor(core: Pick<ConsistentCore, 'store'>,
  limits: ClientLimits = CLIENT_LIMITS_DEFAULTS):
  Pick<HttpApiOptions, 'guard' | 'quota' | 'limits'> {
  return { guard: new ClientGuard(limits), limits,
    quota: new SpaceQuota(core.store, limits.quotaBytes, limits.requestBytesMax) };
}

const HTTP_STATUS: Readonly<Partial<Record<CoordErrorCode, number>>> = {
  CONCLAVE_REQUEST_INVALID: 400,
  CONCLAVE_USAGE: 400,
  CONCLAVE_PROTOCOL: 400,
  CONCLAVE_NOT_LEADER: 503,
  CONCLAVE_NO_QUORUM: 503,
  CONCLAVE_NO_LEADER: 503,
  CONCLAVE_DEADLINE_EXCEEDED: 504,
  CONCLAVE_UNAVAILABLE: 503,
  CONCLAVE_OVERLOADED: 429,
  CONCLAVE_LIMIT_EXCEEDED: 503,
  CONCLAVE_TIMEOUT: 504,
  CONCLAVE_KV_COMPACTED: 410,
  CONCLAVE_KV_FUTURE_REVISION: 400,
  CONCLAVE_DUPLICATE_STALE: 409,
  CONCLAVE_IDEMPOTENCY_MISMATCH: 409,
  CONCLAVE_LEASE_EXPIRED: 404,
  CONCLAVE_QUOTA_EXCEEDED: 507,
  CONCLAVE_AUTH_FAILED: 401,
  CONCLAVE_INVALID_TOKEN: 401,
  CONCLAVE_PERMISSION_DENIED: 403,
};

/**
 * A canceled or compacted watch stream is ended after its queued events; a client that does
 * not read them within this long has its connection closed. Unit: ms.
 */
const WATCH_END_GRACE_MS = 5000;

export function createHttpApi(given: HttpApiOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const options: HttpApiOptions = { ...given,
    leaderless: given.leaderless ?? leaderlessAnswer(given.core, given.requestTimeoutMs / 2) };
  return (req, res) => {
    // A connection refused at the door was answered already; what it sends is ignored.
    if (options.guard.state(req.socket) === undefined) return void res.destroy();
    route(options, req, res).catch((error: unknown) => {
      if (error instanceof Refusal) return refuse(res, error);
      const coord = error instanceof CoordError ? error
        : new CoordError('CONCLAVE_PROTOCOL', error instanceof Error ? error.message : String(error));
      sendError(res, coord, 'failed');
    });
  };
}

/** The POST routes, matched on the raw request target without parsing it as a URL. */
export const POST_PATHS: ReadonlySet<string> = new Set([
  '/v1/kv/put', '/v1/kv/delete', '/v1/kv/txn', '/v1/kv/range', '/v1/kv/compact',
  '/v1/lease/grant', '/v1/lease/revoke', '/v1/lease/keepalive', '/v1/lease/ttl',
  ...AUTH_CALL_NAMES.map(authCallPath),
]);
export const GET_PATHS: ReadonlySet<string> = new Set(['/metrics', '/v1/status', '/v1/watch',
  '/v1/lease/list']);

async function route(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (o.opsRoutes?.(req, res) === true) return;
  // Writes are the hot path: a known path needs no URL object (a few µs per request).
  if (req.method === 'POST' && req.url !== undefined && POST_PATHS.has(req.url)) {
    return post(o, req, res, req.url);
  }
  const url = parseTarget(req.url);
  const path = url.pathname;
  if (req.method === 'GET' && GET_PATHS.has(path)) {
    if (path !== '/v1/watch' && url.search !== '') {
      throw new CoordError('CONCLAVE_REQUEST_INVALID', `${path} takes no query parameters`);
    }
    if (path === '/metrics') return sendText(res, 200, await o.metrics());
    if (path === '/v1/status') return call(o, req, res, 'status', {});
    if (path === '/v1/watch') return watch(o, url, req, res);
    return call(o, req, res, 'lease-list', {});
  }
  if (POST_PATHS.has(path) || GET_PATHS.has(path)) {
    const allowed = POST_PATHS.has(path) ? 'POST' : 'GET';
    if (req.method === allowed) {
      throw new CoordError('CONCLAVE_REQUEST_INVALID', `${path} takes no query parameters`);
    }
    res.setHeader('allow', allowed);
    return sendError(res, new CoordError('CONCLAVE_USAGE', `${path} takes ${allowed}, not `
      + `${req.method ?? '?'}; see docs/api.md`), 'failed', 405);
  }
  return sendError(res, new CoordError('CONCLAVE_USAGE', `no route ${req.method ?? '?'} ${path}; `
    + 'see docs/api.md'), 'failed', 404);
}

function parseTarget(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://localhost');
  } catch {
    throw new CoordError('CONCLAVE_REQUEST_INVALID', 'the request target is not a valid path');
  }
}

async function post(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse,
  path: string): Promise<void> {
  const bytes = await o.guard.readBody(req, res);
  if (bytes === undefined) return; // the client went away mid-body
  const body: Body = decodeJsonBody(bytes);
  const name = POST_CALLS[path];
  if (name === undefined) {
    return sendError(res, new CoordError('CONCLAVE_USAGE', `no route POST ${path}; see docs/api.md`), 'failed', 404);
  }
  call(o, req, res, name, body);
}

/** The call of each POST path (client-calls.ts runs it). */
const POST_CALLS: Readonly<Record<string, CallName>> = {
  '/v1/kv/put': 'put', '/v1/kv/delete': 'delete', '/v1/kv/txn': 'txn', '/v1/kv/range': 'range',
  '/v1/kv/compact': 'compact', '/v1/lease/grant': 'lease-grant',
  '/v1/lease/revoke': 'lease-revoke', '/v1/lease/keepalive': 'lease-keepalive',
  '/v1/lease/ttl': 'lease-ttl',
  ...Object.fromEntries(AUTH_CALL_NAMES.map((name) => [authCallPath(name), name])),
};

/** Runs one call and answers it over HTTP. */
function call(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse, name: CallName,
  body: Body): void {
  // The client's `conclave-timeout` (a malformed one throws: answered 400 by the router).
  const deadlineMs = parseRequestTimeout(req.headers[REQUEST_TIMEOUT_HEADER]);
  runCall(callsOf(o), name, body, (answer) => {
    if (answer.kind === 'ok') return sendJson(res, 200, answer.body);
    if (answer.kind === 'error') return sendError(res, answer.error, answer.outcome);
    redirect(res, req, answer.leaderId, answer.leaderUrl);
  }, deadlineMs, bearerToken(req.headers.authorization));
}

const CALLS_OF = new WeakMap<HttpApiOptions, ClientCallsOptions>();

function callsOf(o: HttpApiOptions): ClientCallsOptions {
  let calls = CALLS_OF.get(o);
  if (calls === undefined) {
    calls = { core: o.core, quota: o.quota, clientUrlOf: o.clientUrlOf, status: o.status,
      requestTimeoutMs: o.requestTimeoutMs,
      ...(o.leaderless === undefined ? {} : { leaderless: o.leaderless }),
      ...(o.auth === undefined ? {} : { auth: o.auth }) };
    CALLS_OF.set(o, calls);
  }
  return calls;
}

function watch(o: HttpApiOptions, url: URL, req: IncomingMessage, res: ServerResponse): void {
  const { selector, fromRevision } = parseWatchQuery(url.searchParams);
  checkWatch(o.core, selector, fromRevision);
  const denied = readRefusal(callsOf(o), bearerToken(req.headers.authorization), selector);
  if (denied !== undefined) return sendError(res, denied, 'failed');
  const connection = o.guard.state(req.socket);
  if (connection === undefined) return;
  const refusal = watchRefusal(o.limits, o.watches, connection);
  if (refusal !== undefined) return sendError(res, refusal.error, 'failed', refusal.status);
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  connection.watchers += 1;
  const handle = o.watches.watch(selector, fromRevision, responseSink(res));
  res.once('close', () => {
    connection.watchers -= 1;
    handle.close();
  });
}

/** A watch stream's sink: chunks corked into one write; an ended stream has a grace to drain. */
function responseSink(res: ServerResponse): WatchSink {
  return {
    write: (chunks, flushed) => {
      if (res.writableEnded || res.destroyed) return flushed();
      res.cork();
      const last = chunks.length - 1;
      chunks.forEach((chunk, i) => {
        if (i < last) res.write(chunk);
        else res.write(chunk, () => flushed());
      });
      res.uncork();
    },
    end: (lastLine) => {
      if (res.writableEnded || res.destroyed) return;
      if (lastLine === undefined) res.end();
      else res.end(lastLine);
      const grace = setTimeout(() => res.destroy(), WATCH_END_GRACE_MS);
      grace.unref();
      res.once('close', () => clearTimeout(grace));
    },
  };
}

function redirect(res: ServerResponse, req: IncomingMessage, leaderId: NodeId,
  leaderUrl: string): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(307, { location: `${leaderUrl}${req.url ?? ''}`, 'content-type': 'application/json' });
  res.end(JSON.stringify({
    error: { code: 'CONCLAVE_NOT_LEADER', message: `not the leader; the leader is ${leaderId}`,
      outcome: 'failed', leaderId, leaderUrl },
  }));
}

/** A refusal at the door: answered, then the connection is closed (its sender may go on). */
function refuse(res: ServerResponse, refusal: Refusal): void {
  if (!res.headersSent && !res.writableEnded) res.setHeader('connection', 'close');
  sendError(res, refusal.error, 'failed', refusal.status);
  res.once('finish', () => res.socket?.destroy());
  // A sender that does not read its answer is cut off all the same.
  const cut = setTimeout(() => res.socket?.destroy(), 1000);
  cut.unref();
  res.once('close', () => clearTimeout(cut));
}

function sendError(res: ServerResponse, error: CoordError, outcome: 'failed' | 'unknown', status?: number): void {
  if (res.headersSent || res.writableEnded) return;
  sendJson(res, status ?? HTTP_STATUS[error.code] ?? 500, { error: { code: error.code, message: error.message, outcome } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; version=0.0.4', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
