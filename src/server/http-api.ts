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
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NodeId } from '../core/ids.js';
import type { KvApplyResult, KvErrorResult, KvRangeRequest, KvRangeResult } from '../core/kv/index.js';
import { CoordError, type CoordErrorCode } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import type {
  ConsistentCore, KvWrite, LeaseOutcome, ReadOutcome, WriteOutcome,
} from '../runtime/core/consistent-core.js';
import type { WatchHub, WatchMessage } from './watch-hub.js';

export interface HttpApiOptions {
  readonly core: ConsistentCore;
  readonly watches: WatchHub;
  /** The client URL (http://host:port) of each member, to redirect to the leader. */
  readonly clientUrlOf: (id: NodeId) => string | undefined;
  readonly metrics: () => string;
  readonly status: () => unknown;
  readonly logger: Logger;
  /** Largest request body accepted. Unit: bytes. */
  readonly bodyBytesMax: number;
  /**
   * How long a write or linearizable read may wait for the log before the answer is 504
   * CONCLAVE_TIMEOUT with outcome `unknown` (it may still apply: retry with the same clientId
   * and sequence). Unit: ms. The server sets 2 × the longest election timeout: long enough to
   * ride out one election, short enough that a deposed leader's clients hear back.
   */
  readonly requestTimeoutMs: number;
}

const HTTP_STATUS: Readonly<Partial<Record<CoordErrorCode, number>>> = {
  CONCLAVE_REQUEST_INVALID: 400,
  CONCLAVE_USAGE: 400,
  CONCLAVE_PROTOCOL: 400,
  CONCLAVE_NOT_LEADER: 503,
  CONCLAVE_NO_QUORUM: 503,
  CONCLAVE_UNAVAILABLE: 503,
  CONCLAVE_OVERLOADED: 429,
  CONCLAVE_TIMEOUT: 504,
  CONCLAVE_KV_COMPACTED: 410,
  CONCLAVE_KV_FUTURE_REVISION: 400,
  CONCLAVE_DUPLICATE_STALE: 409,
  CONCLAVE_LEASE_EXPIRED: 404,
};

export function createHttpApi(options: HttpApiOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    route(options, req, res).catch((error: unknown) => {
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

async function route(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Writes are the hot path: a known path needs no URL object (a few µs per request).
  if (req.method === 'POST' && req.url !== undefined && POST_PATHS.has(req.url)) {
    return post(o, req, res, req.url);
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (req.method === 'GET' && path === '/metrics') return sendText(res, 200, o.metrics());
  if (req.method === 'GET' && path === '/v1/status') return sendJson(res, 200, o.status());
  if (req.method === 'GET' && path === '/v1/watch') return watch(o, url, req, res);
  if (req.method === 'GET' && path === '/v1/lease/list') return leaseList(o, req, res);
  if (req.method !== 'POST') {
    return sendError(res, new CoordError('CONCLAVE_USAGE', `no route ${req.method ?? '?'} ${path}; see docs/api.md`), 'failed', 404);
  }
  return post(o, req, res, path);
}

async function post(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse,
  path: string): Promise<void> {
  const body = await readJson(req, o.bodyBytesMax);
  switch (path) {
    case '/v1/kv/put':
    case '/v1/kv/delete':
    case '/v1/kv/txn':
      return write(o, req, res, toWrite(path, body));
    case '/v1/kv/range':
      return read(o, req, res, body);
    case '/v1/kv/compact':
      return write(o, req, res, { kind: 'compact', clientId: stringField(body, 'clientId'),
        sequence: numberField(body, 'sequence'), revision: numberField(body, 'revision') });
    case '/v1/lease/grant':
      return write(o, req, res, { kind: 'lease-grant', clientId: stringField(body, 'clientId'),
        sequence: numberField(body, 'sequence'), ttlMs: numberField(body, 'ttlMs') });
    case '/v1/lease/revoke':
      return write(o, req, res, { kind: 'lease-revoke', clientId: stringField(body, 'clientId'),
        sequence: numberField(body, 'sequence'), leaseId: numberField(body, 'leaseId') });
    case '/v1/lease/keepalive':
      return leaseCall(o, req, res, (done) => o.core.keepAlive(numberField(body, 'leaseId'), done));
    case '/v1/lease/ttl':
      return leaseCall(o, req, res, (done) => o.core.timeToLive(numberField(body, 'leaseId'),
        body['keys'] === true, done));
    default:
      return sendError(res, new CoordError('CONCLAVE_USAGE', `no route POST ${path}; see docs/api.md`), 'failed', 404);
  }
}

function write(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse, command: KvWrite): void {
  if (redirectToLeader(o, req, res)) return;
  const timeout = timeoutAnswer(o, res);
  o.core.write(command, (outcome: WriteOutcome) => {
    clearTimeout(timeout);
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

function read(o: HttpApiOptions, req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
  const consistency = body['consistency'] === 'serializable' ? 'serializable' : 'linearizable';
  if (consistency === 'linearizable' && redirectToLeader(o, req, res)) return;
  const request: KvRangeRequest = {
    key: stringField(body, 'key'),
    ...(body['prefix'] === true ? { prefix: true } : {}),
    ...(typeof body['limit'] === 'number' ? { limit: body['limit'] } : {}),
    ...(typeof body['revision'] === 'number' ? { revision: body['revision'] } : {}),
  };
  const timeout = timeoutAnswer(o, res);
  o.core.read(request, consistency, (outcome: ReadOutcome) => {
    clearTimeout(timeout);
    if (outcome.kind === 'failed') return sendError(res, outcome.error, 'failed');
    sendApplyResult(res, outcome.result);
  });
}

function watch(o: HttpApiOptions, url: URL, req: IncomingMessage, res: ServerResponse): void {
  const key = url.searchParams.get('key') ?? '';
  const prefix = url.searchParams.get('prefix') === 'true' || url.searchParams.get('prefix') === '1';
  const fromRevision = Number(url.searchParams.get('fromRevision') ?? '0');
  if (!Number.isSafeInteger(fromRevision) || fromRevision < 0) {
    return sendError(res, new CoordError('CONCLAVE_REQUEST_INVALID', 'fromRevision must be a non-negative integer'), 'failed');
  }
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  const cancel = o.watches.watch({ key, ...(prefix ? { prefix: true } : {}) }, fromRevision, {
    write: (message: WatchMessage) => res.write(`${JSON.stringify(message)}\n`),
    onDrain: (resume) => res.once('drain', resume),
    close: () => res.end(),
  });
  req.on('close', cancel);
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

function toWrite(path: string, body: Record<string, unknown>): KvWrite {
  const meta = { clientId: stringField(body, 'clientId'), sequence: numberField(body, 'sequence') };
  if (path === '/v1/kv/put') {
    return { kind: 'put', ...meta, key: stringField(body, 'key'), value: stringField(body, 'value'),
      ...(body['prevKv'] === true ? { prevKv: true } : {}),
      ...(body['lease'] === undefined ? {} : { lease: numberField(body, 'lease') }) };
  }
  if (path === '/v1/kv/delete') {
    return { kind: 'delete', ...meta, key: stringField(body, 'key'),
      ...(body['prefix'] === true ? { prefix: true } : {}), ...(body['prevKv'] === true ? { prevKv: true } : {}) };
  }
  // The store validates the shape of compares and ops before anything is proposed.
  return { kind: 'txn', ...meta, compare: arrayField(body, 'compare'), success: arrayField(body, 'success'),
    failure: arrayField(body, 'failure') } as KvWrite;
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

/**
 * The request body as a JSON object. Read with 'data'/'end' listeners: an async iterator over
 * the request cost several stream and promise objects per request on the write path.
 */
function readJson(req: IncomingMessage, bytesMax: number): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > bytesMax) {
    return Promise.reject(new CoordError('CONCLAVE_REQUEST_INVALID',
      `body of ${declared} bytes exceeds ${bytesMax}`));
  }
  return new Promise((resolve, reject) => {
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > bytesMax) {
        req.off('data', onData).off('end', onEnd);
        req.resume(); // drain the rest; the error answer goes out meanwhile
        return reject(new CoordError('CONCLAVE_REQUEST_INVALID', `body exceeds ${bytesMax} bytes`));
      }
      if (first === undefined) first = chunk;
      else (more ??= [first]).push(chunk);
    };
    const onEnd = (): void => {
      try {
        resolve(parseJsonObject(more === undefined ? first : Buffer.concat(more)));
      } catch (error) {
        reject(error);
      }
    };
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

function parseJsonObject(bytes: Buffer | undefined): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes === undefined || bytes.length === 0 ? '{}' : bytes.toString('utf8'));
  } catch (error) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID', `body is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID', 'body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string') throw new CoordError('CONCLAVE_REQUEST_INVALID', `"${name}" must be a string`);
  return value;
}

function numberField(body: Record<string, unknown>, name: string): number {
  const value = body[name];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID', `"${name}" must be a positive integer`);
  }
  return value;
}

function arrayField(body: Record<string, unknown>, name: string): unknown[] {
  const value = body[name] ?? [];
  if (!Array.isArray(value)) throw new CoordError('CONCLAVE_REQUEST_INVALID', `"${name}" must be an array`);
  return value;
}
