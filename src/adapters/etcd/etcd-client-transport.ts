/**
 * The client transport over etcd's v3 gRPC API: the Conclave client (src/client: kv, watch,
 * leases with their local deadline, elections, locks, Fence) runs unchanged on an etcd cluster.
 * Each request of the client protocol becomes the etcd call that does the same (etcd-wire.ts
 * translates both ways) and each answer the body the Conclave server would have sent, so the
 * client's checks, retries and recipes are the same code on both backends.
 *
 * One EtcdConnection per endpoint (one HTTP/2 connection each, with TLS and token auth renewed
 * on expiry): the client's router picks the endpoint, as over HTTP. Any etcd member serves any
 * request (followers forward writes and linearizable reads), so no answer names a leader.
 *
 * What differs from the Conclave backend, on purpose and documented in docs/backends.md:
 * - No idempotency keys: etcd applies a retried put, delete or unguarded txn again, so such a
 *   write is at-least-once when an attempt's outcome was unknown. The recipes' writes are
 *   guarded by compares (a retry finds its first attempt's effect), and so is `runOnce`.
 * - A lease grant chooses its lease id from the request's idempotency key (leaseIdFor), so a
 *   retried grant finds its first attempt's lease instead of leaking a second one.
 * - TTLs are whole seconds (rounded up; etcd may raise one to its minimum): the grant's answer
 *   carries the TTL granted, which the client's local deadline uses.
 */
import type {
  CallOptions, ClientAnswer, ClientEndpoint, ClientRequest, ClientTransport, LeaseStreamOpening,
  LostAnswer, WatchOpening, WatchRequest,
} from '../../ports/client-transport.js';
import { CoordError } from '../../errors.js';
import { EtcdCallError, EtcdConnection, type EtcdConnectionOptions, type EtcdMessage,
  type EtcdTlsOptions } from './etcd-connection.js';
import { failureAnswer, garbledAnswer } from './etcd-outcomes.js';
import { etcdRequest } from './etcd-requests.js';
import { EtcdLeaseStream, EtcdWatchStream } from './etcd-streams.js';
import { keyRange } from './etcd-wire.js';

export interface EtcdClientTransportOptions {
  /** TLS towards the members (also implied by an `https://` endpoint). */
  readonly tls?: EtcdTlsOptions;
  /** etcd's user/password authentication; the token is renewed when etcd says it expired. */
  readonly auth?: { readonly user: string; readonly password: string };
  /**
   * A backstop deadline on each gRPC call, for a caller that gives no signal. Unit: ms.
   * Default: 60 000. Why: the client times every attempt itself (requestTimeoutMs, 5 s by
   * default) and aborts it; this only keeps a forgotten call from living forever.
   */
  readonly callTimeoutMs?: number;
  /**
   * Watch frames queued ahead of the consumer before the stream is ended (the client resumes
   * it from its next revision). Unit: frames. Default: 64, as over HTTP.
   */
  readonly watchFramesBufferedMax?: number;
  /** Keep-alives waiting for an answer on one lease stream. Unit: messages. Default: 4096. */
  readonly keepAlivesInflightMax?: number;
}

const CALL_TIMEOUT_MS_DEFAULT = 60_000;

export class EtcdClientTransport implements ClientTransport {
  private readonly connections = new Map<ClientEndpoint, EtcdConnection>();
  private readonly streams = new Set<{ close(): void }>();
  private closed = false;

  constructor(private readonly options: EtcdClientTransportOptions = {}) {}

  async call(endpoint: ClientEndpoint, request: ClientRequest, options: CallOptions = {}):
    Promise<ClientAnswer> {
    if (this.closed) return closedAnswer(endpoint);
    const connection = this.connection(endpoint);
    const signal = options.signal;
    const call = (name: Parameters<EtcdConnection['call']>[0], message: EtcdMessage):
      Promise<EtcdMessage> => connection.call(name, message,
      signal === undefined ? {} : { signal });
    try {
      const body = await etcdRequest(request, { call, endpoint,
        keepAliveOnce: (leaseId) => this.keepAliveOnce(endpoint, leaseId, signal) });
      return { kind: 'ok', body, servedBy: endpoint };
    } catch (error) {
      if (error instanceof EtcdCallError || signal?.aborted === true) {
        return failureAnswer(error, endpoint, signal?.aborted === true);
      }
      return garbledAnswer(error, endpoint);
    }
  }

  async openWatch(endpoint: ClientEndpoint, request: WatchRequest, options: CallOptions = {}):
    Promise<WatchOpening> {
    // With auth, a watcher refused for an expired token is opened once more with a new one.
    const attempts = this.options.auth === undefined ? 1 : 2;
    for (let attempt = 1; ; attempt++) {
      const opening = await this.openWatchOnce(endpoint, request, options.signal);
      if (opening !== 'auth-refused') return opening;
      if (attempt >= attempts) {
        return { kind: 'refused', servedBy: endpoint, error: new CoordError(
          'CONCLAVE_REQUEST_INVALID', `etcd at ${endpoint} refused the watch on `
          + `${request.key}: permission denied (after renewing the auth token)`) };
      }
    }
  }

  private async openWatchOnce(endpoint: ClientEndpoint, request: WatchRequest,
    signal: AbortSignal | undefined): Promise<WatchOpening | 'auth-refused'> {
    if (this.closed) return closedAnswer(endpoint);
    const stream = await this.openStream(endpoint, 'watch', signal);
    if ('kind' in stream) return stream;
    const connection = this.connection(endpoint);
    const watch = new EtcdWatchStream(stream, this.options.watchFramesBufferedMax ?? 64,
      () => connection.forgetToken());
    stream.write({ create_request: { ...keyRange(request.key, request.prefix),
      ...(request.fromRevision > 0 ? { start_revision: request.fromRevision } : {}),
      progress_notify: true, prev_kv: true } });
    const abort = (): void => watch.close();
    signal?.addEventListener('abort', abort, { once: true });
    const opened = await watch.opened;
    signal?.removeEventListener('abort', abort);
    if (isAborted(signal)) {
      watch.close();
      return { kind: 'lost', sent: true, aborted: true, detail: 'aborted', servedBy: endpoint };
    }
    if (opened.kind === 'auth-refused') return opened.kind;
    if (opened.kind === 'failed') {
      return opened.error === undefined ? closedAnswer(endpoint)
        : failureAnswer(opened.error, endpoint, false);
    }
    return { kind: 'open', stream: this.track(watch), servedBy: endpoint };
  }

  async openLeaseStream(endpoint: ClientEndpoint, options: CallOptions = {}):
    Promise<LeaseStreamOpening> {
    if (this.closed) return closedAnswer(endpoint);
    const stream = await this.openStream(endpoint, 'leaseKeepAlive', options.signal);
    if ('kind' in stream) return stream;
    const lease = new EtcdLeaseStream(stream, endpoint,
      this.options.keepAlivesInflightMax ?? 4096);
    return { kind: 'open', stream: this.track(lease), servedBy: endpoint };
  }

  close(): void {
    this.closed = true;
    for (const stream of [...this.streams]) stream.close();
    this.streams.clear();
    for (const connection of this.connections.values()) connection.close();
    this.connections.clear();
  }

  private connection(endpoint: ClientEndpoint): EtcdConnection {
    let connection = this.connections.get(endpoint);
    if (connection === undefined) {
      const options: EtcdConnectionOptions = { endpoints: [endpoint],
        callTimeoutMs: this.options.callTimeoutMs ?? CALL_TIMEOUT_MS_DEFAULT,
        ...(this.options.tls === undefined ? {} : { tls: this.options.tls }),
        ...(this.options.auth === undefined ? {} : { auth: this.options.auth }) };
      connection = new EtcdConnection(options);
      this.connections.set(endpoint, connection);
    }
    return connection;
  }

  /** A stream, or why it could not open (the auth token could not be fetched, say). */
  private async openStream(endpoint: ClientEndpoint, name: 'watch' | 'leaseKeepAlive',
    signal: AbortSignal | undefined) {
    if (signal?.aborted === true) {
      return { kind: 'lost', sent: false, aborted: true, detail: 'aborted',
        servedBy: endpoint } as const satisfies LostAnswer;
    }
    try {
      return await this.connection(endpoint).stream(name);
    } catch (error) {
      return failureAnswer(error, endpoint, isAborted(signal));
    }
  }

  /** One keep-alive outside the stream client (`leases.keepAliveOnce`). */
  private async keepAliveOnce(endpoint: ClientEndpoint, leaseId: number,
    signal: AbortSignal | undefined): Promise<unknown> {
    const stream = await this.openStream(endpoint, 'leaseKeepAlive', signal);
    if ('kind' in stream) {
      throw stream.kind === 'refused' ? stream.error : new CoordError('CONCLAVE_UNAVAILABLE',
        `cannot reach ${endpoint}: ${stream.detail}`);
    }
    const lease = new EtcdLeaseStream(stream, endpoint, 1);
    const abort = (): void => lease.close(); // the keep-alive then answers `lost` at once
    signal?.addEventListener('abort', abort, { once: true });
    try {
      const answer = await lease.keepAlive(leaseId);
      if (answer.kind === 'ok') return answer.body;
      throw answer.kind === 'refused' ? answer.error : new CoordError('CONCLAVE_UNAVAILABLE',
        `the keep-alive to ${endpoint} got no answer: ${answer.detail}`);
    } finally {
      signal?.removeEventListener('abort', abort);
      lease.close();
    }
  }

  private track<T extends { close(): void }>(stream: T): T {
    this.streams.add(stream);
    const close = stream.close.bind(stream);
    stream.close = (): void => {
      this.streams.delete(stream);
      close();
    };
    if (this.closed) stream.close();
    return stream;
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function closedAnswer(endpoint: ClientEndpoint): LostAnswer {
  return { kind: 'lost', sent: false, aborted: false, detail: 'the transport was closed',
    servedBy: endpoint };
}
