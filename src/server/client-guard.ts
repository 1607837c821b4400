/**
 * The client port's door: how many connections are open, how many request body bytes each
 * connection and all of them hold, how long a body may take to arrive, and what a client that
 * breaks HTTP itself is told. Each refusal is an answer with a documented code (docs/api.md,
 * "Limits") followed by closing the connection, so a hostile sender cannot keep pushing bytes.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { CoordError, type CoordErrorCode } from '../errors.js';
import type { ClientLimits } from './client-limits.js';

/** What one connection holds. */
export interface ConnectionState {
  /** Bytes of request bodies read on it and not yet answered. */
  bodyBytes: number;
  /** Watch streams opened on it and not yet ended. */
  watchers: number;
}

/** A request refused at the door: the HTTP status, the error, and that the connection closes. */
export class Refusal extends Error {
  constructor(readonly status: number, readonly error: CoordError) {
    super(error.message);
  }
}

export class ClientGuard {
  private readonly states = new WeakMap<Socket, ConnectionState>();
  /** Connections answered 503 at the connection limit: what they send is ignored. */
  private readonly refusedSockets = new WeakSet<Socket>();
  private connectionsValue = 0;
  private bodyBytesValue = 0;
  private refusedValue = 0;

  constructor(private readonly limits: ClientLimits) {}

  /** Client connections open (refused ones not counted). */
  get connections(): number {
    return this.connectionsValue;
  }

  /** Request body bytes held over all connections. Unit: bytes. */
  get bodyBytesInflight(): number {
    return this.bodyBytesValue;
  }

  /** Connections and requests refused at a limit so far. */
  get refused(): number {
    return this.refusedValue;
  }

  /**
   * Installs the door on `server`: connection limit, timeouts, HTTP-level errors. `tls`: the
   * server speaks HTTPS, so a connection over the limit is closed without an answer (it has
   * not even shaken hands).
   */
  install(server: Server, tls = false): void {
    server.headersTimeout = this.limits.headerTimeoutMs;
    // Node's own whole-request timeout is only a backstop behind `bodyTimeoutMs`.
    server.requestTimeout = this.limits.headerTimeoutMs + this.limits.bodyTimeoutMs + 5000;
    server.keepAliveTimeout = this.limits.idleTimeoutMs;
    server.on('connection', (socket: Socket) => this.accept(socket, tls));
    // Expect: 100-continue: a body announced over the limit is refused before it is sent.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      const declared = Number(req.headers['content-length'] ?? '0');
      if (declared <= this.limits.requestBytesMax) {
        res.writeContinue();
        server.emit('request', req, res);
        return;
      }
      this.refusedValue += 1;
      const error = new CoordError('CONCLAVE_REQUEST_INVALID', `the body of ${declared} bytes `
        + `is over the limit of ${this.limits.requestBytesMax} (--max-request-bytes)`);
      const body = JSON.stringify({ error: { code: error.code, message: error.message,
        outcome: 'failed' } });
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close',
        'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
      answerClientError(error, socket);
    });
  }

  /**
   * The state of a connection; undefined for one refused at the connection limit. (A socket
   * that did not pass `install`'s door, as in tests, gets a state on first use.)
   */
  state(socket: Socket): ConnectionState | undefined {
    if (this.refusedSockets.has(socket)) return undefined;
    let state = this.states.get(socket);
    if (state === undefined) {
      state = { bodyBytes: 0, watchers: 0 };
      this.states.set(socket, state);
    }
    return state;
  }

  /** A new connection: counted, or answered 503 and closed when the limit is reached. */
  private accept(socket: Socket, tls: boolean): void {
    if (this.connectionsValue >= this.limits.connectionsMax) {
      this.refusedValue += 1;
      this.refusedSockets.add(socket);
      socket.on('error', () => undefined);
      if (tls) return void socket.destroy();
      const error = new CoordError('CONCLAVE_LIMIT_EXCEEDED', `this member has the most client `
        + `connections it takes (${this.limits.connectionsMax}, --max-connections); retry later `
        + 'or on another member');
      socket.end(rawAnswer(503, 'Service Unavailable', error), () => socket.destroy());
      return;
    }
    this.connectionsValue += 1;
    this.states.set(socket, { bodyBytes: 0, watchers: 0 });
    socket.once('close', () => {
      this.connectionsValue -= 1;
    });
  }

  /**
   * Reads the request body within every limit; the bytes count against the connection and
   * the total until the response closes. Rejects with a `Refusal` (answer it, then close the
   * connection), or resolves undefined when the client went away first.
   */
  readBody(req: IncomingMessage, res: ServerResponse): Promise<Uint8Array | undefined> {
    const limits = this.limits;
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limits.requestBytesMax) {
      return Promise.reject(this.refuse(413, 'CONCLAVE_REQUEST_INVALID', `the body of `
        + `${declared} bytes is over the limit of ${limits.requestBytesMax} `
        + '(--max-request-bytes)'));
    }
    const connection = this.state(req.socket as Socket) ?? { bodyBytes: 0, watchers: 0 };
    let held = 0;
    res.once('close', () => {
      connection.bodyBytes -= held;
      this.bodyBytesValue -= held;
      held = 0;
    });
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const stop = (refusal: Refusal | undefined): void => {
        clearTimeout(timer);
        req.off('data', onData).off('end', onEnd).off('error', onGone).off('aborted', onGone);
        if (refusal === undefined) resolve(undefined);
        else reject(refusal);
      };
      const timer = setTimeout(() => stop(this.refuse(408, 'CONCLAVE_TIMEOUT', `the body did `
        + `not arrive within ${limits.bodyTimeoutMs} ms (--body-timeout-ms); nothing was `
        + 'proposed')), limits.bodyTimeoutMs);
      const onData = (chunk: Buffer): void => {
        const refusal = this.admitChunk(held, chunk.length, connection);
        if (refusal !== undefined) return stop(refusal);
        held += chunk.length;
        connection.bodyBytes += chunk.length;
        this.bodyBytesValue += chunk.length;
        chunks.push(chunk);
      };
      const onEnd = (): void => {
        clearTimeout(timer);
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      };
      const onGone = (): void => stop(undefined);
      req.on('data', onData).on('end', onEnd).on('error', onGone).on('aborted', onGone);
    });
  }

  private admitChunk(held: number, bytes: number, connection: ConnectionState)
    : Refusal | undefined {
    const limits = this.limits;
    if (held + bytes > limits.requestBytesMax) {
      return this.refuse(413, 'CONCLAVE_REQUEST_INVALID', `the body is over the limit of `
        + `${limits.requestBytesMax} bytes (--max-request-bytes)`);
    }
    if (connection.bodyBytes + bytes > limits.connectionBodyBytesMax) {
      return this.refuse(429, 'CONCLAVE_LIMIT_EXCEEDED', `this connection holds more request `
        + `body bytes than the ${limits.connectionBodyBytesMax} one connection may `
        + '(--max-connection-body-bytes); wait for answers before sending more');
    }
    if (this.bodyBytesValue + bytes > limits.inflightBodyBytesMax) {
      return this.refuse(503, 'CONCLAVE_LIMIT_EXCEEDED', `this member holds the most request `
        + `body bytes it takes at once (${limits.inflightBodyBytesMax}, `
        + '--max-inflight-body-bytes); retry later or on another member');
    }
    return undefined;
  }

  private refuse(status: number, code: CoordErrorCode, message: string): Refusal {
    this.refusedValue += 1;
    return new Refusal(status, new CoordError(code, message));
  }
}

/** An error answer written straight to a socket (no request object to answer through). */
function rawAnswer(status: number, reason: string, error: CoordError): string {
  const body = JSON.stringify({ error: { code: error.code, message: error.message,
    outcome: 'failed' } });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Node's parser refused what arrived (not HTTP, a header too large, headers too slow): answer
 * with a documented code where the socket can still take it, then close.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const code = error.code ?? '';
  const [status, reason, answer] =
    code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT'
      ? [408, 'Request Timeout', new CoordError('CONCLAVE_TIMEOUT', 'the request headers did not '
        + 'arrive in time (--header-timeout-ms)')] as const
      : code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', new CoordError('CONCLAVE_REQUEST_INVALID',
          'the request headers are over 16 KiB')] as const
        : [400, 'Bad Request', new CoordError('CONCLAVE_PROTOCOL', `not a valid HTTP/1.1 `
          + `request (${code || error.message})`)] as const;
  socket.end(rawAnswer(status, reason, answer), () => socket.destroy());
}
