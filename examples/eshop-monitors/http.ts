/**
 * The little HTTP/JSON the example speaks: services answer GET /health, the supervisor takes
 * POST /restart and POST /leader. Node's own `http` on both sides.
 */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/** Largest request body accepted. Why 16 KiB: every body here is a few dozen bytes. */
const BODY_BYTES_MAX = 16 * 1024;

/** What a JSON request answered: the HTTP status and the parsed body (undefined if none). */
export interface JsonAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Sends one JSON request on a connection of its own and reads the JSON answer. Rejects on a
 * network error, or when no answer came within `timeoutMs` (the request may still reach the
 * server: giving up here does not recall bytes already sent).
 *
 * Why no connection pool (fetch keeps connections alive): a monitor that was paused for
 * seconds would resume holding a pooled connection the server has closed meanwhile, and its
 * next request would die on it ("other side closed"). A connection per request costs a
 * loopback handshake, and a resumed monitor's late order really reaches the supervisor.
 */
export function requestJson(
  method: 'GET' | 'POST', url: string, body: unknown, timeoutMs: number,
): Promise<JsonAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<JsonAnswer>((resolve, reject) => {
    const request = httpRequest(url, {
      method, agent: false, signal: AbortSignal.timeout(timeoutMs),
      headers: payload === undefined ? {}
        : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, body: parseLenient(text) });
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

/** JSON when it parses, else the text itself (an error page), undefined when empty. */
function parseLenient(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Reads a request's JSON body; rejects when it is too large or not JSON. */
export async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    bytes += buffer.length;
    if (bytes > BODY_BYTES_MAX) throw new Error(`request body over ${BODY_BYTES_MAX} bytes`);
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json', 'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

/** `record[field]` when it is a string, else undefined. */
export function stringField(record: unknown, field: string): string | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  const value = (record as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

/** `record[field]` when it is a safe integer, else undefined. */
export function integerField(record: unknown, field: string): number | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  const value = (record as Record<string, unknown>)[field];
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Our stdin is a pipe from the process that started us: it ends when that process dies, however
 * it dies. Calls `onLine` for each line it writes (commands) and `onParentGone` at the end, so
 * no process of the example outlives the runner.
 */
export function watchParent(onParentGone: () => void, onLine?: (line: string) => void): void {
  let buffered = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line !== '') onLine?.(line);
    }
  });
  process.stdin.on('end', onParentGone);
  process.stdin.on('error', onParentGone);
}
