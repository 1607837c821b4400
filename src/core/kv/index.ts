/**
 * @packageDocumentation
 * The consistent core's replicated state machine: a revisioned key-value store with etcd v3's
 * MVCC semantics, watches over a bounded history, and an idempotent receiver. Pure: it reads no
 * clock and no randomness, so every replica that applies the same entries has the same state.
 *
 * - Revisions: the store starts at revision 1 (empty). Each command that changes at least one
 *   key makes one new revision, shared by all its changes (a transaction's puts and deletes are
 *   atomic at one revision); commands that change nothing (a read-only txn, a delete of absent
 *   keys, a compaction) keep it. Each key has `createRevision`, `modRevision` and `version`
 *   (1 on creation, +1 per put; a delete removes the key, a later put recreates it).
 * - Commands (`KvCommand`: put, delete, txn, compact, lease-grant, lease-revoke from clients;
 *   lease-checkpoint, lease-renew, lease-expire from the leader's lease tracker) go through the
 *   log as bytes: `encodeValidKvCommand` before proposing (validates every limit, "no poisoned
 *   log"), `applyEntry` on every replica (decodes totally; a bad entry is an error result).
 * - Reads (`range`, `get`, `eventsSince`) do not use the log: serve them after a read index for
 *   linearizable reads, or at once for serializable ones. `range` can read an older revision
 *   while the history holds it; `eventsSince` gives watch events in revision order and a
 *   `nextRevision` to resume from, so a reconnecting watcher never misses or repeats an event.
 *   Below the compact revision both answer `compacted`: re-list, then watch from there.
 * - Idempotency: each command carries `clientId`, `sequence` and the leader's `nowMs`. The
 *   latest sequence and result per client are kept (bounded by `clientsMax` and
 *   `clientIdleMsMax` of log time); a retry gets the saved result, an older sequence
 *   `duplicate-stale`. One request in flight per client id (use several ids for concurrency).
 * - Leases (docs/leases.md): a grant's id is its entry index; a put with `lease` attaches the
 *   key (refused when the lease does not exist); a revoke or expiry deletes the lease's keys at
 *   one new revision, with delete events. The store keeps each lease's TTL, the remaining TTL
 *   of its latest checkpoint and its `renewing` mark; it never reads a clock, expiry is the
 *   leader's (src/runtime/lease). `lease-timing.ts` holds the bound formulas.
 * - Snapshots: `toSnapshot()` / `KvStore.fromSnapshot()` / `restore()` and `encodeKvSnapshot` /
 *   `decodeKvSnapshot` carry the whole state, history, client records and leases included.
 *   `captureSnapshot()` freezes the state cheaply (keys copy-on-write) and `KvSnapshotEncoder`
 *   encodes it in bounded steps, so a server snapshots a large store between other work.
 *
 * Invariants: the revision never decreases; events are retained in revision order and never
 * split within a revision; a command is applied at most once per (client, sequence) while its
 * client's record is kept; every replica needs the same `KvStoreConfig` (limits and bounds
 * decide what apply accepts and forgets).
 *
 * @example
 * ```ts
 * import { KvStore, encodeValidKvCommand } from './core/kv/index.js';
 * import { logIndex, term } from './core/ids.js';
 *
 * const store = new KvStore();
 * const put = { kind: 'put', clientId: 'c1', sequence: 1, nowMs: 1_700_000_000_000,
 *   key: 'config/a', value: '1' } as const;
 * const encoded = encodeValidKvCommand(put, store.config); // server: before proposing
 * if (encoded.kind === 'ok') {
 *   // ... propose encoded.bytes; when committed, every replica runs:
 *   store.applyEntry({ index: logIndex(1), term: term(1), kind: 'normal', data: encoded.bytes });
 * }
 * store.range({ key: 'config/', prefix: true });  // { kind: 'range', revision: 2, kvs: [...] }
 * store.eventsSince(2, { key: 'config/', prefix: true }); // the put event, nextRevision 3
 * ```
 */
export {
  KvStore, KV_INITIAL_REVISION, isLeaseSystemCommand, kvError, type KvSnapshotCapture,
} from './kv-store.js';
export {
  LEASE_KEEPALIVE_FRACTION, leaseEndBoundsMs, leaseHolderDeadlineMs, leaseHolderFraction,
  leaseTtlMsMin, type LeaseTiming,
} from './lease-timing.js';
export {
  KV_COMMAND_FORMAT_JSON_V1,
  decodeKvCommand,
  encodeKvCommand,
  encodeValidKvCommand,
  parseKvCommand,
  type KvDecodeError,
} from './codec.js';
export {
  KV_EVENT_OVERHEAD_BYTES,
  KV_KEY_OVERHEAD_BYTES,
  KV_PUT_ENCODING_SLACK_BYTES,
  KV_STORE_DEFAULTS,
  validateKvStoreConfig,
  type KvMutants, type KvStoreConfig,
} from './config.js';
export { validateKvCommand, validateKvRangeRequest, validateKvWatchRequest } from './validate.js';
export {
  KV_SNAPSHOT_FORMAT,
  KV_SNAPSHOT_FORMAT_JSON_V1,
  checkKvSnapshot,
  decodeKvSnapshot,
  encodeKvSnapshot,
  type KvSnapshot,
} from './snapshot.js';
export {
  KV_SNAPSHOT_FORMAT_SECTIONS_V2, KV_SNAPSHOT_SECTION_BYTES, KvSnapshotEncoder,
  type KvSnapshotHeader, type KvSnapshotSource,
} from './snapshot-sections.js';
export type { KvClientRecord } from './client-table.js';
export { utf8ByteLength } from './text.js';
export type * from './types.js';
export {
  AUTH_BOUNDS, AuthTable, KV_AUTH_OPS, ROOT, authNameProblem, covers,
  type KvAuthOp, type KvAuthOpName, type KvAuthRole, type KvAuthSnapshot, type KvAuthUser,
  type KvPasswordHash, type KvPermission, type KvPermissionType,
} from './auth.js';
export {
  commandDenial, leaseDenial, readDenial, rootDenial, type KvClientRequest, type LeaseAction,
} from './authorize.js';
