/**
 * The keep-alive stream over a WebSocket (ws:// for an http:// endpoint, wss:// for https://)
 * at /v1/lease/stream (src/server/lease-stream.ts): each keep-alive is a message tagged with
 * an id of this stream, its answer repeats the id, answers come in any order. A follower
 * refuses the upgrade with 307 and the leader's URL (answered `refused` with the leader);
 * when the stream closes, every keep-alive still waiting is answered `lost`.
 */
import WebSocket from 'ws';
import type {
  ClientEndpoint, KeepAliveAnswer, LeaseStream, LostAnswer, RefusedAnswer,
} from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import { errorAnswer, knownCode, originOf } from './client-wire.js';

const STREAM_PATH = '/v1/lease/stream';

/** Largest answer accepted on the stream. Unit: bytes (an answer is about 80). */
const MESSAGE_BYTES_MAX = 64 * 1024;

export interface WsLeaseStreamOptions {
  /** node:tls options for wss:// (ca, cert, key, servername). */
  readonly tls: Readonly<Record<string, unknown>>;
  /** Keep-alives waiting for an answer at once; more are refused at once. Unit: messages. */
  readonly inflightMax: number;
  readonly signal?: AbortSignal;
  /** Extra upgrade headers (the bearer token). */
  readonly headers?: Readonly<Record<string, string>>;
}

export type WsLeaseStreamOpening =
  | { readonly kind: 'open'; readonly stream: WsLeaseStream; readonly servedBy: ClientEndpoint }
  | RefusedAnswer
  | LostAnswer;

/** Opens the stream at `endpoint`; resolves once it is open, refused, or failed. */
export function openWsLeaseStream(endpoint: ClientEndpoint, options: WsLeaseStreamOptions):
  Promise<WsLeaseStreamOpening> {
  const { signal } = options;
  if (signal?.aborted === true) return Promise.resolve(lost(endpoint, true, 'aborted'));
  const url = `${endpoint.replace(/^http/, 'ws')}${STREAM_PATH}`;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (opening: WsLeaseStreamOpening): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(opening);
    };
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, { ...options.tls, maxPayload: MESSAGE_BYTES_MAX,
        ...(options.headers === undefined ? {} : { headers: { ...options.headers } }) });
    } catch (error) {
      return settle(lost(endpoint, false, error instanceof Error ? error.message : String(error)));
    }
    const onAbort = (): void => {
      ws.terminate();
      settle(lost(endpoint, true, 'aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    ws.on('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => {
        if (chunks.length < 16) chunks.push(chunk);
      });
      response.on('end', () => {
        ws.terminate();
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        const leader = location === undefined ? undefined : originOf(location, endpoint);
        if (status >= 300 && status < 400 && leader !== undefined) {
          return settle({ kind: 'refused', servedBy: endpoint, leader,
            error: new CoordError('CONCLAVE_NOT_LEADER', `${endpoint} is not the leader`) });
        }
        settle(errorAnswer(status, parse(Buffer.concat(chunks).toString('utf8')), endpoint));
      });
      response.on('error', () => settle(lost(endpoint, false, 'the refusal was cut off')));
    });
    ws.on('error', (error) => settle(lost(endpoint, false, error.message, error)));
    ws.on('open', () => settle({ kind: 'open', servedBy: endpoint,
      stream: new WsLeaseStream(ws, options.inflightMax) }));
  });
}

export class WsLeaseStream implements LeaseStream {
  private readonly pending = new Map<number, (answer: KeepAliveAnswer) => void>();
  private readonly closeListeners: (() => void)[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly ws: WebSocket, private readonly inflightMax: number) {
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(String(data));
    });
    ws.on('close', () => this.ended('the stream closed (the leader may have changed)'));
    ws.on('error', (error) => this.ended(error.message));
  }

  get open(): boolean {
    return !this.closed && this.ws.readyState === WebSocket.OPEN;
  }

  keepAlive(leaseId: number): Promise<KeepAliveAnswer> {
    if (!this.open) return Promise.resolve({ kind: 'lost', detail: 'the stream is closed' });
    if (this.pending.size >= this.inflightMax) {
      return Promise.resolve({ kind: 'refused', error: new CoordError('CONCLAVE_UNAVAILABLE',
        `more than ${this.inflightMax} keep-alives wait on this stream`) });
    }
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.ws.send(JSON.stringify({ id, leaseId }));
    });
  }

  close(): void {
    if (this.closed) return;
    this.ws.close(1000, 'client closed');
    this.ended('the client closed the stream');
  }

  /** Called once when the stream is over. */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  private ended(detail: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const resolve of this.pending.values()) resolve({ kind: 'lost', detail });
    this.pending.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  private onMessage(text: string): void {
    const message = parse(text) as Record<string, unknown> | undefined;
    const id = message?.['id'];
    const resolve = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (message === undefined || resolve === undefined) return; // unknown or late: dropped
    this.pending.delete(id as number);
    const error = message['error'] as { code?: unknown; message?: unknown } | undefined;
    if (error !== undefined) {
      const code = knownCode(error.code) ?? 'CONCLAVE_PROTOCOL';
      const text = typeof error.message === 'string' ? error.message.slice(0, 2000)
        : 'keep-alive failed';
      return resolve({ kind: 'refused', error: new CoordError(code, text) });
    }
    resolve({ kind: 'ok', body: message });
  }
}

function lost(endpoint: ClientEndpoint, aborted: boolean, detail: string,
  cause?: unknown): LostAnswer {
  return { kind: 'lost', sent: false, aborted, detail, servedBy: endpoint,
    ...(cause === undefined ? {} : { cause }) };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
