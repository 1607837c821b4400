/**
 * How the client library reaches the members of a consistent core: one request and its answer,
 * a watch stream, a keep-alive stream. The client (src/client) decides everything else — which
 * member to ask, how long to wait, when to retry, what an outcome means — on its own Clock and
 * Timer, so the same client runs over HTTP/JSON (src/adapters/http-client-transport.ts), over
 * the simulator's network (src/sim/scenarios/lease/sim-client-transport.ts), and over the
 * multiplexed stream (src/adapters/stream-client-transport.ts): each request there travels as
 * a frame tagged with a per-request id that its answer repeats, and a watch is a long-lived id
 * of its own.
 *
 * The contract every implementation keeps:
 * - `call` resolves exactly once and never rejects. `ok`: the member's result (a JSON-like value
 *   the client checks before use). `refused`: the member answered with an error; `error.outcome`
 *   is the member's word on whether the request may have been applied; `leader` names the
 *   leader when the member said who it is (HTTP's 307; an implementation may also follow such a
 *   redirect itself and report the endpoint that finally answered as `servedBy`). `lost`: no
 *   answer; `sent` is false only when no byte of the request can have reached a member (the
 *   connection was never made, the endpoint is not valid, or the call was aborted before it
 *   left), so the request was certainly not applied.
 * - Aborting `signal` ends a call (or an opening) at once with `lost`, `aborted: true`.
 * - Streams deliver their frames in the order the member sent them, each at most once; a stream
 *   that breaks ends (`end`), it never skips a frame. A partial frame of a broken stream is
 *   dropped. A frame that cannot be read ends the stream with a protocol error.
 * - No timers: an implementation waits as long as it is let; the caller times every wait.
 * - Everything that arrives is validated into the types below before it is handed over.
 */
import type { KvCompare, KvEvent, KvTxnOp } from '../core/kv/types.js';
import type { CoordError } from '../errors.js';

/**
 * Where a member answers: a base URL (`http://10.0.0.1:2379`) for HTTP, a member id in the
 * simulator. Opaque to the client, which only compares and remembers them.
 */
export type ClientEndpoint = string;

/** The idempotency key of a request that goes through the log (src/client/lanes.ts). */
export interface RequestStamp {
  readonly clientId: string;
  readonly sequence: number;
}

/** Every request of the client protocol (docs/api.md has the HTTP form of each). */
export type ClientRequest =
  | ({ readonly kind: 'put'; readonly key: string; readonly value: string;
    readonly prevKv?: boolean; readonly lease?: number } & RequestStamp)
  | ({ readonly kind: 'delete'; readonly key: string; readonly prefix?: boolean;
    readonly prevKv?: boolean } & RequestStamp)
  | ({ readonly kind: 'txn'; readonly compare: readonly KvCompare[];
    readonly success: readonly KvTxnOp[]; readonly failure: readonly KvTxnOp[] } & RequestStamp)
  /** A range; a stamp is accepted and ignored (reads take no log entry). */
  | ({ readonly kind: 'range'; readonly key: string; readonly prefix?: boolean;
    readonly limit?: number; readonly revision?: number;
    readonly consistency: 'linearizable' | 'serializable' } & Partial<RequestStamp>)
  | ({ readonly kind: 'compact'; readonly revision: number } & RequestStamp)
  | ({ readonly kind: 'lease-grant'; readonly ttlMs: number } & RequestStamp)
  | ({ readonly kind: 'lease-revoke'; readonly leaseId: number } & RequestStamp)
  | { readonly kind: 'lease-keepalive'; readonly leaseId: number }
  | { readonly kind: 'lease-ttl'; readonly leaseId: number; readonly keys?: boolean }
  | { readonly kind: 'lease-list' }
  | { readonly kind: 'status' }
  /**
   * An authentication call (docs/api.md, "Authentication"): `call` is its name
   * (`auth-authenticate`, `user-add`, `role-grant-permission`, ...), `body` its fields.
   */
  | { readonly kind: 'auth'; readonly call: string;
    readonly body: Readonly<Record<string, unknown>> };

/**
 * Where a transport takes the bearer token each request carries (src/client/auth.ts keeps it
 * fresh). Undefined: no token (auth off, or not logged in yet).
 */
export interface TokenSource {
  token(): string | undefined;
}

/** How a call or an opening ended without an answer. */
export interface LostAnswer {
  readonly kind: 'lost';
  /** False: no byte of the request can have reached a member (it was not applied). */
  readonly sent: boolean;
  /** The caller's signal ended it. */
  readonly aborted: boolean;
  /** What happened, for messages (`ECONNREFUSED`, `socket hang up`, ...). */
  readonly detail: string;
  readonly servedBy: ClientEndpoint;
  readonly cause?: unknown;
}

/** A member's error answer. */
export interface RefusedAnswer {
  readonly kind: 'refused';
  /** Its code, message (naming `servedBy`) and outcome as the member said. */
  readonly error: CoordError;
  readonly servedBy: ClientEndpoint;
  /** The leader, when the member named it (a redirect, or an error body's hint). */
  readonly leader?: ClientEndpoint;
}

export type ClientAnswer =
  | { readonly kind: 'ok'; readonly body: unknown; readonly servedBy: ClientEndpoint }
  | RefusedAnswer
  | LostAnswer;

export interface CallOptions {
  /** Ends the call at once (a `lost` answer with `aborted: true`). */
  readonly signal?: AbortSignal;
  /**
   * How long the caller waits for this call's answer: the transport asks the member to answer
   * a little sooner (HTTP: the `conclave-timeout` header, less the answer's trip), and the
   * member answers CONCLAVE_DEADLINE_EXCEEDED by then rather than leave the caller to time out
   * without its verdict. Unit: ms. Default: none (the member's own request timeout).
   */
  readonly deadlineMs?: number;
}

/** Events on one key, or on every key under a prefix, from `fromRevision` (0: from now on). */
export interface WatchRequest {
  readonly key: string;
  readonly prefix: boolean;
  readonly fromRevision: number;
}

/** One frame of a watch stream, as src/server/watch-hub.ts sends them. */
export type WatchFrame =
  /** The member's store revision: the first frame of every stream, then proof of life. */
  | { readonly kind: 'progress'; readonly revision: number }
  /** A batch that never splits a revision; resume from `nextRevision`. */
  | { readonly kind: 'events'; readonly events: readonly KvEvent[];
    readonly nextRevision: number }
  /** The history no longer holds the revision asked for; the stream ends. */
  | { readonly kind: 'compacted'; readonly compactRevision: number }
  /** The member cut a watcher that fell behind (reason `slow`); the stream ends. Every event
   *  below `nextRevision` came before it: resume from there. */
  | { readonly kind: 'canceled'; readonly nextRevision: number }
  /** A frame of a newer server that this client does not know: to be ignored. */
  | { readonly kind: 'other' };

/** The stream ended or broke; with `error` it sent something unreadable (do not resume). */
export interface StreamEnd {
  readonly kind: 'end';
  readonly error?: CoordError;
}

export interface WatchStream {
  /** The next frame, or the end. One call at a time. */
  next(): Promise<WatchFrame | StreamEnd>;
  /** Drops the stream; a pending `next()` resolves `end`. */
  close(): void;
}

export type WatchOpening =
  | { readonly kind: 'open'; readonly stream: WatchStream; readonly servedBy: ClientEndpoint }
  | RefusedAnswer
  | LostAnswer;

/** A keep-alive's answer on a lease stream. */
export type KeepAliveAnswer =
  | { readonly kind: 'ok'; readonly body: unknown }
  | { readonly kind: 'refused'; readonly error: CoordError }
  /** The stream closed before the answer came: the keep-alive promises nothing. */
  | { readonly kind: 'lost'; readonly detail: string };

/** A keep-alive stream to the leader: many keep-alives in flight, answered in any order. */
export interface LeaseStream {
  /** Sends one keep-alive (tagged with an id of the stream's own) and waits for its answer. */
  keepAlive(leaseId: number): Promise<KeepAliveAnswer>;
  /** False once the stream closed (either side); a closed stream answers `lost` at once. */
  readonly open: boolean;
  /** Closes the stream; keep-alives waiting for an answer resolve `lost`. */
  close(): void;
}

export type LeaseStreamOpening =
  | { readonly kind: 'open'; readonly stream: LeaseStream; readonly servedBy: ClientEndpoint }
  | RefusedAnswer
  | LostAnswer;

export interface ClientTransport {
  /** One request to `endpoint` and its answer; see the module comment. */
  call(endpoint: ClientEndpoint, request: ClientRequest, options?: CallOptions):
    Promise<ClientAnswer>;
  /** Opens a watch stream at `endpoint` (any member serves watches). */
  openWatch(endpoint: ClientEndpoint, request: WatchRequest, options?: CallOptions):
    Promise<WatchOpening>;
  /** Opens the keep-alive stream at `endpoint` (only the leader accepts it). */
  openLeaseStream(endpoint: ClientEndpoint, options?: CallOptions): Promise<LeaseStreamOpening>;
  /** Ends every connection; later calls answer `lost` with `sent: false`. */
  close(): void;
}
