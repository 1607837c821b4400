/**
 * Pipelined keep-alives: a WebSocket at /v1/lease/stream on the leader. A client sends many
 * keep-alives on one connection without waiting, each answered (in any order) with the
 * remaining TTL, as etcd's LeaseKeepAlive stream:
 *
 *   → {"id":7,"leaseId":42}
 *   ← {"id":7,"leaseId":42,"ttlMs":10000,"remainingMs":9996}
 *   ← {"id":8,"leaseId":43,"error":{"code":"CONCLAVE_LEASE_EXPIRED","message":"...",
 *      "outcome":"failed"}}
 *
 * A follower refuses the upgrade with 307 and the leader's stream URL in `Location` (503
 * CONCLAVE_NO_QUORUM when it knows no leader). When this member stops leading, its streams
 * close (code 1012) and clients reconnect to the new leader. At most `inflightMax` keep-alives
 * per connection wait for an answer; more are answered CONCLAVE_UNAVAILABLE at once. A client
 * that sends but does not read its answers is cut off once `bufferedBytesMax` of answers wait
 * for it (the connection is dropped: its keep-alives promise nothing anyway).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { NodeId } from '../core/ids.js';
import { leaseDenial } from '../core/kv/index.js';
import { CoordError } from '../errors.js';
import { bearerToken, type AuthGate } from './auth-gate.js';
import type { Logger } from '../ports/logger.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import type { LeaderlessAnswer } from './request-verdicts.js';

export const LEASE_STREAM_PATH = '/v1/lease/stream';

export interface LeaseStreamOptions {
  readonly core: Pick<ConsistentCore, 'id' | 'status' | 'keepAlive'>;
  /** The client URL (http://host:port) of each member, to redirect to the leader. */
  readonly clientUrlOf: (id: NodeId) => string | undefined;
  /** What a member that knows no leader answers (request-verdicts.ts). */
  readonly leaderless: LeaderlessAnswer;
  readonly logger: Logger;
  /**
   * Keep-alives waiting for an answer on one connection. Unit: messages. Default: 4096 (one
   * client keeping 4096 leases alive at once; the lease tracker batches them anyway).
   */
  readonly inflightMax?: number;
  /**
   * Answers queued for one connection and not yet taken by it. Unit: bytes. Default: 1 MiB
   * (about 12 000 answers; a client reading them is never near it).
   */
  readonly bufferedBytesMax?: number;
  /**
   * While auth is on, the upgrade needs `Authorization: Bearer TOKEN` (401 otherwise), and
   * each keep-alive is the owner's (authorize.ts). The token is checked at the upgrade only:
   * a stream outlives its token as a keep-alive outlives a login. Default: no checks.
   */
  readonly auth?: { readonly gate: AuthGate; readonly store: ConsistentCore['store'] };
}

/** Largest message a client may send. Unit: bytes (a keep-alive is about 30). */
const MESSAGE_BYTES_MAX = 4096;

export class LeaseStreamHub {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: MESSAGE_BYTES_MAX });
  private readonly sockets = new Set<WebSocket>();
  private readonly inflightMax: number;
  private readonly bufferedBytesMax: number;

  constructor(private readonly o: LeaseStreamOptions) {
    this.inflightMax = o.inflightMax ?? 4096;
    this.bufferedBytesMax = o.bufferedBytesMax ?? 1024 * 1024;
  }

  get size(): number {
    return this.sockets.size;
  }

  /** Handles an HTTP upgrade; false when it is not for the lease stream (caller decides). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== LEASE_STREAM_PATH) return false;
    const principal = this.o.auth?.gate.principalOf(bearerToken(req.headers.authorization));
    if (principal instanceof CoordError) {
      const body = JSON.stringify({ error: { code: principal.code, message: principal.message,
        outcome: 'failed' } });
      socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n`
        + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return true;
    }
    if (!this.redirected(req, socket)) {
      this.server.handleUpgrade(req, socket, head, (ws) => this.serve(ws, socket, principal));
    }
    return true;
  }

  /** Why `principal` may not keep `leaseId` alive, or undefined. */
  private denied(principal: string | undefined, leaseId: number): string | undefined {
    const auth = this.o.auth;
    if (principal === undefined || auth === undefined) return undefined;
    return leaseDenial(auth.store.auth, principal, auth.store.lease(leaseId), 'keep-alive');
  }

  /** Closes every stream (this member stopped leading, or is stopping). */
  closeAll(reason: string): void {
    for (const ws of this.sockets) ws.close(1012, reason.slice(0, 120));
    this.sockets.clear();
  }

  /** A follower answers the upgrade itself: 307 to the leader, or 503. */
  private redirected(req: IncomingMessage, socket: Duplex): boolean {
    const status = this.o.core.status();
    if (status.role === 'leader') return false;
    const leaderUrl = status.leaderId === undefined ? undefined
      : this.o.clientUrlOf(status.leaderId);
    const leaderless = leaderUrl === undefined ? this.o.leaderless() : undefined;
    const body = JSON.stringify({ error: leaderless !== undefined
      ? { code: leaderless.code, message: leaderless.message, outcome: 'failed' }
      : { code: 'CONCLAVE_NOT_LEADER', message: `not the leader; the leader is ${status.leaderId}`,
        outcome: 'failed', leaderId: status.leaderId, leaderUrl } });
    const head = leaderUrl === undefined ? 'HTTP/1.1 503 Service Unavailable'
      : `HTTP/1.1 307 Temporary Redirect\r\nLocation: ${leaderUrl}${req.url ?? LEASE_STREAM_PATH}`;
    socket.end(`${head}\r\nContent-Type: application/json\r\nContent-Length: `
      + `${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    return true;
  }

  /** `socket`: the connection under `ws` (the WebSocket writes its frames to it). */
  private serve(ws: WebSocket, socket: Duplex, principal: string | undefined): void {
    this.sockets.add(ws);
    let inflight = 0;
    // Answers come in batches (one per leadership confirmation): corked until the end of the
    // tick, a batch leaves in one write instead of one system call per answer.
    let corked = false;
    const send = (message: unknown): void => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > this.bufferedBytesMax) {
        this.o.logger.debug({ bufferedBytes: ws.bufferedAmount }, 'lease stream: slow reader cut');
        return ws.terminate();
      }
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(() => {
          corked = false;
          socket.uncork();
        });
      }
      ws.send(JSON.stringify(message));
    };
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('error', (error) => this.o.logger.debug({ error: error.message }, 'lease stream error'));
    ws.on('message', (data, isBinary) => {
      const request = parseRequest(isBinary ? undefined : data.toString());
      if (request === undefined) {
        return ws.close(1007, 'expected {"id":<integer>,"leaseId":<integer>}');
      }
      const { id, leaseId } = request;
      if (!Number.isSafeInteger(leaseId) || (leaseId as number) < 1) {
        return send({ id, leaseId, error: { code: 'CONCLAVE_REQUEST_INVALID',
          message: '"leaseId" must be a positive integer', outcome: 'failed' } });
      }
      if (inflight >= this.inflightMax) {
        return send({ id, leaseId, error: { code: 'CONCLAVE_UNAVAILABLE',
          message: `more than ${this.inflightMax} keep-alives in flight`, outcome: 'failed' } });
      }
      const denied = this.denied(principal, leaseId as number);
      if (denied !== undefined) {
        return send({ id, leaseId, error: { code: 'CONCLAVE_PERMISSION_DENIED',
          message: denied, outcome: 'failed' } });
      }
      inflight += 1;
      this.o.core.keepAlive(leaseId as number, (outcome) => {
        inflight -= 1;
        if (outcome.kind === 'ok') return send({ id, ...outcome.value });
        const { code, message } = outcome.error;
        send({ id, leaseId, error: { code, message, outcome: 'failed' } });
      });
    });
  }
}

/** The request's id (without one an answer could not be matched) and its lease id as sent. */
function parseRequest(text: string | undefined): { id: number; leaseId: unknown } | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as { id?: unknown; leaseId?: unknown } | null;
    const id = value?.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) return undefined;
    return { id, leaseId: value?.leaseId };
  } catch {
    return undefined;
  }
}
