/**
 * One plain GET to one member's client port, for the operator commands that ask each member
 * by itself (`conclave endpoint health|status`, `conclave snapshot save`): no retries, no
 * leader search, redirects followed only when asked. A member that does not answer within
 * `timeoutMs` is an error naming it; an answer larger than `bodyBytesMax` is refused unread.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CoordError } from '../errors.js';
import { tlsOptions, type HttpTlsOptions } from './http-client-transport.js';

export interface HttpGetOptions {
  readonly tls?: HttpTlsOptions;
  /** Longest wait for the answer's headers. Unit: ms. */
  readonly timeoutMs: number;
  /** More request headers (the bearer token while auth is on). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HttpGetAnswer {
  readonly status: number;
  readonly body: string;
  /** From sending the request to the last byte of the answer. Unit: ms. */
  readonly latencyMs: number;
}

/**
 * Largest answer `httpGet` reads. Unit: bytes. Default: 1 MiB. Why: a status or health answer
 * is a few hundred bytes per member; anything near this is not one.
 */
export const HTTP_GET_BODY_BYTES_MAX = 1024 * 1024;

/** GETs `url` and reads the whole (small) answer. */
export async function httpGet(url: string, options: HttpGetOptions): Promise<HttpGetAnswer> {
  const started = performance.now();
  const response = await httpOpen(url, options);
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > HTTP_GET_BODY_BYTES_MAX) {
      response.destroy();
      throw new CoordError('CONCLAVE_PROTOCOL', `${url} answered more than `
        + `${HTTP_GET_BODY_BYTES_MAX} bytes`);
    }
    chunks.push(chunk);
  }
  return { status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'),
    latencyMs: performance.now() - started };
}

/**
 * GETs `url` and hands back the answer unread (a stream: the caller reads and ends it).
 * `redirectsMax`: 307s followed to their `location` (a follower names its leader).
 */
export async function httpOpen(url: string, options: HttpGetOptions,
  redirectsMax = 0): Promise<IncomingMessage> {
  const response = await openOnce(url, options);
  const location = response.headers.location;
  if (response.statusCode === 307 && location !== undefined && redirectsMax > 0) {
    response.resume();
    return httpOpen(new URL(location, url).toString(), options, redirectsMax - 1);
  }
  return response;
}

function openOnce(url: string, options: HttpGetOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const https = url.startsWith('https:');
    const send = https ? httpsRequest : httpRequest;
    const request = send(url, { method: 'GET', headers: { ...options.headers },
      ...(https ? tlsOptions(options.tls) : {}) });
    const timer = setTimeout(() => request.destroy(new CoordError('CONCLAVE_TIMEOUT',
      `${url} did not answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.once('response', (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    request.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error instanceof CoordError ? error : new CoordError('CONCLAVE_UNAVAILABLE',
        `${url}: ${error.code ?? error.message}`, { cause: error }));
    });
    request.end();
  });
}

/**
 * POSTs `body` as JSON to `url`, following up to `redirectsMax` 307s (a follower names its
 * leader), and reads the (small) answer.
 */
export async function httpPostJson(url: string, body: unknown, options: HttpGetOptions,
  redirectsMax = 3): Promise<HttpGetAnswer> {
  const started = performance.now();
  const text = JSON.stringify(body);
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const https = url.startsWith('https:');
    const send = https ? httpsRequest : httpRequest;
    const request = send(url, { method: 'POST', headers: { ...options.headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text) }, ...(https ? tlsOptions(options.tls) : {}) });
    const timer = setTimeout(() => request.destroy(new CoordError('CONCLAVE_TIMEOUT',
      `${url} did not answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.once('response', (r) => {
      clearTimeout(timer);
      resolve(r);
    });
    request.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error instanceof CoordError ? error : new CoordError('CONCLAVE_UNAVAILABLE',
        `${url}: ${error.code ?? error.message}`, { cause: error }));
    });
    request.end(text);
  });
  const location = response.headers.location;
  if (response.statusCode === 307 && location !== undefined && redirectsMax > 0) {
    response.resume();
    return httpPostJson(new URL(location, url).toString(), body, options, redirectsMax - 1);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of response as AsyncIterable<Buffer>) chunks.push(chunk);
  return { status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'),
    latencyMs: performance.now() - started };
}
