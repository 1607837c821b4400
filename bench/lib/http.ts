/**
 * The one HTTP client both systems are driven with: node:http over keep-alive connections.
 * Conclave speaks HTTP/JSON; etcd 3.4 serves the same kind of HTTP/JSON through its gRPC
 * gateway (/v3/...), so one client code path measures both. node:http rather than fetch: fetch
 * costs several times more client CPU per request in Node 20, and the client shares the
 * machine's 2 cores with the servers under test.
 */
import * as http from 'node:http';

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  readonly location: string | undefined;
}

export interface PostOptions {
  readonly agent: http.Agent;
  /** Gives up (rejects) after this long. Unit: ms. */
  readonly timeoutMs: number;
  /** Aborts the request when signalled (the failover probe cancels the losers). */
  readonly signal?: AbortSignal;
  /** Keep the body (status replies); the load loop only needs the status code. */
  readonly keepBody: boolean;
  /** Sent as `Authorization` (bench --auth; etcd's gateway takes the bare token). */
  readonly token?: string | undefined;
}

/** POSTs `body` (JSON text) to http://`hostPort``path`. */
export function post(hostPort: string, path: string, body: string,
  options: PostOptions): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      ...target(hostPort, path), method: 'POST', agent: options.agent, timeout: options.timeoutMs,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body),
        ...(options.token === undefined ? {} : { authorization: options.token }) },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    }, (response) => collect(response, options.keepBody, resolve, reject));
    failOnTimeout(request, options.timeoutMs, reject);
    request.end(body);
  });
}

/** GET, for status endpoints. */
export function get(hostPort: string, path: string, agent: http.Agent,
  timeoutMs: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.get({ ...target(hostPort, path), agent, timeout: timeoutMs },
      (response) => collect(response, true, resolve, reject));
    failOnTimeout(request, timeoutMs, reject);
  });
}

function target(hostPort: string, path: string): { host: string; port: number; path: string } {
  const colon = hostPort.lastIndexOf(':');
  return { host: hostPort.slice(0, colon), port: Number(hostPort.slice(colon + 1)), path };
}

function collect(response: http.IncomingMessage, keepBody: boolean,
  resolve: (answer: HttpAnswer) => void, reject: (error: Error) => void): void {
  let text = '';
  if (keepBody) response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  else response.resume();
  response.once('end', () => resolve({
    status: response.statusCode ?? 0, body: text, location: response.headers.location,
  }));
  response.once('error', reject);
}

function failOnTimeout(request: http.ClientRequest, timeoutMs: number,
  reject: (error: Error) => void): void {
  request.once('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
  request.once('error', reject);
}

/** host:port of an http:// URL (Location headers). */
export function hostPortOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port}`;
}
