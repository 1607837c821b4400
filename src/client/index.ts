/**
 * @packageDocumentation
 * The TypeScript client of Conclave's consistent core: `connect({ endpoints })` returns a
 * client with `kv` (put, get, range, delete, txn, cas), `grantLease()` and `leases`, `watch()`,
 * `election(name)`, `lock(name)`, `withLock()`, `status()` and `close()`, speaking the HTTP/JSON
 * protocol of src/server/http-api.ts (docs/client.md, docs/leases.md and docs/elections.md have
 * the details).
 *
 * Invariants the client keeps:
 * - It finds the leader by itself: it follows a follower's 307 to the leader, remembers the
 *   endpoint that served the last leader-only request, and on NOT_LEADER, NO_QUORUM or a dead
 *   endpoint moves to the next one with a jittered back-off until `retryDeadlineMs`.
 * - Every write carries an idempotency key (sub-client id and sequence, one request in flight
 *   per sub-client id); every retry of a write repeats it, so the server applies it at most
 *   once. Reads are retried freely.
 * - Every rejection is a `CoordError` with a stable `code` and an `outcome`: `failed` (the
 *   operation certainly did not take effect) or `unknown` (it may have: an attempt timed out
 *   or lost its connection after sending, and no later attempt settled it).
 * - A watch delivers each matching event exactly once, in revision order, across reconnects
 *   to any member; when the history no longer reaches back far enough it fails with
 *   CONCLAVE_KV_COMPACTED instead of skipping.
 * - A held lease's `signal` aborts before any server could end the lease: at the send time of
 *   its last acknowledged keep-alive + TTL × (1 − ρ)/(1 + ρ) − leaseMarginMs.
 * - A leadership's or lock's `signal` aborts no later than its lease's, and sooner when this
 *   process stalled past the lease margin or its key vanished; its fencing token (the winning
 *   key's create revision) only grows from one holder to the next.
 *
 * @example
 * ```ts
 * import { connect } from 'conclave';
 *
 * const client = connect({ endpoints: ['127.0.0.1:2379', '127.0.0.1:2381', '127.0.0.1:2383'] });
 * const { revision } = await client.kv.put('config/mode', 'blue');
 * const { kv } = await client.kv.get('config/mode');          // kv?.value === 'blue'
 * const swapped = await client.kv.cas('config/mode', 'blue', 'green');
 * for await (const event of client.watch({ prefix: 'config/' }, { fromRevision: revision })) {
 *   console.log(event.type, event.kv.key, event.kv.value);
 * }
 * const leadership = await client.election('billing').campaign('node-a');
 * leadership.signal.addEventListener('abort', () => stopLeading()); // lost or resigned
 * await client.withLock('nightly-report', async ({ fencingToken, signal }) => { ... });
 * client.close();
 * ```
 */
export { ConclaveClient, type Client } from './client.js';
export { connect, type TransportOption } from './connect.js';
export type {
  BackendConnectOptions, EtcdAuthOptions, EtcdConnectOptions,
} from './backend.js';
export { CallAbortedError, type ClientComponents } from './context.js';
export {
  CLIENT_DEFAULTS, CLIENT_ID_LENGTH_MAX, validateClientConfig, type ClientConfig,
  type ClientTlsOptions, type ConnectOptions,
} from './config.js';
export {
  Election, Leadership, type CampaignOptions, type ElectionLeader, type ObserveOptions,
} from './election.js';
export { parseEndpoint, parseEndpointList } from './endpoints.js';
export { Fence, parseFencingToken, type FenceOptions } from './fence.js';
export {
  KvClient, type CasResult, type DeleteOptions, type GetOptions, type GetResult, type PutOptions,
  type RangeOptions, type ReadConsistency, type SignalOptions, type TxnRequest,
} from './kv.js';
export type { ClusterStatus, EndpointStatus, MemberStatus } from './status.js';
export {
  Lease, LeaseClient, type GrantLeaseOptions, type LeaseKeepAliveResult, type LeaseListing,
  type LeaseRevokeResult, type LeaseTimeToLive, type TimeToLiveOptions,
} from './lease.js';
export { Lock, type LockOptions } from './lock.js';
export {
  parseTaskRecord, runOnce, taskKey, TASK_RECORD_BYTES_MAX, type RunOnceResult, type TaskCompletion,
  type TaskRecord, type TaskRun,
} from './run-once.js';
export {
  Holding, HoldingEndedError, HoldingReleasedError, LeadershipLostError, RecipeAbortedError,
  RECIPE_TTL_MS_DEFAULT, STALL_TICK_INTERVAL_MS, type LeadershipLossReason,
} from './recipe-driver.js';
export {
  Watch, WatchCompactedError, type WatchOptions, type WatchSelector,
} from './watch.js';
export type {
  KeyValue, KvCompare, KvDeleteResult, KvEvent, KvPutResult, KvRangeResult, KvTxnOp,
  KvTxnResult,
} from '../core/kv/types.js';
// The ports a client runs on (ClientComponents), for those who bring their own.
export type { Clock } from '../ports/clock.js';
export type { Timer, TimerHandle } from '../ports/timer.js';
export type { Random } from '../core/random.js';
export type {
  ClientAnswer, ClientEndpoint, ClientRequest, ClientTransport, KeepAliveAnswer, LeaseStream,
  LeaseStreamOpening, WatchFrame, WatchOpening, WatchRequest, WatchStream,
} from '../ports/client-transport.js';
