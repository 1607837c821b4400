/**
 * The key-value store's data shapes: key-values, events, commands, read requests and results.
 * Everything is plain, immutable data that survives a JSON round trip unchanged (no `undefined`
 * fields are ever set: optional fields are absent), so commands travel in log entries, results
 * travel to clients and both go into snapshots as they are.
 *
 * Keys and values are strings (well-formed UTF-16, limited by their UTF-8 length). Keys are
 * ordered by JavaScript string comparison (UTF-16 code units), the same on every replica.
 */
import type { KvAuthOp } from './auth.js';

/** One key's current (or historical) state, as etcd's mvccpb.KeyValue. */
export interface KeyValue {
  readonly key: string;
  readonly value: string;
  /** Revision of the put that created the key (since its last delete). */
  readonly createRevision: number;
  /** Revision of the latest put of the key. */
  readonly modRevision: number;
  /** Puts since creation: 1 when created; a delete resets it (the key no longer exists). */
  readonly version: number;
  /**
   * The lease the key is attached to (set by the latest put; absent: none). The key is deleted
   * when the lease ends, as etcd's `KeyValue.lease`.
   */
  readonly lease?: number;
}

/**
 * One change, as a watcher sees it. A put carries the new `kv` (version 1 means created); a
 * delete carries `kv` = { key, value: '', createRevision: 0, modRevision: the deleting revision,
 * version: 0 } (etcd's tombstone shape). `prevKv` is the key's state before the change, absent
 * when a put created the key. The event's revision is `kv.modRevision`.
 */
export interface KvEvent {
  readonly type: 'put' | 'delete';
  readonly kv: KeyValue;
  readonly prevKv?: KeyValue;
}

/** Which keys a range, delete or watch covers: `key` alone, or every key starting with it. */
export interface KvKeySelector {
  readonly key: string;
  /** When true, `key` is a prefix; the empty prefix covers every key. Default: false. */
  readonly prefix?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Operations (the parts of a transaction) and compares

export interface KvPutOp {
  readonly kind: 'put';
  readonly key: string;
  readonly value: string;
  /** Return the key's previous state in the response. Default: false. */
  readonly prevKv?: boolean;
  /**
   * Attach the key to this lease (it is deleted when the lease ends). A put without it detaches
   * the key from any lease, as in etcd. The whole command fails with `lease-not-found` when the
   * lease does not exist. Default: no lease.
   */
  readonly lease?: number;
}

export interface KvDeleteOp extends KvKeySelector {
  readonly kind: 'delete';
  /** Return the deleted key-values in the response. Default: false. */
  readonly prevKv?: boolean;
}

/** A read inside a transaction, at the transaction's own revision (it sees earlier ops). */
export interface KvRangeOp extends KvKeySelector {
  readonly kind: 'range';
  /** At most this many key-values; 0 or absent means no limit. */
  readonly limit?: number;
}

export type KvTxnOp = KvPutOp | KvDeleteOp | KvRangeOp;

export type KvCompareResult = 'equal' | 'not-equal' | 'greater' | 'less';

/**
 * A transaction's guard on one key. The field named like `target` holds the operand, and the
 * key's field is compared against it: `{ key, target: 'version', result: 'greater', version: 2 }`
 * holds when the key's version > 2. As in etcd, an absent key has version, createRevision and
 * modRevision 0, and every compare of an absent key's value fails.
 */
export type KvCompare =
  | { readonly key: string; readonly target: 'value'; readonly result: KvCompareResult;
    readonly value: string }
  | { readonly key: string; readonly target: 'version'; readonly result: KvCompareResult;
    readonly version: number }
  | { readonly key: string; readonly target: 'createRevision'; readonly result: KvCompareResult;
    readonly createRevision: number }
  | { readonly key: string; readonly target: 'modRevision'; readonly result: KvCompareResult;
    readonly modRevision: number };

export type KvCompareTarget = KvCompare['target'];

// ---------------------------------------------------------------------------------------------
// Commands: what goes into the Raft log, a discriminated union on `kind`. Client commands carry
// a client stamp (idempotent receiver); the leader's own lease bookkeeping (checkpoint, renew,
// expire: `KvLeaseSystemCommand`) carries only the leader's time.

/**
 * Stamped on every mutating command. `clientId` + `sequence` (optional, together) make the
 * store an idempotent receiver: a retry is applied at most once, and a retry whose command
 * differs from the one applied under that key is refused (`idempotency-mismatch`). A command
 * without them is applied once per command, as in etcd. `nowMs` is the proposing leader's
 * wall-clock time
 * (ms since the epoch), the store's only notion of time ("log time": applying never reads a
 * clock, so every replica computes the same expiries). Wall time, because monotonic clocks of
 * different leaders have different origins; the store keeps the maximum stamp seen, so a clock
 * stepping back changes nothing, and one jumping ahead only forgets idle clients sooner.
 */
export interface KvClientStamp {
  /** The client's session id; a client uses a fresh one when it has no saved sequence. */
  readonly clientId?: string;
  /** Grows with each new request of the client (a retry repeats it). Integer >= 1. */
  readonly sequence?: number;
  /** The leader's time when it proposed the command. Unit: ms since the epoch. */
  readonly nowMs: number;
  /**
   * The authenticated user the command is sent for, stamped by the server when auth is on
   * (never taken from a client). It scopes `clientId` (two users' ids never meet), owns the
   * leases it grants, and is checked again on apply (auth.ts). Absent: auth was off.
   */
  readonly principal?: string;
}

export interface KvPutCommand extends KvClientStamp, Omit<KvPutOp, 'kind'> {
  readonly kind: 'put';
}

export interface KvDeleteCommand extends KvClientStamp, Omit<KvDeleteOp, 'kind'> {
  readonly kind: 'delete';
}

/** If every compare holds, apply `success`, else `failure`, atomically at one revision. */
export interface KvTxnCommand extends KvClientStamp {
  readonly kind: 'txn';
  readonly compare: readonly KvCompare[];
  readonly success: readonly KvTxnOp[];
  readonly failure: readonly KvTxnOp[];
}

/** Drops the history of revisions <= `revision` (etcd's Compact). */
export interface KvCompactCommand extends KvClientStamp {
  readonly kind: 'compact';
  readonly revision: number;
}

/**
 * Grants a lease of `ttlMs`. Its id is the log index of this command's entry: unique for the
 * life of the cluster, and growing with time. See docs/leases.md.
 */
export interface KvLeaseGrantCommand extends KvClientStamp {
  readonly kind: 'lease-grant';
  /** Unit: ms. The server checks the minimum (from the election timeout) before proposing. */
  readonly ttlMs: number;
}

/** Ends a lease now: its keys are deleted at one new revision (with delete events). */
export interface KvLeaseRevokeCommand extends KvClientStamp {
  readonly kind: 'lease-revoke';
  readonly leaseId: number;
}

/** Users, roles and the auth switch (auth.ts). Root only while auth is enabled. */
export type KvAuthCommand = KvClientStamp & { readonly kind: 'auth' } & KvAuthOp;

/** The commands a client may send (through the server, which stamps `nowMs`). */
export type KvClientCommand =
  | KvPutCommand | KvDeleteCommand | KvTxnCommand | KvCompactCommand
  | KvLeaseGrantCommand | KvLeaseRevokeCommand | KvAuthCommand;

/** What the leader's lease tracker proposes; not accepted from clients. */
export interface KvLeaseSystemStamp {
  /** The proposing leader's wall-clock time (log time only; never used for expiry). Unit: ms. */
  readonly nowMs: number;
}

/** One lease's remaining TTL as the leader counted it when it proposed a checkpoint. */
export interface KvLeaseRemaining {
  readonly leaseId: number;
  /** Unit: ms. Clamped to the lease's TTL on apply. */
  readonly remainingMs: number;
}

/**
 * The leader's checkpoint: each listed lease's remaining TTL, so that a later leader counts on
 * from it instead of restarting the full TTL; it also clears the lease's `renewing` mark.
 * Unknown (ended) leases are skipped.
 */
export interface KvLeaseCheckpointCommand extends KvLeaseSystemStamp {
  readonly kind: 'lease-checkpoint';
  readonly leases: readonly KvLeaseRemaining[];
}

/**
 * The leader is acknowledging keep-alives of these leases without writing to the log (sets
 * `renewing`, adds one to `renewals`): a later leader restarts their full TTL from its own
 * election, since it cannot know when the last acknowledged keep-alive was.
 */
export interface KvLeaseRenewCommand extends KvLeaseSystemStamp {
  readonly kind: 'lease-renew';
  readonly leaseIds: readonly number[];
}

/** One lease the leader found expired, with the `renewals` count its decision was based on. */
export interface KvLeaseExpiry {
  readonly leaseId: number;
  readonly renewals: number;
}

/**
 * The leader's revocation of expired leases. A lease whose `renewals` moved past the one
 * listed (a renewal was applied after the leader decided) is kept, not revoked.
 */
export interface KvLeaseExpireCommand extends KvLeaseSystemStamp {
  readonly kind: 'lease-expire';
  readonly leases: readonly KvLeaseExpiry[];
}

export type KvLeaseSystemCommand =
  | KvLeaseCheckpointCommand | KvLeaseRenewCommand | KvLeaseExpireCommand;

export type KvCommand = KvClientCommand | KvLeaseSystemCommand;
export type KvCommandKind = KvCommand['kind'];

// ---------------------------------------------------------------------------------------------
// Leases (replicated state)

/**
 * A lease as every replica holds it. Expiry is not here: only the leader tracks deadlines, on
 * its monotonic clock (src/runtime/lease); the log carries what a later leader needs to go on.
 */
export interface KvLease {
  /** The log index of the grant. */
  readonly id: number;
  /** The granted time-to-live. Unit: ms. */
  readonly ttlMs: number;
  /** Remaining TTL as of the latest grant or checkpoint of this lease. Unit: ms. */
  readonly remainingMs: number;
  /**
   * True from a `lease-renew` until the next checkpoint: keep-alives may have been
   * acknowledged since `remainingMs` was recorded, so a new leader restarts the full TTL.
   */
  readonly renewing: boolean;
  /** How many `lease-renew` entries covered this lease (guards expiry; see `lease-expire`). */
  readonly renewals: number;
  /** The principal that granted it (auth on); absent when granted with auth off. */
  readonly owner?: string;
}

// ---------------------------------------------------------------------------------------------
// Read requests (served without the log)

export interface KvRangeRequest extends KvKeySelector {
  /** At most this many key-values; 0 or absent means no limit. */
  readonly limit?: number;
  /** Read the store as of this revision; 0 or absent means the current revision. */
  readonly revision?: number;
}

// ---------------------------------------------------------------------------------------------
// Results

export interface KvPutResponse {
  readonly kind: 'put';
  /** Present when asked for and the key existed. */
  readonly prevKv?: KeyValue;
}

export interface KvDeleteResponse {
  readonly kind: 'delete';
  /** Number of keys deleted. */
  readonly deleted: number;
  /** Present when asked for: the deleted key-values, in key order. */
  readonly prevKvs?: readonly KeyValue[];
}

export interface KvRangeResponse {
  readonly kind: 'range';
  /** In key order, at most `limit`. */
  readonly kvs: readonly KeyValue[];
  /** True when more keys matched than were returned. */
  readonly more: boolean;
  /** How many keys matched in all (ignoring `limit`). */
  readonly count: number;
}

export type KvTxnOpResponse = KvPutResponse | KvDeleteResponse | KvRangeResponse;

/**
 * Set on a retry's answer whose first answer was too large to keep whole
 * (`KvStoreConfig.clientResultBytesMax`): the key-values (`prevKv`, `prevKvs`, the `kvs` of a
 * transaction's ranges) are left out; everything else is as first answered.
 */
export interface KvTrimmed {
  readonly trimmed?: true;
}

/** `revision`: the store's revision after the request (as etcd's response header). */
export type KvPutResult = KvPutResponse & { readonly revision: number } & KvTrimmed;
export type KvDeleteResult = KvDeleteResponse & { readonly revision: number } & KvTrimmed;
export type KvRangeResult = KvRangeResponse & { readonly revision: number };

export interface KvTxnResult extends KvTrimmed {
  readonly kind: 'txn';
  readonly revision: number;
  /** True when every compare held (so `success` ran), false when `failure` ran. */
  readonly succeeded: boolean;
  /** One response per op of the branch that ran, in order. */
  readonly responses: readonly KvTxnOpResponse[];
}

export interface KvCompactResult {
  readonly kind: 'compact';
  readonly revision: number;
  readonly compactRevision: number;
}

export interface KvLeaseGrantResult {
  readonly kind: 'lease-grant';
  readonly revision: number;
  readonly leaseId: number;
  /** Unit: ms. */
  readonly ttlMs: number;
}

export interface KvLeaseRevokeResult {
  readonly kind: 'lease-revoke';
  /** A new revision when keys were deleted, else unchanged. */
  readonly revision: number;
  readonly leaseId: number;
  /** Keys deleted with the lease. */
  readonly deleted: number;
}

export interface KvLeaseCheckpointResult {
  readonly kind: 'lease-checkpoint';
  readonly revision: number;
  /** The leases recorded (existing ones), with the remaining TTL as stored. */
  readonly leases: readonly KvLeaseRemaining[];
}

export interface KvLeaseRenewResult {
  readonly kind: 'lease-renew';
  readonly revision: number;
  /** The leases marked (existing ones). */
  readonly leaseIds: readonly number[];
}

export interface KvLeaseExpireResult {
  readonly kind: 'lease-expire';
  readonly revision: number;
  /** The leases revoked. */
  readonly expired: readonly number[];
  /** Listed leases kept because a renewal was applied after the leader decided. */
  readonly kept: readonly number[];
  /** Keys deleted with the expired leases. */
  readonly deleted: number;
}

/** Events for a watcher, from `eventsSince`. */
export interface KvEventsResult {
  readonly kind: 'events';
  /** The store's current revision. */
  readonly revision: number;
  /** In revision order (within a revision, in the order the transaction made them). */
  readonly events: readonly KvEvent[];
  /** Ask from here next time: every matching event below it has been returned. */
  readonly nextRevision: number;
  /** True when `limit` cut the answer short (ask again from `nextRevision` at once). */
  readonly more: boolean;
}

/** A rule a command or request breaks; `field` is a path such as `success[2].key`. */
export interface KvProblem {
  readonly field: string;
  readonly rule: string;
}

/** Operating errors, as values (the server maps `code` to a `CoordError`). */
export type KvError =
  /** The log entry is not a command this store understands (corrupt or from a newer version). */
  | { readonly code: 'bad-command'; readonly reason: string }
  /** The command or request breaks the limits or rules listed. */
  | { readonly code: 'invalid'; readonly problems: readonly KvProblem[] }
  /** A sequence below the client's latest applied one: an old retry, not applied again. */
  | { readonly code: 'duplicate-stale'; readonly clientId: string; readonly sequence: number;
    readonly sequenceApplied: number }
  /** The revision asked for has been compacted: re-list at the current revision. */
  | { readonly code: 'compacted'; readonly compactRevision: number }
  /** The revision asked for is beyond the store's revision. */
  | { readonly code: 'future-revision'; readonly revision: number;
    readonly currentRevision: number }
  /**
   * The client's latest applied sequence is this one, but its command differs from the one
   * applied then (compared by digest): the key was reused for another request. Not applied.
   */
  | { readonly code: 'idempotency-mismatch'; readonly clientId: string;
    readonly sequence: number }
  /** The lease does not exist: never granted, revoked, or expired. */
  | { readonly code: 'lease-not-found'; readonly leaseId: number }
  /** The store already holds `leasesMax` leases. */
  | { readonly code: 'lease-limit'; readonly leasesMax: number }
  /** The principal may not do this (auth.ts). Nothing applied. */
  | { readonly code: 'permission-denied'; readonly reason: string }
  /** An auth command that does not fit the auth state (a user that exists, ...). */
  | { readonly code: 'auth-refused'; readonly reason: string };

export type KvErrorCode = KvError['code'];

export interface KvErrorResult {
  readonly kind: 'error';
  readonly error: KvError;
}

export interface KvAuthResult {
  readonly kind: 'auth';
  readonly revision: number;
  readonly op: KvAuthOp['op'];
}

/** What `apply` returns for a log entry. */
export type KvApplyResult =
  | KvPutResult | KvDeleteResult | KvTxnResult | KvCompactResult | KvLeaseGrantResult
  | KvLeaseRevokeResult | KvLeaseCheckpointResult | KvLeaseRenewResult | KvLeaseExpireResult
  | KvAuthResult | KvErrorResult;
