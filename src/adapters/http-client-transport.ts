/**
 * The client transport over HTTP/JSON (docs/api.md): node:http or node:https with keep-alive
 * agents (no port blocklist, unlike fetch: a member on port 6000 or 10080 is reached like any
 * other), streaming watches over their own connections (http-watch-stream.ts) and the
 * keep-alive stream over a WebSocket, ws:// or wss:// (ws-lease-stream.ts).
 *
 * What `sent` means here: the request's bytes were handed to a connected socket (a reused
 * keep-alive connection, or a new one once TCP connected and, for HTTPS, once the TLS
 * handshake finished). A refused or unresolvable connection, a TLS handshake that failed, or
 * an abort before that point is `sent: false`: the member cannot have seen the request.
 * Redirects (a follower's 307) are not followed here: they are answered as `refused` with the
 * leader, and the client goes there.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest as NodeRequest,
  type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type {
  CallOptions, ClientAnswer, ClientEndpoint, ClientRequest, ClientTransport, LeaseStreamOpening,
  LostAnswer, TokenSource, WatchOpening, WatchRequest,
} from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import { classifyHttpAnswer, errorAnswer, httpShape } from './client-wire.js';
import { HttpWatchStream } from './http-watch-stream.js';
import {
  formatRequestTimeout, REQUEST_TIMEOUT_HEADER, serverDeadlineMs,
} from './request-deadline.js';
import { openWsLeaseStream } from './ws-lease-stream.js';

/** TLS towards the members: PEM text or bytes, as node:tls takes them. */
export interface HttpTlsOptions {
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
  readonly cert?: string | Uint8Array;
  readonly key?: string | Uint8Array;
  /** The name the members' certificates must carry. Default: the endpoint's host. */
  readonly servername?: string;
}

export interface HttpClientTransportOptions {
  /** For https:// endpoints (and wss://). Default: Node's bundled CAs, no client certificate. */
  readonly tls?: HttpTlsOptions;
  /**
   * Connections kept open per member for requests. Unit: sockets. Default: 32. Why: twice the
   * client's default writesInflightMax (16), so writes and reads in flight rarely queue for a
   * socket; watches use connections of their own.
   */
  readonly socketsPerEndpointMax?: number;
  /**
   * Largest answer read. Unit: bytes. Default: 256 MiB. Why: a range over a large store is
   * the biggest answer a member gives; beyond this the answer is refused, not buffered.
   */
  readonly answerBytesMax?: number;
  /**
   * Watch frames read ahead of the consumer before the connection stops being read
   * (backpressure to the member). Unit: frames. Default: 64.
   */
  readonly watchFramesBufferedMax?: number;
  /**
   * Keep-alives waiting for an answer on one lease stream (the server's own limit is 4096).
   * Unit: messages. Default: 4096.
   */
  readonly keepAlivesInflightMax?: number;
  /** The bearer token of each request (`Authorization`), while auth is on. Default: none. */
  readonly credentials?: TokenSource;
}

/**
 * Free keep-alive connections are closed after this long unused. Unit: ms. Why 4000: below
 * Node's server default of 5000 ms (`keepAliveTimeout`), so the client does not reuse a socket
 * the member is closing, which would fail a request that may have been sent.
 */
const FREE_SOCKET_MS_MAX = 4000;

/** `Authorization: Bearer TOKEN` when there is a token. */
export function bearerHeader(credentials: TokenSource | undefined): Record<string, string> {
  const token = credentials?.token();
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

export class HttpClientTransport implements ClientTransport {
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;
  private readonly watchHttpAgent = new HttpAgent({ keepAlive: false });
  private readonly watchHttpsAgent: HttpsAgent;
  private readonly streams = new Set<{ close(): void }>();
  private closed = false;
  private readonly answerBytesMax: number;

  constructor(private readonly options: HttpClientTransportOptions = {}) {
    const maxSockets = options.socketsPerEndpointMax ?? 32;
    const tls = tlsOptions(options.tls);
    const pooled = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets,
      timeout: FREE_SOCKET_MS_MAX, scheduling: 'lifo' as const };
    this.httpAgent = new HttpAgent(pooled);
    this.httpsAgent = new HttpsAgent({ ...pooled, ...tls });
    this.watchHttpsAgent = new HttpsAgent({ keepAlive: false, ...tls });
    this.answerBytesMax = options.answerBytesMax ?? 256 * 1024 * 1024;
  }

  call(endpoint: ClientEndpoint, request: ClientRequest, options: CallOptions = {}):
    Promise<ClientAnswer> {
    const shape = httpShape(request);
    return new Promise((resolve) => {
      const exchange = this.exchange(endpoint, shape.method, shape.path, shape.body, false,
        options.signal, (lost) => resolve(lost), options.deadlineMs);
      if (exchange === undefined) return;
      exchange.on('response', (response) => {
        readAll(response, this.answerBytesMax).then((text) => {
          const location = headerOf(response, 'location');
          resolve(classifyHttpAnswer(response.statusCode ?? 0, text, location, endpoint));
        }, (error: Error) => resolve(exchangeLost(endpoint, true,
          options.signal?.aborted === true, error)));
      });
    });
  }

  openWatch(endpoint: ClientEndpoint, request: WatchRequest, options: CallOptions = {}):
    Promise<WatchOpening> {
    const query = new URLSearchParams({ key: request.key,
      fromRevision: String(request.fromRevision) });
    if (request.prefix) query.set('prefix', 'true');
    return new Promise((resolve) => {
      const exchange = this.exchange(endpoint, 'GET', `/v1/watch?${query.toString()}`,
        undefined, true, options.signal, (lost) => resolve(lost));
      if (exchange === undefined) return;
      exchange.on('response', (response) => {
        if (response.statusCode === 200) {
          const stream = new HttpWatchStream(exchange, response,
            this.options.watchFramesBufferedMax ?? 64, () => this.streams.delete(stream));
          this.streams.add(stream);
          if (this.closed) stream.close();
          return resolve({ kind: 'open', stream, servedBy: endpoint });
        }
        readAll(response, 64 * 1024).then((text) => {
          const answer = classifyHttpAnswer(response.statusCode ?? 0, text,
            headerOf(response, 'location'), endpoint);
          resolve(answer.kind === 'ok' ? errorAnswer(response.statusCode ?? 0, undefined,
            endpoint) : answer);
        }, (error: Error) => resolve(exchangeLost(endpoint, true, false, error)));
      });
    });
  }

  async openLeaseStream(endpoint: ClientEndpoint, options: CallOptions = {}):
    Promise<LeaseStreamOpening> {
    if (this.closed) return closedAnswer(endpoint);
    const opening = await openWsLeaseStream(endpoint, {
      tls: tlsOptions(this.options.tls),
      inflightMax: this.options.keepAlivesInflightMax ?? 4096,
      headers: bearerHeader(this.options.credentials),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (opening.kind === 'open') {
      const stream = opening.stream;
      this.streams.add(stream);
      stream.onClose(() => this.streams.delete(stream));
      if (this.closed) stream.close();
    }
    return opening;
  }

  close(): void {
    this.closed = true;
    for (const stream of [...this.streams]) stream.close();
    this.streams.clear();
    for (const agent of [this.httpAgent, this.httpsAgent, this.watchHttpAgent,
      this.watchHttpsAgent]) agent.destroy();
  }

  /**
   * Starts one HTTP exchange; on a failure before a response (or an abort) calls `lost` once
   * and the caller's response handler never runs. Undefined when it could not even start.
   */
  private exchange(endpoint: ClientEndpoint, method: 'GET' | 'POST', path: string,
    body: unknown, watch: boolean, signal: AbortSignal | undefined,
    lost: (answer: LostAnswer) => void, deadlineMs?: number): NodeRequest | undefined {
    if (this.closed) {
      lost(closedAnswer(endpoint));
      return undefined;
    }
    if (signal?.aborted === true) {
      lost(exchangeLost(endpoint, false, true, signal.reason));
      return undefined;
    }
    let url: URL;
    try {
      url = new URL(path, endpoint);
    } catch (error) {
      lost(exchangeLost(endpoint, false, false, error));
      return undefined;
    }
    const https = url.protocol === 'https:';
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const agent = watch ? (https ? this.watchHttpsAgent : this.watchHttpAgent)
      : (https ? this.httpsAgent : this.httpAgent);
    const make = https ? httpsRequest : httpRequest;
    const req = make(url, { method, agent, headers: {
      ...(payload === undefined ? {} : { 'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload) }),
      ...(deadlineMs === undefined ? {}
        : { [REQUEST_TIMEOUT_HEADER]: formatRequestTimeout(serverDeadlineMs(deadlineMs)) }),
      ...bearerHeader(this.options.credentials),
    } });
    let sent = false;
    let settled = false;
    const fail = (aborted: boolean, cause: unknown): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      lost(exchangeLost(endpoint, sent, aborted, cause));
    };
    const onAbort = (): void => {
      fail(true, signal?.reason);
      req.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('socket', (socket: Socket) => {
      // A new socket is still connecting here (this event comes a tick after it was made);
      // when unsure, count the request as sent: `unknown` is the safe side.
      if (req.reusedSocket || !socket.connecting) sent = true;
      else socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => {
        sent = true;
      });
    });
    req.on('error', (error) => fail(false, error));
    req.on('response', () => {
      // From here on the caller's handler owns the answer; an abort still ends it.
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (signal !== undefined && !watch) {
        signal.addEventListener('abort', () => req.destroy(), { once: true });
      }
    });
    req.end(payload);
    return req;
  }
}

function exchangeLost(endpoint: ClientEndpoint, sent: boolean, aborted: boolean,
  cause: unknown): LostAnswer {
  const code = (cause as { code?: unknown } | undefined)?.code;
  const detail = aborted ? 'aborted'
    : typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause);
  return { kind: 'lost', sent, aborted, detail, servedBy: endpoint, cause };
}

function closedAnswer(endpoint: ClientEndpoint): LostAnswer {
  return { kind: 'lost', sent: false, aborted: false, detail: 'the transport was closed',
    servedBy: endpoint };
}

/** The body as text, at most `bytesMax` bytes (else an error: the answer is not read). */
function readAll(response: IncomingMessage, bytesMax: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > bytesMax) {
        response.destroy(new CoordError('CONCLAVE_PROTOCOL',
          `an answer of more than ${bytesMax} bytes was refused (answerBytesMax)`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
    response.on('aborted', () => reject(new Error('the answer was cut off')));
  });
}

function headerOf(response: IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The node:tls options of `tls` (empty without). */
export function tlsOptions(tls: HttpTlsOptions | undefined): Record<string, unknown> {
  if (tls === undefined) return {};
  return {
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    ...(tls.servername === undefined ? {} : { servername: tls.servername }),
  };
}
