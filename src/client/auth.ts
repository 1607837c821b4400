/**
 * `connect({ auth: { user, password } })`: the client logs in (`auth-authenticate`), sends the
 * token with every request (the transports read it from the session: HTTP's Authorization
 * header, the stream's hello and `auth` frame), logs in again before the token expires (at
 * `RENEW_FRACTION` of its TTL, on the client's own monotonic clock) and whenever a member
 * answers CONCLAVE_INVALID_TOKEN (revoked, expired early by a clock step, or auth turned off
 * and on), then sends the request once more. Logins are shared: many calls waiting for a token
 * cause one login. Pure (on ports): the simulator could run it as shipped.
 *
 * A cluster with auth off answers a login "auth is not enabled": the client then sends no
 * token, and asks again after `AUTH_OFF_RECHECK_MS` (or at the first INVALID_TOKEN), so a
 * client started before `conclave auth enable` carries on after it.
 */
import type {
  CallOptions, ClientAnswer, ClientEndpoint, ClientRequest, ClientTransport, KeepAliveAnswer,
  LeaseStream, LeaseStreamOpening, LostAnswer, RefusedAnswer, TokenSource, WatchOpening,
  WatchRequest,
} from '../ports/client-transport.js';
import type { Clock } from '../ports/clock.js';
import { CoordError } from '../errors.js';

/** The user and password a client logs in with (the etcd backend's option has this shape). */
export interface ClientAuthOptions {
  readonly user: string;
  readonly password: string;
}

/** Renew once this fraction of the token's TTL has passed: a margin for slow logins. */
const RENEW_FRACTION = 0.75;
/** How long a client that found auth off waits before asking again. Unit: ms. */
const AUTH_OFF_RECHECK_MS = 30_000;

type Failure = RefusedAnswer | LostAnswer;

export class AuthSession implements TokenSource {
  private current: { readonly token: string | undefined; readonly renewAtMs: number }
    | undefined;
  private login: Promise<Failure | undefined> | undefined;

  constructor(private readonly inner: ClientTransport, private readonly auth: ClientAuthOptions,
    private readonly clock: Clock) {}

  token(): string | undefined {
    return this.current?.token;
  }

  /** A token good for now (logging in at `endpoint` when there is none), or why not. */
  async ensure(endpoint: ClientEndpoint, options: CallOptions): Promise<Failure | undefined> {
    if (this.current !== undefined && this.clock.monotonicMs() < this.current.renewAtMs) {
      return undefined;
    }
    this.login ??= this.logIn(endpoint, options).finally(() => {
      this.login = undefined;
    });
    return this.login;
  }

  /** `token` was refused: the next `ensure` logs in again (unless another did already). */
  invalidate(token: string | undefined): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async logIn(endpoint: ClientEndpoint, options: CallOptions)
    : Promise<Failure | undefined> {
    const answer = await this.inner.call(endpoint, { kind: 'auth', call: 'auth-authenticate',
      body: { name: this.auth.user, password: this.auth.password } }, options);
    const now = this.clock.monotonicMs();
    if (answer.kind === 'lost') return answer;
    if (answer.kind === 'refused') {
      if (answer.error.code !== 'CONCLAVE_REQUEST_INVALID'
        || !answer.error.message.includes('auth is not enabled')) return answer;
      this.current = { token: undefined, renewAtMs: now + AUTH_OFF_RECHECK_MS };
      return undefined;
    }
    const body = (answer.body ?? {}) as { token?: unknown; ttlMs?: unknown };
    if (typeof body.token !== 'string' || typeof body.ttlMs !== 'number') {
      return { kind: 'refused', servedBy: endpoint, error: new CoordError('CONCLAVE_PROTOCOL',
        `${endpoint} answered a login without { token, ttlMs }`) };
    }
    this.current = { token: body.token, renewAtMs: now + RENEW_FRACTION * body.ttlMs };
    return undefined;
  }
}

const isInvalidToken = (answer: { kind: string; error?: CoordError }): boolean =>
  answer.kind === 'refused' && answer.error?.code === 'CONCLAVE_INVALID_TOKEN';

/** A transport that logs in first and once more after CONCLAVE_INVALID_TOKEN. */
export class AuthenticatingTransport implements ClientTransport {
  constructor(private readonly inner: ClientTransport, private readonly session: AuthSession) {}

  call(endpoint: ClientEndpoint, request: ClientRequest, options: CallOptions = {})
    : Promise<ClientAnswer> {
    if (request.kind === 'auth' && request.call === 'auth-authenticate') {
      return this.inner.call(endpoint, request, options);
    }
    return this.withToken(endpoint, options, () => this.inner.call(endpoint, request, options));
  }

  openWatch(endpoint: ClientEndpoint, request: WatchRequest, options: CallOptions = {})
    : Promise<WatchOpening> {
    return this.withToken(endpoint, options,
      () => this.inner.openWatch(endpoint, request, options));
  }

  async openLeaseStream(endpoint: ClientEndpoint, options: CallOptions = {})
    : Promise<LeaseStreamOpening> {
    const opening = await this.withToken(endpoint, options,
      () => this.inner.openLeaseStream(endpoint, options));
    if (opening.kind !== 'open') return opening;
    return { ...opening, stream: new AuthenticatedLeaseStream(opening.stream, this.session,
      endpoint) };
  }

  close(): void {
    this.inner.close();
  }

  private async withToken<T extends { kind: string }>(endpoint: ClientEndpoint,
    options: CallOptions, send: () => Promise<T>): Promise<T | Failure> {
    const failure = await this.session.ensure(endpoint, options);
    if (failure !== undefined) return failure;
    const used = this.session.token();
    const answer = await send();
    if (!isInvalidToken(answer as { kind: string })) return answer;
    this.session.invalidate(used);
    const again = await this.session.ensure(endpoint, options);
    return again ?? send();
  }
}

/** Keep-alives over a stream that renew the token first (the stream transport sends it). */
class AuthenticatedLeaseStream implements LeaseStream {
  constructor(private readonly inner: LeaseStream, private readonly session: AuthSession,
    private readonly endpoint: ClientEndpoint) {}

  get open(): boolean {
    return this.inner.open;
  }

  async keepAlive(leaseId: number): Promise<KeepAliveAnswer> {
    const failure = await this.session.ensure(this.endpoint, {});
    if (failure !== undefined) {
      return failure.kind === 'refused' ? { kind: 'refused', error: failure.error }
        : { kind: 'lost', detail: failure.detail };
    }
    const used = this.session.token();
    const answer = await this.inner.keepAlive(leaseId);
    if (!isInvalidToken(answer)) return answer;
    this.session.invalidate(used);
    const again = await this.session.ensure(this.endpoint, {});
    return again === undefined ? this.inner.keepAlive(leaseId) : answer;
  }

  close(): void {
    this.inner.close();
  }
}
