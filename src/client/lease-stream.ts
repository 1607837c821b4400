/**
 * The client side of the pipelined keep-alive stream (src/server/lease-stream.ts): one
 * WebSocket to the leader per client, shared by all its leases, many keep-alives in flight.
 * It connects on demand, follows a follower's 307 to the leader, moves on to the next endpoint
 * when one fails, and fails every keep-alive in flight when the connection drops (the caller
 * retries: a keep-alive without an answer promises nothing).
 */
import WebSocket from 'ws';
import type { Clock } from '../ports/clock.js';
import { CoordError, type CoordErrorCode } from '../errors.js';
import type { ClientConfig } from './config.js';
import { originOf } from './endpoints.js';
import type { EndpointRouter } from './router.js';

/** What a keep-alive's answer says. */
export interface LeaseKeepAliveResult {
  readonly leaseId: number;
  /** The granted TTL. Unit: ms. */
  readonly ttlMs: number;
  /** The leader's remaining TTL when it answered. Unit: ms. */
  readonly remainingMs: number;
}

interface Pending {
  readonly ws: WebSocket;
  readonly resolve: (result: LeaseKeepAliveResult) => void;
  readonly reject: (error: CoordError) => void;
  readonly timer: NodeJS.Timeout;
}

export interface LeaseStreamComponents {
  readonly clock: Clock;
  readonly router: EndpointRouter;
  /** Aborted when the client closes. */
  readonly signal: AbortSignal;
}

const STREAM_PATH = '/v1/lease/stream';

export class LeaseStreamClient {
  /** The open (or opening) stream; replaced when it closes. */
  private socket: Promise<WebSocket> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly config: ClientConfig, private readonly c: LeaseStreamComponents) {
    c.signal.addEventListener('abort', () => this.close(), { once: true });
  }

  /** One keep-alive over the stream; rejects with a CoordError (outcome `failed`). */
  async keepAlive(leaseId: number): Promise<LeaseKeepAliveResult> {
    if (this.c.signal.aborted) throw closedError();
    let ws = await this.connect();
    if (ws.readyState !== WebSocket.OPEN) { // closed since: one fresh connection
      this.socket = undefined;
      ws = await this.connect();
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new CoordError('CONCLAVE_TIMEOUT',
          `no keep-alive answer within ${this.config.requestTimeoutMs} ms`));
        ws.terminate(); // presumed dead: the next keep-alive reconnects
      }, this.config.requestTimeoutMs);
      this.pending.set(id, { ws, resolve, reject, timer });
      ws.send(JSON.stringify({ id, leaseId }));
    });
  }

  close(): void {
    const socket = this.socket;
    this.socket = undefined;
    void socket?.then((ws) => ws.close(1000, 'client closed'), () => undefined);
    this.failAll(undefined, closedError());
  }

  private connect(): Promise<WebSocket> {
    this.socket ??= this.open(this.c.router.next(true), 0).catch((error: unknown) => {
      this.socket = undefined;
      throw error;
    });
    return this.socket;
  }

  /** Opens the stream at `baseUrl`, following up to redirectsMax redirects. */
  private open(baseUrl: string, hop: number): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${baseUrl}${STREAM_PATH}`,
        { handshakeTimeout: this.config.requestTimeoutMs });
      ws.on('unexpected-response', (_request, response) => {
        ws.terminate();
        const location = response.headers.location;
        const leader = location === undefined ? undefined : originOf(location);
        response.resume();
        if (response.statusCode === 307 && leader !== undefined
          && hop < this.config.redirectsMax) {
          this.c.router.noteLeader(leader);
          return resolve(this.open(leader, hop + 1));
        }
        this.c.router.noteFailure(baseUrl);
        reject(new CoordError(response.statusCode === 503 ? 'CONCLAVE_NO_QUORUM'
          : 'CONCLAVE_NOT_LEADER', `${baseUrl} refused the keep-alive stream `
          + `(HTTP ${response.statusCode ?? '?'})`));
      });
      ws.on('error', (error) => {
        this.c.router.noteFailure(baseUrl);
        reject(new CoordError('CONCLAVE_UNAVAILABLE',
          `cannot open the keep-alive stream at ${baseUrl}: ${error.message}`, { cause: error }));
      });
      ws.on('open', () => {
        this.c.router.noteLeader(baseUrl);
        this.attach(ws);
        resolve(ws);
      });
    });
  }

  private attach(ws: WebSocket): void {
    ws.on('message', (data) => this.onMessage(String(data)));
    ws.on('close', () => {
      void this.socket?.then((current) => {
        if (current === ws) this.socket = undefined;
      }, () => undefined);
      this.failAll(ws, new CoordError('CONCLAVE_UNAVAILABLE',
        'the keep-alive stream closed (the leader may have changed)'));
    });
  }

  private onMessage(text: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    const pending = typeof message['id'] === 'number' ? this.pending.get(message['id']) : undefined;
    if (pending === undefined) return;
    this.pending.delete(message['id'] as number);
    clearTimeout(pending.timer);
    const error = message['error'] as { code?: unknown; message?: unknown } | undefined;
    if (error !== undefined) {
      const code = typeof error.code === 'string' ? error.code as CoordErrorCode
        : 'CONCLAVE_PROTOCOL';
      return pending.reject(new CoordError(code, String(error.message ?? 'keep-alive failed')));
    }
    const { leaseId, ttlMs, remainingMs } = message;
    if (typeof leaseId !== 'number' || typeof ttlMs !== 'number'
      || typeof remainingMs !== 'number') {
      return pending.reject(new CoordError('CONCLAVE_PROTOCOL',
        `unexpected keep-alive answer ${text.slice(0, 200)}`));
    }
    pending.resolve({ leaseId, ttlMs, remainingMs });
  }

  /** Fails the keep-alives sent on `ws` (every one when undefined). */
  private failAll(ws: WebSocket | undefined, error: CoordError): void {
    for (const [id, pending] of this.pending) {
      if (ws !== undefined && pending.ws !== ws) continue;
      clearTimeout(pending.timer);
      this.pending.delete(id);
      pending.reject(error);
    }
  }
}

function closedError(): CoordError {
  return new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed');
}
