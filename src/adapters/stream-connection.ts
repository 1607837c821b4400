/**
 * One multiplexed stream to one member (docs/protocol.md): a WebSocket at /v1/stream (ws:// for
 * an http:// endpoint, wss:// for https://) that says hello with the protocol version, then
 * carries msgpack request frames, each tagged with an id of this connection that its answer
 * repeats. Frames queued in one turn of the event loop leave in one message (split at the
 * member's message and in-flight bounds, which its hello answer states); frames beyond the
 * member's in-flight bounds wait here, in order, until answers free room.
 *
 * What `sent` means: a frame was handed to the open WebSocket. When the connection ends,
 * every request waiting for its answer is told whether it was sent.
 */
import { Packr, Unpackr } from 'msgpackr';
import WebSocket from 'ws';
import type {
  ClientEndpoint, LostAnswer, RefusedAnswer, TokenSource,
} from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import { errorAnswer } from './client-wire.js';

export const STREAM_PATH = '/v1/stream';
export const STREAM_VERSION = 1;

/** An answer frame as it arrived, after the checks of `onFrame`. */
export type StreamAnswer =
  | { readonly kind: 'ok'; readonly body: unknown }
  | { readonly kind: 'error'; readonly body: unknown }
  | { readonly kind: 'watch'; readonly bytes: Uint8Array }
  | { readonly kind: 'end' };

/** Whoever waits on an id: called for every frame with that id, and once when the link ends. */
export interface StreamListener {
  frame(answer: StreamAnswer): void;
  /** The connection ended; `sent`: the request's frame had left. */
  lost(sent: boolean, detail: string): void;
  /** A watch: after its `ok`, frames keep coming on its id until `end`. */
  readonly streaming?: boolean;
}

export interface StreamConnectionOptions {
  /** node:tls options for wss:// (ca, cert, key, servername). */
  readonly tls: Readonly<Record<string, unknown>>;
  /** Largest message read from the member. Unit: bytes. */
  readonly messageBytesMax: number;
  /** The bearer token: sent in the hello, and again (an `auth` frame) whenever it changes. */
  readonly credentials?: TokenSource;
}

interface Outgoing {
  readonly id: number;
  readonly bytes: Uint8Array;
  sent: boolean;
}

/** The member's bounds, from its hello answer (docs/protocol.md, "Limits"). */
interface MemberBounds {
  readonly requestsInflightMax: number;
  readonly inflightBytesMax: number;
  readonly messageBytesMax: number;
}

const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, structuredClone: false,
  int64AsType: 'number' });
const packr = new Packr({ useRecords: false, variableMapSize: true,
  ...{ skipValues: [undefined] } });

export type StreamOpening =
  | { readonly kind: 'open'; readonly connection: StreamConnection }
  | RefusedAnswer
  | LostAnswer;

/** Opens the stream at `endpoint` and says hello; resolves once it is open or has failed. */
export function openStreamConnection(endpoint: ClientEndpoint,
  options: StreamConnectionOptions): Promise<StreamOpening> {
  const url = `${endpoint.replace(/^http/, 'ws')}${STREAM_PATH}`;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (opening: StreamOpening): void => {
      if (settled) return;
      settled = true;
      resolve(opening);
    };
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, { ...options.tls, maxPayload: options.messageBytesMax,
        perMessageDeflate: false });
    } catch (error) {
      return settle(lost(endpoint, error instanceof Error ? error.message : String(error)));
    }
    ws.on('unexpected-response', (_request, response) => {
      ws.terminate();
      const status = response.statusCode ?? 0;
      response.resume();
      settle({ kind: 'refused', servedBy: endpoint, error: new CoordError('CONCLAVE_PROTOCOL',
        `${endpoint} answered the stream upgrade with HTTP ${status}: it does not serve `
        + `${STREAM_PATH} (an older member?); use connect({ transport: 'http' })`) });
    });
    ws.on('error', (error) => settle(lost(endpoint, error.message, error)));
    ws.on('close', () => settle(lost(endpoint, 'the stream closed during its hello')));
    ws.on('open', () => {
      const connection = new StreamConnection(ws, endpoint, options.credentials);
      connection.hello().then((answer) => {
        if (answer === undefined) return settle({ kind: 'open', connection });
        ws.terminate();
        settle(answer);
      }, () => settle(lost(endpoint, 'the hello failed')));
    });
  });
}

export class StreamConnection {
  private readonly listeners = new Map<number, StreamListener>();
  private readonly waiting: Outgoing[] = [];
  private readonly inflight = new Map<number, Outgoing>();
  private inflightBytes = 0;
  private flushScheduled = false;
  private nextId = 1;
  private closedDetail: string | undefined;
  private readonly closeListeners: (() => void)[] = [];
  private bounds: MemberBounds = { requestsInflightMax: 64, inflightBytesMax: 1024 * 1024,
    messageBytesMax: 1024 * 1024 };

  /** The token the member holds for this connection (the hello's, or the last auth frame's). */
  private sentToken: string | undefined;

  constructor(private readonly ws: WebSocket, readonly endpoint: ClientEndpoint,
    private readonly credentials?: TokenSource) {
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on('close', (code, reason) => this.ended(`the stream closed (${code}`
      + `${reason.length > 0 ? `: ${reason.toString().slice(0, 200)}` : ''})`));
    ws.on('error', (error) => this.ended(error.message));
  }

  get open(): boolean {
    return this.closedDetail === undefined && this.ws.readyState === WebSocket.OPEN;
  }

  /** Says hello; undefined once the member accepted, else its refusal. */
  hello(): Promise<RefusedAnswer | LostAnswer | undefined> {
    return new Promise((resolve) => {
      this.listeners.set(0, {
        frame: (answer) => {
          this.listeners.delete(0);
          if (answer.kind === 'ok') {
            this.bounds = boundsOf(answer.body, this.bounds);
            return resolve(undefined);
          }
          resolve(this.refusal(answer.kind === 'error' ? answer.body : undefined));
        },
        lost: (_sent, detail) => resolve(lost(this.endpoint, detail)),
      });
      this.sentToken = this.credentials?.token();
      this.ws.send(packr.pack({ id: 0, op: 'hello', body: { version: STREAM_VERSION,
        ...(this.sentToken === undefined ? {} : { token: this.sentToken }) } }));
    });
  }

  /**
   * Sends one request frame; `listener` hears its answers. Returns its id (to cancel).
   * `timeoutMs`: the deadline the member is to answer by (docs/protocol.md), if any.
   */
  request(op: string, body: Readonly<Record<string, unknown>>, listener: StreamListener,
    timeoutMs?: number): number {
    const id = this.nextId++;
    if (this.closedDetail !== undefined) {
      listener.lost(false, this.closedDetail);
      return id;
    }
    this.renewToken();
    this.listeners.set(id, listener);
    const frame = timeoutMs === undefined ? { id, op, body } : { id, op, body, timeoutMs };
    this.waiting.push({ id, bytes: packr.pack(frame), sent: false });
    this.schedule();
    return id;
  }

  /**
   * Queues an `auth` frame ahead of the next request when the token changed (a renewal): the
   * member reads frames in order, so the request after it carries the new token.
   */
  private renewToken(): void {
    const token = this.credentials?.token();
    if (token === undefined || token === this.sentToken) return;
    this.sentToken = token;
    const id = this.nextId++;
    this.listeners.set(id, { frame: () => undefined, lost: () => undefined });
    this.waiting.push({ id, bytes: packr.pack({ id, op: 'auth', body: { token } }),
      sent: false });
  }

  /** Stops listening on `id` (aborted, or its watch closed): later frames are dropped. */
  forget(id: number): void {
    this.listeners.delete(id);
    // A frame that left holds its room at the member until the member answers it.
    const at = this.waiting.findIndex((o) => o.id === id);
    if (at >= 0) this.waiting.splice(at, 1);
  }

  /** Whether the frame of `id` left (false once forgotten before it did). */
  sent(id: number): boolean {
    return this.inflight.get(id)?.sent === true;
  }

  close(): void {
    if (this.closedDetail !== undefined) return;
    this.ws.close(1000, 'client closed');
    this.ended('the client closed the stream');
  }

  onClose(listener: () => void): void {
    if (this.closedDetail !== undefined) listener();
    else this.closeListeners.push(listener);
  }

  /** The refusal of an error frame's body (its leader, when it named one). */
  refusal(body: unknown): RefusedAnswer {
    return errorAnswer(0, body, this.endpoint);
  }

  private schedule(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // Every frame queued in this turn of the event loop leaves together.
    setImmediate(() => this.flush());
  }

  /** Moves waiting frames within the member's bounds into messages. */
  private flush(): void {
    this.flushScheduled = false;
    if (!this.open) return;
    const { requestsInflightMax, inflightBytesMax, messageBytesMax } = this.bounds;
    let message: Uint8Array[] = [];
    let messageBytes = 0;
    while (this.waiting.length > 0) {
      const next = this.waiting[0] as Outgoing;
      if (this.inflight.size >= requestsInflightMax
        || (this.inflight.size > 0 && this.inflightBytes + next.bytes.length > inflightBytesMax)) {
        break;
      }
      if (message.length > 0 && messageBytes + next.bytes.length > messageBytesMax) {
        this.ws.send(Buffer.concat(message));
        message = [];
        messageBytes = 0;
      }
      this.waiting.shift();
      next.sent = true;
      this.inflight.set(next.id, next);
      this.inflightBytes += next.bytes.length;
      message.push(next.bytes);
      messageBytes += next.bytes.length;
    }
    if (message.length > 0) this.ws.send(message.length === 1 ? message[0] as Uint8Array
      : Buffer.concat(message));
  }

  /** The request `id` needs no more answers: its room is free. */
  private done(id: number): void {
    const out = this.inflight.get(id);
    if (out === undefined) return;
    this.inflight.delete(id);
    this.inflightBytes -= out.bytes.length;
    if (this.waiting.length > 0) this.schedule();
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (!isBinary) return this.protocolBroken('the member sent a text message');
    try {
      unpackr.unpackMultiple(data, (value: unknown) => {
        this.onFrame(value);
      });
    } catch (error) {
      this.protocolBroken(`the member sent a message that is not msgpack: ${String(error)}`);
    }
  }

  private onFrame(value: unknown): void {
    const frame = (typeof value === 'object' && value !== null ? value : {}) as
      Record<string, unknown>;
    const id = frame['id'];
    if (typeof id !== 'number') {
      // An error without an id: the member could not read something we sent.
      if (frame['error'] !== undefined) return this.protocolBroken(String(this.refusal(
        { error: frame['error'] }).error.message));
      return;
    }
    const listener = this.listeners.get(id);
    if (listener === undefined) {
      // Answered after it was forgotten: dropped, and its room is free again.
      if (!('watch' in frame)) this.done(id);
      return;
    }
    if ('watch' in frame) {
      const bytes = frame['watch'];
      if (!(bytes instanceof Uint8Array)) return this.protocolBroken('a watch frame without bytes');
      return listener.frame({ kind: 'watch', bytes });
    }
    if (frame['end'] === true) {
      this.listeners.delete(id);
      this.done(id);
      return listener.frame({ kind: 'end' });
    }
    const answer: StreamAnswer = 'error' in frame ? { kind: 'error', body: frame }
      : { kind: 'ok', body: frame['ok'] };
    // The member holds no room for an answered request (an open watch included).
    this.done(id);
    if (!(answer.kind === 'ok' && listener.streaming === true)) this.listeners.delete(id);
    listener.frame(answer);
  }

  private protocolBroken(detail: string): void {
    this.ws.terminate();
    this.ended(detail);
  }

  private ended(detail: string): void {
    if (this.closedDetail !== undefined) return;
    this.closedDetail = detail;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const [id, listener] of listeners) {
      listener.lost(this.inflight.get(id)?.sent === true, detail);
    }
    this.inflight.clear();
    this.waiting.length = 0;
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}

function boundsOf(body: unknown, fallback: MemberBounds): MemberBounds {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const positive = (value: unknown, otherwise: number): number =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 ? value : otherwise;
  return {
    requestsInflightMax: positive(b['requestsInflightMax'], fallback.requestsInflightMax),
    inflightBytesMax: positive(b['inflightBytesMax'], fallback.inflightBytesMax),
    messageBytesMax: positive(b['messageBytesMax'], fallback.messageBytesMax),
  };
}

function lost(endpoint: ClientEndpoint, detail: string, cause?: unknown): LostAnswer {
  return { kind: 'lost', sent: false, aborted: false, detail, servedBy: endpoint,
    ...(cause === undefined ? {} : { cause }) };
}
