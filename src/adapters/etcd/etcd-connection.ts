/**
 * A connection to an etcd cluster over its v3 gRPC API (@grpc/grpc-js, with the schema in
 * etcd-schema.ts encoded by protobufjs): unary calls and the two bidirectional streams (watch,
 * lease keep-alive), TLS, and etcd's token authentication. It decides nothing about retries or
 * outcomes: a failed call rejects with an `EtcdCallError` carrying the gRPC status and whether
 * the request can have reached a member (`mayHaveArrived`), and the caller (the etcd backend, a
 * benchmark) decides. The one retry it makes itself is after etcd refused an expired auth
 * token: that request was refused before anything ran, so repeating it is safe.
 *
 * Endpoints: one gRPC channel per endpoint (each one HTTP/2 connection multiplexing every call
 * and stream, as etcd's own clients do); calls go to the current endpoint and move to the next
 * one after a transport failure. Any etcd member serves any call (followers forward writes).
 *
 * Values: message objects as protobufjs gives them with `longs: String`: every 64-bit integer
 * (revisions, lease ids, member ids) is a decimal string, because etcd's lease and member ids
 * use all 64 bits; bytes are Buffers; absent fields take their defaults.
 */
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { CoordError } from '../../errors.js';
import { ETCD_METHODS, ETCD_SCHEMA, ETCD_STREAMS, type EtcdStreamName,
  type EtcdUnaryName } from './etcd-schema.js';

export interface EtcdTlsOptions {
  /** CA certificate(s) to trust, PEM. Default: the system's trusted CAs. */
  readonly ca?: string | Buffer;
  /** Client certificate and key, PEM, when etcd requires client certificates. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  /** The name the server certificate must carry. Default: the endpoint's host. */
  readonly servername?: string;
}

export interface EtcdConnectionOptions {
  /** `host:port`, `http://host:port` or `https://host:port` of one or more members. */
  readonly endpoints: readonly string[];
  /** Set for TLS (also implied by an `https://` endpoint). */
  readonly tls?: EtcdTlsOptions;
  /** etcd's token authentication: the user to authenticate as. */
  readonly auth?: { readonly user: string; readonly password: string };
  /**
   * Deadline of a unary call without one of its own. Unit: ms. Default: 5000 (etcd's own
   * clients default to no deadline; a coordination client that cannot hear back in 5 s has
   * lost the cluster, and must say so).
   */
  readonly callTimeoutMs?: number;
}

export type EtcdMessage = Record<string, unknown>;

export interface EtcdCallOptions {
  /** Overrides `callTimeoutMs`. Unit: ms. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** A gRPC failure, with what it means for a write. */
export class EtcdCallError extends CoordError {
  override name = 'EtcdCallError';
  constructor(
    readonly method: string,
    readonly endpoint: string,
    readonly grpcCode: grpc.status,
    readonly details: string,
    /** False only when the request certainly never reached a member (no connection). */
    readonly mayHaveArrived: boolean,
  ) {
    // The backend maps gRPC codes to Conclave's (a permission refusal, a compaction...).
    super('CONCLAVE_UNAVAILABLE',
      `etcd ${method} at ${endpoint}: ${grpc.status[grpcCode] ?? grpcCode}: ${details}`,
      { outcome: mayHaveArrived ? 'unknown' : 'failed' });
  }
}

/** A bidirectional stream: write requests, read decoded answers. */
export interface EtcdStream {
  write(request: EtcdMessage): boolean;
  onMessage(listener: (answer: EtcdMessage) => void): void;
  /** Called once when the stream ends, with the error unless the stream was ended by `end()`. */
  onEnd(listener: (error: EtcdCallError | undefined) => void): void;
  end(): void;
}

const DECODE = { longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true };
const INVALID_TOKEN = /invalid auth token|auth token is not provided/i;
const CALL_TIMEOUT_MS_DEFAULT = 5_000;

interface Codec {
  serialize(value: EtcdMessage): Buffer;
  deserialize(bytes: Buffer): EtcdMessage;
}

/** The schema parsed once per process, on first use. */
let schemaRoot: protobuf.Root | undefined;
function codecOf(name: string): Codec {
  schemaRoot ??= protobuf.parse(ETCD_SCHEMA, { keepCase: true }).root;
  const type = schemaRoot.lookupType(`etcdserverpb.${name}`);
  return {
    serialize: (value) => Buffer.from(type.encode(type.fromObject(value)).finish()),
    deserialize: (bytes) => type.toObject(type.decode(bytes), DECODE) as EtcdMessage,
  };
}

interface Endpoint {
  readonly address: string;
  readonly client: grpc.Client;
}

export class EtcdConnection {
  private readonly endpoints: Endpoint[];
  private current = 0;
  private token: string | undefined;
  private authenticating: Promise<string> | undefined;
  /** Tokens fetched so far (the first, then one per renewal). */
  tokensFetched = 0;
  private readonly callTimeoutMs: number;
  private closed = false;

  constructor(private readonly options: EtcdConnectionOptions) {
    if (options.endpoints.length === 0) {
      throw new CoordError('CONCLAVE_CONFIG_INVALID', 'etcd: give at least one endpoint');
    }
    this.callTimeoutMs = options.callTimeoutMs ?? CALL_TIMEOUT_MS_DEFAULT;
    this.endpoints = options.endpoints.map((e) => this.endpointOf(e));
  }

  /** The endpoint calls go to now. */
  get endpoint(): string {
    return this.endpoints[this.current]!.address;
  }

  /** One unary call; rejects with EtcdCallError. */
  async call(name: EtcdUnaryName, request: EtcdMessage,
    options: EtcdCallOptions = {}): Promise<EtcdMessage> {
    const metadata = await this.metadata(name);
    try {
      return await this.callOnce(name, request, metadata, options);
    } catch (error) {
      if (!(error instanceof EtcdCallError) || !this.refusedToken(error)) throw error;
      this.token = undefined;
      return this.callOnce(name, request, await this.metadata(name), options);
    }
  }

  /** Opens a bidirectional stream (watch, lease keep-alive) on the current endpoint. */
  async stream(name: EtcdStreamName): Promise<EtcdStream> {
    const spec = ETCD_STREAMS[name];
    const request = codecOf(spec.request);
    const answer = codecOf(spec.answer);
    const metadata = await this.metadata(name);
    const endpoint = this.endpoints[this.current]!;
    const path = `/etcdserverpb.${spec.service}/${spec.method}`;
    const call = endpoint.client.makeBidiStreamRequest(path, request.serialize,
      answer.deserialize, metadata, {});
    let ended = false;
    let endedByUs = false;
    const endListeners: ((error: EtcdCallError | undefined) => void)[] = [];
    const finish = (error: EtcdCallError | undefined): void => {
      if (ended) return;
      ended = true;
      for (const listener of endListeners) listener(endedByUs ? undefined : error);
    };
    call.on('error', (error: grpc.ServiceError) => {
      if (!endedByUs) this.noteFailure(endpoint, error.code);
      // A stream refused for its token is not retried here: the next one fetches a new token.
      if (this.options.auth !== undefined && INVALID_TOKEN.test(error.details ?? '')) {
        this.token = undefined;
      }
      finish(this.errorOf(`${spec.service}/${spec.method}`, endpoint, error));
    });
    call.on('end', () => finish(undefined));
    return {
      write: (value) => !ended && call.write(value),
      onMessage: (listener) => call.on('data', listener),
      onEnd: (listener) => endListeners.push(listener),
      end: () => {
        endedByUs = true;
        call.cancel();
        finish(undefined);
      },
    };
  }

  /**
   * Drops the auth token, so the next call or stream fetches a new one: etcd refused a
   * stream's work for its token (a watch is canceled "permission denied" when its token has
   * expired, rather than failing the call).
   */
  forgetToken(): void {
    this.token = undefined;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const e of this.endpoints) e.client.close();
  }

  private callOnce(name: EtcdUnaryName, request: EtcdMessage, metadata: grpc.Metadata,
    options: EtcdCallOptions): Promise<EtcdMessage> {
    const spec = ETCD_METHODS[name];
    const endpoint = this.endpoints[this.current]!;
    const path = `/etcdserverpb.${spec.service}/${spec.method}`;
    const deadline = Date.now() + (options.timeoutMs ?? this.callTimeoutMs);
    return new Promise((resolve, reject) => {
      if (options.signal?.aborted === true) {
        reject(new EtcdCallError(path, endpoint.address, grpc.status.CANCELLED,
          'aborted before it was sent', false));
        return;
      }
      const call = endpoint.client.makeUnaryRequest(path, codecOf(spec.request).serialize,
        codecOf(spec.answer).deserialize, request, metadata, { deadline },
        (error: grpc.ServiceError | null, value?: EtcdMessage) => {
          options.signal?.removeEventListener('abort', abort);
          if (error === null && value !== undefined) return resolve(value);
          const failure = error ?? Object.assign(new Error('no answer'),
            { code: grpc.status.INTERNAL, details: 'no answer', metadata });
          this.noteFailure(endpoint, failure.code);
          reject(this.errorOf(path, endpoint, failure as grpc.ServiceError));
        });
      const abort = (): void => call.cancel();
      options.signal?.addEventListener('abort', abort, { once: true });
    });
  }

  /** The auth token for every call but Authenticate itself, fetched once and on expiry. */
  private async metadata(name: EtcdUnaryName | EtcdStreamName): Promise<grpc.Metadata> {
    const metadata = new grpc.Metadata();
    const auth = this.options.auth;
    if (auth === undefined || name === 'authenticate') return metadata;
    if (this.token === undefined) {
      this.authenticating ??= this.callOnce('authenticate',
        { name: auth.user, password: auth.password }, new grpc.Metadata(), {})
        .then((answer) => {
          this.tokensFetched++;
          return String(answer['token'] ?? '');
        })
        .finally(() => (this.authenticating = undefined));
      this.token = await this.authenticating;
    }
    metadata.set('token', this.token);
    return metadata;
  }

  private refusedToken(error: EtcdCallError): boolean {
    return this.options.auth !== undefined && INVALID_TOKEN.test(error.details);
  }

  /** After a transport failure, later calls go to the next endpoint. */
  private noteFailure(endpoint: Endpoint, code: grpc.status): void {
    if (code !== grpc.status.UNAVAILABLE && code !== grpc.status.DEADLINE_EXCEEDED) return;
    if (this.endpoints[this.current] === endpoint) {
      this.current = (this.current + 1) % this.endpoints.length;
    }
  }

  private errorOf(method: string, endpoint: Endpoint, error: grpc.ServiceError): EtcdCallError {
    // grpc-js reports a call that never found a connection as UNAVAILABLE with these details;
    // anything else may have been delivered.
    const neverSent = error.code === grpc.status.UNAVAILABLE &&
      /no connection established|failed to connect|connection refused|ECONNREFUSED/i
        .test(error.details ?? '');
    return new EtcdCallError(method, endpoint.address, error.code, error.details ?? error.message,
      !neverSent && !(error.code === grpc.status.CANCELLED && /before it was sent/.test(
        error.details ?? '')));
  }

  private endpointOf(raw: string): Endpoint {
    const https = raw.startsWith('https://');
    const address = raw.replace(/^https?:\/\//, '').replace(/\/+$/, '');
    const tls = this.options.tls;
    const credentials = tls !== undefined || https
      ? grpc.credentials.createSsl(toBuffer(tls?.ca), toBuffer(tls?.key), toBuffer(tls?.cert))
      : grpc.credentials.createInsecure();
    const channelOptions: grpc.ChannelOptions = {
      // A dead member is noticed by the transport, not only by call deadlines.
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      ...(tls?.servername !== undefined ? { 'grpc.ssl_target_name_override': tls.servername } : {}),
    };
    return { address, client: new grpc.Client(address, credentials, channelOptions) };
  }
}

function toBuffer(value: string | Buffer | undefined): Buffer | null {
  if (value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value) : value;
}
