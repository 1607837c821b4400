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
 * validated strictly into typed requests (client-requests.ts), writes are checked against the
 * space quota before they are proposed, and watches against the watcher limits.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NodeId } from '../core/ids.js';
import {
  validateKvWatchRequest,
  type KvApplyResult, type KvErrorResult, type KvRangeResult,
} from '../core/kv/index.js';
import { CoordError, type CoordErrorCode } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import type {
  ConsistentCore, KvWrite, LeaseOutcome, ReadOutcome, WriteOutcome,
} from '../runtime/core/consistent-core.js';
import { ClientGuard, Refusal } from './client-guard.js';
import { CLIENT_LIMITS_DEFAULTS, type ClientLimits } from './client-limits.js';
import {
  decodeJsonBody, isWritePath, parseLeaseQuery, parseRange, parseWatchQuery, parseWrite,
  type Body,
} from './client-requests.js';
import type { OpsRoutes } from './ops-api.js';
import { SpaceQuota } from './space-quota.js';
import type { WatchHub, WatchSink } from './watch-hub.js';

export interface HttpApiOptions {
  readonly core: ConsistentCore;
  readonly watches: WatchHub;
  readonly guard: ClientGuard;
  readonly quota: SpaceQuota;
  readonly limits: ClientLimits;
  /** The client URL (http://host:port) of each member, to redirect to the leader. */
  readonly clientUrlOf: (id: NodeId) => string | undefined;
  readonly metrics: () => string;
  readonly status: () => unknown;
  readonly logger: Logger;
  /**
   * How long a write or linearizable read may wait for the log before the answer is 504
   * CONCLAVE_TIMEOUT with outcome `unknown` (it may still apply: retry with the same clientId
   * and sequence). Unit: ms. The server sets 2 × the longest election timeout: long enough to
   * ride out one election, short enough that a deposed leader's clients hear back.
   */
  readonly requestTimeoutMs: number;
  /** The operator's routes (ops-api.ts), offered each request first. Default: none. */
  readonly opsRoutes?: OpsRoutes;
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
};

/**
 * A canceled or compacted watch stream is ended after its queued events; a client that does
 * not read them within this long has its connection closed. Unit: ms.
 */
const WATCH_END_GRACE_MS = 5000;

export function createHttpApi(options: HttpApiOptions): (req: IncomingMessage, res: ServerResponse) => void {
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
const POST_PATHS: ReadonlySet<string> = new Set([
  '/v1/kv/put', '/v1/kv/delete', '/v1/kv/txn', '/v1/kv/range', '/v1/kv/compact',
  '/v1/lease/grant', '/v1/lease/revoke', '/v1/lease/keepalive', '/v1/lease/ttl',
]);
const GET_PATHS: ReadonlySet<string> = new Set(['/metrics', '/v1/status', '/v1/watch',
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
    if (path === '/metrics') return sendText(res, 200, o.metrics());
    if (path === '/v1/status') return sendJson(res, 200, o.status());
    if (path === '/v1/watch') return watch(o, url, req, res);
    return leaseList(o, req, res);
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
  if (isWritePath(path)) return write(o, req, res, parseWrite(path, body));
  switch (path) {
    case '/v1/kv/range':
      return read(o, req, res, body);
    case '/v1/lease/keepalive': {
      const { leaseId } = parseLeaseQuery(body, false);
      return leaseCall(o, req, res, (done) => o.core.keepAlive(leaseId, done));
    }
    case '/v1/lease/ttl': {
      const { leaseId, keys } = parseLeaseQuery(body, true);
      return leaseCall(o, req, res, (done) => o.core.timeToLive(leaseId, keys, done));
    }
    default:
      return sendError(res, new CoordError('CONCLAVE_USAGE', `no route POST ${path}; see docs/api.md`), 'failed', 404);
  }
}

function write(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse, command: KvWrite): void {
  if (redirectToLeader(o, req, res)) return;
  const admitted = o.quota.admit(command);
  if (admitted instanceof CoordError) return sendError(res, admitted, 'failed');
  const timeout = timeoutAnswer(o, res);
  o.core.write(command, (outcome: WriteOutcome) => {
    clearTimeout(timeout);
    admitted.release();
    if (outcome.kind !== 'applied') return sendError(res, outcome.error, outcome.kind);
    sendApplyResult(res, outcome.result);
  });
}

/** A leader-only lease call: redirected by followers, answered after a confirmation. */
function leaseCall<T>(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse,
  call: (done: (outcome: LeaseOutcome<T>) => void) => void): void {
  if (redirectToLeader(o, req, res)) return;
  const timeout = timeoutAnswer(o, res, 'failed');
  call((outcome) => {
    clearTimeout(timeout);
    if (outcome.kind === 'ok') return sendJson(res, 200, outcome.value);
    sendError(res, outcome.error, 'failed');
  });
}

function leaseList(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse): void {
  leaseCall(o, req, res, (done) => o.core.listLeases((outcome) => done(outcome.kind === 'ok'
    ? { kind: 'ok', value: { leases: outcome.value } } : outcome)));
}

function timeoutAnswer(o: HttpApiOptions, res: ServerResponse,
  outcome: 'failed' | 'unknown' = 'unknown'): NodeJS.Timeout {
  if (outcome === 'failed') {
    // An unanswered keep-alive promises nothing: the client must not count on it.
    return setTimeout(() => sendError(res, new CoordError('CONCLAVE_TIMEOUT',
      `no leadership confirmation within ${o.requestTimeoutMs} ms`), 'failed'), o.requestTimeoutMs);
  }
  return setTimeout(() => {
    sendError(res, new CoordError('CONCLAVE_TIMEOUT', `not committed within ${o.requestTimeoutMs} ms ` +
      '(the cluster may have lost its leader or quorum); it may still apply: retry with the same clientId and sequence'), 'unknown');
  }, o.requestTimeoutMs);
}

function read(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse, body: Body): void {
  const { request, consistency } = parseRange(body);
  if (consistency === 'linearizable' && redirectToLeader(o, req, res)) return;
  const timeout = timeoutAnswer(o, res);
  o.core.read(request, consistency, (outcome: ReadOutcome) => {
    clearTimeout(timeout);
    if (outcome.kind === 'failed') return sendError(res, outcome.error, 'failed');
    sendApplyResult(res, outcome.result);
  });
}

function watch(o: HttpApiOptions, url: URL, req: IncomingMessage, res: ServerResponse): void {
  const { selector, fromRevision } = parseWatchQuery(url.searchParams);
  const problems = validateKvWatchRequest(Math.max(1, fromRevision), selector, undefined,
    o.core.store.config);
  if (problems.length > 0) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID',
      problems.map((p) => `${p.field}: ${p.rule}`).join('; '));
  }
  const connection = o.guard.state(req.socket);
  if (connection === undefined) return;
  if (connection.watchers >= o.limits.connectionWatchersMax) {
    return sendError(res, new CoordError('CONCLAVE_LIMIT_EXCEEDED', `this connection has the `
      + `most watch streams one may open (${o.limits.connectionWatchersMax}, `
      + '--max-connection-watchers)'), 'failed', 429);
  }
  if (o.watches.size >= o.limits.watchersMax) {
    return sendError(res, new CoordError('CONCLAVE_LIMIT_EXCEEDED', `this member has the most `
      + `watch streams it takes (${o.limits.watchersMax}, --max-watchers); retry later or on `
      + 'another member'), 'failed');
  }
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

function redirectToLeader(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse): boolean {
  const status = o.core.status();
  if (status.role === 'leader') return false;
  const leaderUrl = status.leaderId === undefined ? undefined : o.clientUrlOf(status.leaderId);
  if (leaderUrl === undefined) {
    sendError(res, new CoordError('CONCLAVE_NO_QUORUM', `${o.core.id} knows no leader (term ${status.term}); ` +
      'the cluster may have lost its majority'), 'failed');
    return true;
  }
  res.writeHead(307, { location: `${leaderUrl}${req.url ?? ''}`, 'content-type': 'application/json' });
  res.end(JSON.stringify({
    error: { code: 'CONCLAVE_NOT_LEADER', message: `not the leader; the leader is ${status.leaderId}`,
      outcome: 'failed', leaderId: status.leaderId, leaderUrl },
  }));
  return true;
}

function sendApplyResult(res: ServerResponse, result: KvApplyResult | KvRangeResult | KvErrorResult): void {
  if (result.kind !== 'error') return sendJson(res, 200, result);
  const error = result.error;
  switch (error.code) {
    case 'compacted':
      return sendError(res, new CoordError('CONCLAVE_KV_COMPACTED', `revision compacted; the oldest kept is after ${error.compactRevision}`), 'failed');
    case 'future-revision':
      return sendError(res, new CoordError('CONCLAVE_KV_FUTURE_REVISION', `revision ${error.revision} is beyond the current ${error.currentRevision}`), 'failed');
    case 'duplicate-stale':
      return sendError(res, new CoordError('CONCLAVE_DUPLICATE_STALE', `sequence ${error.sequence} of ${error.clientId} is older than ${error.sequenceApplied}, already applied`), 'failed');
    case 'idempotency-mismatch':
      return sendError(res, new CoordError('CONCLAVE_IDEMPOTENCY_MISMATCH', `sequence `
        + `${error.sequence} of client ${error.clientId} was applied to another request; this `
        + 'one was not applied: use the next sequence for a new request'), 'failed');
    case 'invalid':
      return sendError(res, new CoordError('CONCLAVE_REQUEST_INVALID', error.problems.map((p) => `${p.field}: ${p.rule}`).join('; ')), 'failed');
    case 'bad-command':
      return sendError(res, new CoordError('CONCLAVE_PROTOCOL', error.reason), 'failed');
    case 'lease-not-found':
      return sendError(res, new CoordError('CONCLAVE_LEASE_EXPIRED', `lease ${error.leaseId} `
        + 'does not exist: it expired, was revoked or was never granted'), 'failed');
    case 'lease-limit':
      return sendError(res, new CoordError('CONCLAVE_REQUEST_INVALID', 'the cluster already '
        + `holds its maximum of ${error.leasesMax} leases (leasesMax); revoke some first`),
      'failed');
  }
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
