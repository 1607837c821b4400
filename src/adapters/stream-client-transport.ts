/**
 * The client transport over the multiplexed stream (docs/protocol.md): one WebSocket per
 * member (stream-connection.ts) carrying every call, watch and keep-alive of this client as
 * msgpack frames, answered in any order. The client's default (connect.ts); HTTP/JSON stays
 * for `connect({ transport: 'http' })`.
 *
 * The port's contract holds as over HTTP: `sent` is false only when the request's frame never
 * left this process (the stream was not open, or the frame still waited for room); a member
 * that is not the leader answers with an error naming the leader, which the client follows;
 * a watch ends when its connection breaks, never skipping a frame, and the client resumes it.
 */
import type {
  CallOptions, ClientAnswer, ClientEndpoint, ClientRequest, ClientTransport, KeepAliveAnswer,
  LeaseStream, LeaseStreamOpening, LostAnswer, RefusedAnswer, StreamEnd, TokenSource, WatchFrame,
  WatchOpening, WatchRequest, WatchStream,
} from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import { parseWatchLine } from './client-wire.js';
import { tlsOptions, type HttpTlsOptions } from './http-client-transport.js';
import { serverDeadlineMs } from './request-deadline.js';
import {
  openStreamConnection, type StreamConnection, type StreamOpening,
} from './stream-connection.js';

export interface StreamClientTransportOptions {
  /** For https:// endpoints (wss://). Default: Node's bundled CAs, no client certificate. */
  readonly tls?: HttpTlsOptions;
  /**
   * Largest message read from a member. Unit: bytes. Default: 256 MiB. Why: as HTTP's
   * answerBytesMax, a range over a large store is the biggest answer a member gives.
   */
  readonly messageBytesMax?: number;
  /**
   * Watch frames held for a consumer that has not taken them; past it the watch is canceled
   * and its stream ends after what was held (the client resumes it from there, as after the
   * member's own `slow` cut). Unit: frames. Default: 1024. Why: watches share the
   * connection, so one slow consumer cannot pause it without pausing every call.
   */
  readonly watchFramesBufferedMax?: number;
  /**
   * Watch bytes held for a consumer that has not taken them, as `watchFramesBufferedMax`.
   * Unit: bytes. Default: 4 MiB (the member's own per-watcher bound, --max-watcher-buffer-bytes).
   */
  readonly watchBytesBufferedMax?: number;
  /** Keep-alives waiting for an answer at once. Unit: messages. Default: 4096. */
  readonly keepAlivesInflightMax?: number;
  /** The bearer token (hello, then an `auth` frame when it changes). Default: none. */
  readonly credentials?: TokenSource;
}

export class StreamClientTransport implements ClientTransport {
  private readonly openings = new Map<ClientEndpoint, Promise<StreamOpening>>();
  private readonly open = new Set<StreamConnection>();
  private closed = false;

  constructor(private readonly options: StreamClientTransportOptions = {}) {}

  async call(endpoint: ClientEndpoint, request: ClientRequest, options: CallOptions = {}):
    Promise<ClientAnswer> {
    const connection = await this.connection(endpoint, options.signal);
    if (!('request' in connection)) return connection;
    const [kind, body] = request.kind === 'auth' ? [request.call, request.body]
      : frameOf(request);
    return new Promise((resolve) => {
      const { signal } = options;
      const settle = (answer: ClientAnswer): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      const onAbort = (): void => {
        const sent = connection.sent(id);
        connection.forget(id);
        settle(lostAnswer(endpoint, sent, true, 'aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const id = connection.request(kind, body, {
        frame: (answer) => settle(answer.kind === 'ok'
          ? { kind: 'ok', body: answer.body, servedBy: endpoint }
          : connection.refusal(answer.kind === 'error' ? answer.body : undefined)),
        lost: (sent, detail) => settle(lostAnswer(endpoint, sent, false, detail)),
      }, options.deadlineMs === undefined ? undefined : serverDeadlineMs(options.deadlineMs));
    });
  }

  async openWatch(endpoint: ClientEndpoint, request: WatchRequest, options: CallOptions = {}):
    Promise<WatchOpening> {
    const connection = await this.connection(endpoint, options.signal);
    if (!('request' in connection)) return connection;
    const bounds = { framesMax: this.options.watchFramesBufferedMax ?? 1024,
      bytesMax: this.options.watchBytesBufferedMax ?? 4 * 1024 * 1024 };
    return new Promise((resolve) => {
      let stream: StreamWatch | undefined;
      const { signal } = options;
      const onAbort = (): void => {
        const sent = connection.sent(id);
        connection.forget(id);
        if (sent) connection.request('watch-cancel', { watchId: id }, IGNORED);
        resolve(lostAnswer(endpoint, sent, true, 'aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const id = connection.request('watch', { key: request.key, prefix: request.prefix,
        fromRevision: request.fromRevision }, {
        streaming: true,
        frame: (answer) => {
          if (stream !== undefined) return stream.onAnswer(answer);
          signal?.removeEventListener('abort', onAbort);
          if (answer.kind !== 'ok') {
            return resolve(connection.refusal(answer.kind === 'error' ? answer.body : undefined));
          }
          stream = new StreamWatch(connection, id, bounds);
          resolve({ kind: 'open', stream, servedBy: endpoint });
        },
        lost: (sent, detail) => {
          if (stream !== undefined) return stream.finish();
          signal?.removeEventListener('abort', onAbort);
          resolve(lostAnswer(endpoint, sent, false, detail));
        },
      });
    });
  }

  /** Asks `endpoint` whether it leads now: only the leader takes keep-alives. */
  async openLeaseStream(endpoint: ClientEndpoint, options: CallOptions = {}):
    Promise<LeaseStreamOpening> {
    const connection = await this.connection(endpoint, options.signal);
    if (!('request' in connection)) return connection;
    const { signal } = options;
    return new Promise((resolve) => {
      const settle = (opening: LeaseStreamOpening): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(opening);
      };
      const onAbort = (): void => {
        const sent = connection.sent(id);
        connection.forget(id);
        settle(lostAnswer(endpoint, sent, true, 'aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const id = connection.request('lease-stream', {}, {
        frame: (answer) => {
          if (answer.kind !== 'ok') {
            return settle(connection.refusal(answer.kind === 'error' ? answer.body : undefined));
          }
          const stream = new StreamLeaseStream(connection,
            this.options.keepAlivesInflightMax ?? 4096);
          settle({ kind: 'open', stream, servedBy: endpoint });
        },
        lost: (sent, detail) => settle(lostAnswer(endpoint, sent, false, detail)),
      });
    });
  }

  close(): void {
    this.closed = true;
    for (const connection of [...this.open]) connection.close();
    this.open.clear();
    this.openings.clear();
  }

  /** The open stream to `endpoint`, opened now when there is none. */
  private async connection(endpoint: ClientEndpoint, signal: AbortSignal | undefined):
    Promise<StreamConnection | LostAnswer | RefusedAnswer> {
    if (this.closed) return lostAnswer(endpoint, false, false, 'the transport was closed');
    if (signal?.aborted === true) return lostAnswer(endpoint, false, true, 'aborted');
    let opening = this.openings.get(endpoint);
    if (opening === undefined) {
      opening = this.openConnection(endpoint);
      this.openings.set(endpoint, opening);
    }
    const opened = await raceAbort(opening, signal, endpoint);
    if (opened.kind !== 'open') {
      const ourAbort = opened.kind === 'lost' && opened.aborted;
      if (this.openings.get(endpoint) === opening && !ourAbort) {
        this.openings.delete(endpoint);
      }
      return opened;
    }
    if (!opened.connection.open) {
      if (this.openings.get(endpoint) === opening) this.openings.delete(endpoint);
      return this.connection(endpoint, signal);
    }
    return opened.connection;
  }

  private async openConnection(endpoint: ClientEndpoint): Promise<StreamOpening> {
    const opening = await openStreamConnection(endpoint, {
      tls: tlsOptions(this.options.tls),
      messageBytesMax: this.options.messageBytesMax ?? 256 * 1024 * 1024,
      ...(this.options.credentials === undefined ? {}
        : { credentials: this.options.credentials }),
    });
    if (opening.kind === 'open') {
      const connection = opening.connection;
      if (this.closed) connection.close();
      this.open.add(connection);
      connection.onClose(() => {
        this.open.delete(connection);
        const current = this.openings.get(endpoint);
        void current?.then((o) => {
          if (o.kind === 'open' && o.connection === connection
            && this.openings.get(endpoint) === current) this.openings.delete(endpoint);
        });
      });
    }
    return opening;
  }
}

/** A request's op and body on the stream. */
function frameOf(request: ClientRequest): [string, Readonly<Record<string, unknown>>] {
  const { kind, ...body } = request;
  return [kind, body];
}

const IGNORED = { frame: (): void => undefined, lost: (): void => undefined };

/** A watch on a shared stream: its frames, held for the consumer within `framesMax`. */
class StreamWatch implements WatchStream {
  private readonly frames: { frame: WatchFrame | StreamEnd; bytes: number }[] = [];
  private heldBytes = 0;
  private waiting: ((frame: WatchFrame | StreamEnd) => void) | undefined;
  private ended = false;
  private readonly decoder = new TextDecoder();

  constructor(private readonly connection: StreamConnection, private readonly id: number,
    private readonly bounds: { readonly framesMax: number; readonly bytesMax: number }) {}

  next(): Promise<WatchFrame | StreamEnd> {
    const held = this.frames.shift();
    if (held !== undefined) {
      this.heldBytes -= held.bytes;
      return Promise.resolve(held.frame);
    }
    if (this.ended) return Promise.resolve({ kind: 'end' });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  close(): void {
    if (this.ended) return;
    this.cancel();
    this.finish();
  }

  onAnswer(answer: { kind: string; bytes?: Uint8Array }): void {
    if (this.ended) return;
    if (answer.kind === 'end') return this.finish();
    if (answer.kind !== 'watch' || answer.bytes === undefined) return;
    // Each watch frame holds whole lines of the HTTP watch stream's JSON (watch-hub.ts).
    const text = this.decoder.decode(answer.bytes);
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const frame = parseWatchLine(line);
      if (frame instanceof CoordError) {
        this.cancel();
        this.push({ kind: 'end', error: frame });
        return this.finish();
      }
      this.push(frame, line.length);
    }
    if (this.frames.length > this.bounds.framesMax || this.heldBytes > this.bounds.bytesMax) {
      // A consumer this far behind: the watch ends after what is held, and resumes from there.
      this.cancel();
      this.finish();
    }
  }

  /** The stream is over: readers see `end` after what was held. */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.push({ kind: 'end' });
    this.connection.forget(this.id);
  }

  private cancel(): void {
    this.connection.forget(this.id);
    if (this.connection.open) {
      this.connection.request('watch-cancel', { watchId: this.id }, IGNORED);
    }
  }

  private push(frame: WatchFrame | StreamEnd, bytes = 0): void {
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting(frame);
    } else {
      this.frames.push({ frame, bytes });
      this.heldBytes += bytes;
    }
  }
}

/** Keep-alives as calls on the shared stream; it closes once the member stops leading. */
class StreamLeaseStream implements LeaseStream {
  private readonly pending = new Set<(answer: KeepAliveAnswer) => void>();
  private closed = false;

  constructor(private readonly connection: StreamConnection,
    private readonly inflightMax: number) {
    connection.onClose(() => this.close());
  }

  get open(): boolean {
    return !this.closed && this.connection.open;
  }

  keepAlive(leaseId: number): Promise<KeepAliveAnswer> {
    if (!this.open) return Promise.resolve({ kind: 'lost', detail: 'the stream is closed' });
    if (this.pending.size >= this.inflightMax) {
      return Promise.resolve({ kind: 'refused', error: new CoordError('CONCLAVE_UNAVAILABLE',
        `more than ${this.inflightMax} keep-alives wait on this stream`) });
    }
    return new Promise((resolve) => {
      const done = (answer: KeepAliveAnswer): void => {
        if (!this.pending.delete(done)) return;
        resolve(answer);
      };
      this.pending.add(done);
      this.connection.request('lease-keepalive', { leaseId }, {
        frame: (answer) => {
          if (answer.kind === 'ok') return done({ kind: 'ok', body: answer.body });
          const refused = this.connection.refusal(answer.kind === 'error' ? answer.body
            : undefined);
          // Keep-alives go to the leader only: a deposed one sends the client on.
          const code = refused.error.code;
          if (code === 'CONCLAVE_NOT_LEADER' || code === 'CONCLAVE_NO_QUORUM'
            || code === 'CONCLAVE_NO_LEADER') this.close();
          done({ kind: 'refused', error: refused.error });
        },
        lost: (_sent, detail) => done({ kind: 'lost', detail }),
      });
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const done of [...this.pending]) done({ kind: 'lost', detail: 'the stream closed' });
  }
}

function lostAnswer(endpoint: ClientEndpoint, sent: boolean, aborted: boolean,
  detail: string): LostAnswer {
  return { kind: 'lost', sent, aborted, detail, servedBy: endpoint };
}

async function raceAbort(opening: Promise<StreamOpening>, signal: AbortSignal | undefined,
  endpoint: ClientEndpoint): Promise<StreamOpening> {
  if (signal === undefined) return opening;
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(lostAnswer(endpoint, false, true, 'aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    void opening.then((opened) => {
      signal.removeEventListener('abort', onAbort);
      resolve(opened);
    });
  });
}
