/**
 * The multiplexed client stream: one WebSocket at /v1/stream on the client port carrying
 * every call of the client protocol as msgpack frames (docs/protocol.md). Each request frame
 * has an id that its answer repeats; answers come in any order; a watch is an id whose frames
 * keep coming until it ends. Calls run through client-calls.ts, exactly as over HTTP: the
 * same parsers, quota, redirects (as an error naming the leader) and idempotency keys.
 *
 * Batching: a client puts many frames in one message; the answers produced within one turn of
 * the event loop leave in one message, one socket write.
 *
 * Bounds, per connection: `requestsInflightMax` requests and `connectionBodyBytesMax` frame
 * bytes (the HTTP allowance of one connection) wait for answers. At either bound the socket
 * is no longer read (backpressure: TCP pushes back on the sender) until answers free room;
 * a frame that arrives in a message already read while at a bound is answered
 * CONCLAVE_OVERLOADED (outcome failed). Answers that the client does not take stop the
 * reading the same way once `answerBufferedBytesMax` of them wait in the socket. Watches
 * keep the watch hub's bounds (the slow-watcher cut: `canceled` with the revision to resume
 * from), and the watcher limits count watches of streams with those of HTTP.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { CoordError, type CoordOutcome } from '../errors.js';
import type { Logger } from '../ports/logger.js';
import {
  checkWatch, isCallName, readRefusal, runCall, watchRefusal, type CallAnswer,
  type ClientCallsOptions,
} from './client-calls.js';
import type { ClientGuard, ConnectionState } from './client-guard.js';
import type { ClientLimits } from './client-limits.js';
import { parseWatchBody, type Body } from './client-requests.js';
import {
  decodeMessage, encodeFrame, FRAME_ENVELOPE_BYTES, STREAM_PROTOCOL_VERSION,
  type AnswerFrame, type RequestFrame,
} from './stream-frames.js';
import type { WatchHandle, WatchHub } from './watch-hub.js';

export const CLIENT_STREAM_PATH = '/v1/stream';

export interface ClientStreamOptions {
  readonly calls: ClientCallsOptions;
  readonly watches: WatchHub;
  readonly guard: ClientGuard;
  readonly limits: ClientLimits;
  readonly logger: Logger;
  /**
   * Requests waiting for an answer on one connection. Unit: requests. Default: 4096. Why: 16
   * times the deepest pipeline the benchmarks drive (256), and each costs about 1 KiB (its
   * callback and timer), so a connection holds at most about 4 MiB of them.
   */
  readonly requestsInflightMax?: number;
  /**
   * Answer bytes queued in one connection's socket before its requests stop being read.
   * Unit: bytes. Default: 16 MiB. Why: many ranges' worth of answers; a client that reads
   * them never gets near it.
   */
  readonly answerBufferedBytesMax?: number;
  /**
   * Sees every request before it runs (tests inject faults with it, as they do over HTTP):
   * `hang` runs it and never answers; `drop` runs it and breaks the connection instead of
   * answering; `cut-watch` breaks the connection after `messages` event frames of a watch.
   * Default: none.
   */
  readonly intercept?: (op: string, body: Body) => StreamFault | undefined;
}

export type StreamFault =
  | { readonly action: 'hang' | 'drop' }
  | { readonly action: 'cut-watch'; readonly messages: number };

export const CLIENT_STREAM_DEFAULTS = Object.freeze({
  requestsInflightMax: 4096,
  answerBufferedBytesMax: 16 * 1024 * 1024,
});

/** The op names besides the calls of client-calls.ts. */
const HELLO = 'hello';

export class ClientStreamHub {
  private readonly server: WebSocketServer;
  private readonly sessions = new Set<StreamSession>();

  constructor(private readonly o: ClientStreamOptions) {
    // A message holds at most what one connection may have in flight.
    this.server = new WebSocketServer({ noServer: true,
      maxPayload: o.limits.connectionBodyBytesMax, perMessageDeflate: false });
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Handles an HTTP upgrade; false when it is not for the stream (caller decides). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    if (req.url !== CLIENT_STREAM_PATH) return false;
    const connection = this.o.guard.state(req.socket);
    if (connection === undefined) {
      socket.destroy();
      return true;
    }
    this.server.handleUpgrade(req, socket, head, (ws) => {
      const session = new StreamSession(this.o, ws, socket, connection,
        () => this.sessions.delete(session));
      this.sessions.add(session);
    });
    return true;
  }

  /** Closes every stream (the member is stopping). */
  closeAll(reason: string): void {
    for (const session of [...this.sessions]) session.close(1001, reason);
    this.sessions.clear();
  }
}

/** One client's stream. */
export class StreamSession {
  private greeted = false;
  /** The token of the hello or of the latest `auth` frame (docs/protocol.md). */
  private token: string | undefined;
  private closed = false;
  private inflight = 0;
  private inflightBytes = 0;
  private readonly ids = new Set<number>();
  private readonly watchHandles = new Map<number, WatchHandle>();
  private outbox: Uint8Array[] = [];
  private flushedCallbacks: (() => void)[] = [];
  private flushScheduled = false;
  private paused = false;
  private released = false;
  private readonly requestsInflightMax: number;
  private readonly answerBufferedBytesMax: number;
  private readonly frameBytesMax: number;

  constructor(private readonly o: ClientStreamOptions, private readonly ws: WebSocket,
    socket: Duplex, private readonly connection: ConnectionState,
    private readonly onClosed: () => void) {
    this.requestsInflightMax = o.requestsInflightMax
      ?? CLIENT_STREAM_DEFAULTS.requestsInflightMax;
    this.answerBufferedBytesMax = o.answerBufferedBytesMax
      ?? CLIENT_STREAM_DEFAULTS.answerBufferedBytesMax;
    this.frameBytesMax = o.limits.requestBytesMax + FRAME_ENVELOPE_BYTES;
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on('close', () => this.ended());
    ws.on('error', (error) => {
      o.logger.debug({ error: error.message }, 'client stream error');
      this.ended();
    });
    socket.on('drain', () => this.resumeIfRoom());
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.ws.close(code, reason.slice(0, 120));
    this.ended();
  }

  /** Handles one message of the client's. */
  onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.closed) return;
    if (!isBinary) {
      return this.refuseAndClose(1003, 'the stream carries binary msgpack messages only');
    }
    const bytes = Array.isArray(data) ? Buffer.concat(data)
      : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
    // Twice the in-flight bound: frames past the bound get answers of their own (OVERLOADED);
    // a message past this is no client's batch (ours never exceed the bound) and ends the stream.
    const frames = decodeMessage(bytes, 2 * this.requestsInflightMax, this.frameBytesMax);
    for (const frame of frames) {
      if (this.closed) return;
      if (frame.kind === 'bad' && frame.fatal === true) {
        return this.refuseAndClose(1008, frame.error.message, undefined, frame.error.code);
      } else if (frame.kind === 'bad') {
        this.answer(frame.id, { kind: 'error', error: frame.error, outcome: 'failed' });
      } else if (!this.greeted) {
        this.hello(frame);
      } else {
        this.request(frame);
      }
    }
    this.pauseIfFull();
  }

  /** The first frame must be the hello, with a version this member speaks. */
  private hello(frame: RequestFrame): void {
    if (frame.op !== HELLO) {
      return this.refuseAndClose(1002, `the first frame must be {"op":"hello","body":`
        + `{"version":${STREAM_PROTOCOL_VERSION}}} (docs/protocol.md), not "${frame.op}"`,
      frame.id);
    }
    const version = frame.body['version'];
    if (version !== STREAM_PROTOCOL_VERSION) {
      return this.refuseAndClose(1002, `this member speaks version ${STREAM_PROTOCOL_VERSION} `
        + `of the stream protocol, the client asked for ${JSON.stringify(version) ?? 'none'}: `
        + 'upgrade the older side (docs/protocol.md, "Versions")', frame.id);
    }
    const token = frame.body['token'];
    if (token !== undefined && typeof token !== 'string') {
      return this.refuseAndClose(1002, 'hello: token must be a string', frame.id);
    }
    this.token = token;
    this.greeted = true;
    const limits = this.o.limits;
    this.send({ id: frame.id, ok: { version: STREAM_PROTOCOL_VERSION,
      memberId: this.o.calls.core.id, requestsInflightMax: this.requestsInflightMax,
      inflightBytesMax: limits.connectionBodyBytesMax, frameBytesMax: this.frameBytesMax,
      messageBytesMax: limits.connectionBodyBytesMax } });
  }

  private request(frame: RequestFrame): void {
    const { id, op } = frame;
    if (this.ids.has(id) || this.watchHandles.has(id)) {
      return this.answer(id, failed('CONCLAVE_REQUEST_INVALID', `id ${id} is in use on this `
        + 'stream (a request waiting for its answer, or an open watch)'));
    }
    if (this.inflight >= this.requestsInflightMax
      || this.inflightBytes + frame.bytes > this.o.limits.connectionBodyBytesMax) {
      return this.answer(id, failed('CONCLAVE_OVERLOADED', `this stream has ${this.inflight} `
        + `requests (${this.inflightBytes} bytes) waiting for answers, the most it holds `
        + `(${this.requestsInflightMax}, ${this.o.limits.connectionBodyBytesMax} bytes); `
        + 'wait for answers before sending more'));
    }
    if (op === 'watch') return this.watch(frame, this.o.intercept?.(op, frame.body));
    if (op === 'watch-cancel') return this.cancelWatch(frame);
    if (op === 'lease-stream') return this.leaseStream(frame);
    if (op === 'auth') return this.setToken(frame);
    if (!isCallName(op)) {
      return this.answer(id, failed('CONCLAVE_USAGE', `no call "${op.slice(0, 100)}"; see `
        + 'docs/protocol.md'));
    }
    const fault = this.o.intercept?.(op, frame.body);
    this.hold(frame);
    runCall(this.o.calls, op, frame.body, (answer) => {
      this.release(frame);
      if (fault?.action === 'hang') return;
      if (fault?.action === 'drop') return this.ws.terminate();
      this.answer(id, answer);
    }, frame.timeoutMs, this.token);
  }

  /**
   * `{ op: 'auth', body: { token } }`: the calls after it carry this token (a renewed one).
   * Not checked here: each call checks it, so an expired token is told with the call.
   */
  private setToken(frame: RequestFrame): void {
    const token = frame.body['token'];
    const unknown = Object.keys(frame.body).filter((name) => name !== 'token');
    if (typeof token !== 'string' || unknown.length > 0) {
      return this.answer(frame.id, failed('CONCLAVE_REQUEST_INVALID',
        'auth takes { token: <a token from auth-authenticate> } only'));
    }
    this.token = token;
    this.send({ id: frame.id, ok: {} });
  }

  private hold(frame: RequestFrame): void {
    this.ids.add(frame.id);
    this.inflight += 1;
    this.inflightBytes += frame.bytes;
  }

  private release(frame: RequestFrame): void {
    this.ids.delete(frame.id);
    this.inflight -= 1;
    this.inflightBytes -= frame.bytes;
    this.resumeIfRoom();
  }

  /** Keep-alives go to the leader: this call says whether this member is it, right now. */
  private leaseStream(frame: RequestFrame): void {
    const calls = this.o.calls;
    if (Object.keys(frame.body).length > 0) {
      return this.answer(frame.id, failed('CONCLAVE_REQUEST_INVALID',
        'lease-stream takes no fields'));
    }
    // A status call goes through no leader check; ask the core the same way a write would.
    const status = calls.core.status();
    if (status.role === 'leader') return this.send({ id: frame.id, ok: { leader: true } });
    const leaderUrl = status.leaderId === undefined ? undefined
      : calls.clientUrlOf(status.leaderId);
    if (status.leaderId === undefined || leaderUrl === undefined) {
      const error = calls.leaderless?.();
      return this.answer(frame.id, error === undefined
        ? failed('CONCLAVE_NO_QUORUM', `${calls.core.id} knows no leader`)
        : { kind: 'error', error, outcome: 'failed' });
    }
    this.answer(frame.id, { kind: 'redirect', leaderId: status.leaderId, leaderUrl });
  }

  private watch(frame: RequestFrame, fault: StreamFault | undefined): void {
    const { id } = frame;
    let request;
    try {
      request = parseWatchBody(frame.body);
      checkWatch(this.o.calls.core, request.selector, request.fromRevision);
      const denied = readRefusal(this.o.calls, this.token, request.selector);
      if (denied !== undefined) throw denied;
    } catch (error) {
      const coord = error instanceof CoordError ? error
        : new CoordError('CONCLAVE_REQUEST_INVALID', String(error));
      return this.answer(id, { kind: 'error', error: coord, outcome: 'failed' });
    }
    const refusal = watchRefusal(this.o.limits, this.o.watches, this.connection);
    if (refusal !== undefined) {
      return this.answer(id, { kind: 'error', error: refusal.error, outcome: 'failed' });
    }
    this.connection.watchers += 1;
    this.send({ id, ok: { watchId: id } });
    let ended = false;
    let eventFrames = 0;
    const end = (): void => {
      if (ended) return;
      ended = true;
      this.connection.watchers -= 1;
      this.watchHandles.delete(id);
    };
    const handle = this.o.watches.watch(request.selector, request.fromRevision, {
      write: (chunks, flushed) => {
        if (this.closed || ended) return flushed();
        const bytes = Buffer.concat(chunks);
        if (fault?.action === 'cut-watch' && bytes.subarray(0, 16).toString() === '{"kind":"events"'
          && eventFrames++ >= fault.messages) {
          flushed();
          return void setImmediate(() => this.ws.terminate()); // after what was sent
        }
        this.send({ id, watch: bytes }, flushed);
      },
      end: (last) => {
        if (this.closed || ended) return;
        if (last !== undefined) this.send({ id, watch: last });
        this.send({ id, end: true });
        end();
      },
    });
    if (!ended) this.watchHandles.set(id, { close: () => {
      end();
      handle.close();
    } });
  }

  private cancelWatch(frame: RequestFrame): void {
    const watchId = frame.body['watchId'];
    const unknown = Object.keys(frame.body).filter((name) => name !== 'watchId');
    if (typeof watchId !== 'number' || !Number.isSafeInteger(watchId) || unknown.length > 0) {
      return this.answer(frame.id, failed('CONCLAVE_REQUEST_INVALID', 'watch-cancel takes '
        + '{ watchId: <the id of the watch request> } only'));
    }
    const handle = this.watchHandles.get(watchId);
    handle?.close();
    if (handle !== undefined) this.send({ id: watchId, end: true });
    this.send({ id: frame.id, ok: { canceled: handle !== undefined } });
  }

  /** Sends `answer` to request `id` (absent: the frame had no readable id). */
  private answer(id: number | undefined, answer: CallAnswer): void {
    if (answer.kind === 'ok') return this.send({ id: id ?? 0, ok: answer.body });
    this.send({ ...(id === undefined ? {} : { id }), error: errorFields(answer) });
  }

  /** Queues a frame; every frame queued in this turn leaves in one message. */
  private send(frame: AnswerFrame, flushed?: () => void): void {
    if (this.closed) return flushed?.();
    this.outbox.push(encodeFrame(frame));
    if (flushed !== undefined) this.flushedCallbacks.push(flushed);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const frames = this.outbox;
    const callbacks = this.flushedCallbacks;
    this.outbox = [];
    this.flushedCallbacks = [];
    if (this.closed || frames.length === 0) return callbacks.forEach((done) => done());
    const message = frames.length === 1 ? frames[0] as Uint8Array : Buffer.concat(frames);
    this.ws.send(message, { binary: true }, () => callbacks.forEach((done) => done()));
    this.pauseIfFull();
  }

  private pauseIfFull(): void {
    if (this.paused || this.closed || this.hasRoom()) return;
    this.paused = true;
    this.ws.pause();
  }

  private resumeIfRoom(): void {
    if (!this.paused || this.closed || !this.hasRoom()) return;
    this.paused = false;
    this.ws.resume();
  }

  private hasRoom(): boolean {
    return this.inflight < this.requestsInflightMax
      && this.inflightBytes < this.o.limits.connectionBodyBytesMax
      && this.ws.bufferedAmount <= this.answerBufferedBytesMax;
  }

  private refuseAndClose(code: number, message: string, id?: number,
    errorCode: CoordError['code'] = 'CONCLAVE_PROTOCOL'): void {
    const error = new CoordError(errorCode, message);
    const frame = encodeFrame({ ...(id === undefined ? {} : { id }),
      error: { code: error.code, message, outcome: 'failed' } });
    // The close frame follows the answer: the client reads why before the stream ends.
    this.ws.send(frame, { binary: true });
    this.close(code, message);
  }

  /** Frees what the session holds, once. */
  private ended(): void {
    if (this.released) return;
    this.closed = true;
    this.released = true;
    for (const handle of [...this.watchHandles.values()]) handle.close();
    this.watchHandles.clear();
    for (const done of this.flushedCallbacks.splice(0)) done();
    this.outbox = [];
    this.onClosed();
  }
}

function failed(code: CoordError['code'], message: string): CallAnswer {
  return { kind: 'error', error: new CoordError(code, message), outcome: 'failed' };
}

/** An error answer's fields: code, message, outcome, and the leader for a redirect. */
function errorFields(answer: Exclude<CallAnswer, { kind: 'ok' }>):
  Readonly<Record<string, unknown>> {
  if (answer.kind === 'redirect') {
    return { code: 'CONCLAVE_NOT_LEADER', message: `not the leader; the leader is `
      + `${answer.leaderId}`, outcome: 'failed' satisfies CoordOutcome,
    leaderId: answer.leaderId, leaderUrl: answer.leaderUrl };
  }
  return { code: answer.error.code, message: answer.error.message, outcome: answer.outcome };
}
