/**
 * Configuration of the key-value store: request limits, history retention and the idempotent
 * receiver's memory. Every replica must run with the same values: they decide what `apply`
 * accepts and what it forgets, so they are part of the replicated state machine's definition.
 */
import type { ConfigProblem } from '../config.js';

export interface KvStoreConfig {
  /**
   * Longest key. Unit: bytes (UTF-8). Default: 4096.
   * Why: generous for hierarchical names (Kubernetes keys stay well under 512 bytes) while
   * bounding the cost of compares, sorting and the history. etcd has no separate key limit
   * (only its request limit); ZooKeeper paths are similar in practice.
   */
  readonly keyBytesMax: number;
  /**
   * Largest value. Unit: bytes (UTF-8). Default: 1.5 MiB (1 572 864).
   * Why: etcd's `--max-request-bytes` default, so a value etcd accepts is accepted here. Large
   * values slow every replica's apply, snapshots and watchers; keep coordination data small.
   */
  readonly valueBytesMax: number;
  /**
   * Largest encoded command (one log entry's data). Unit: bytes. Default: 2 MiB (2 097 152).
   * Why: room for one maximal value plus its key, stamp and encoding overhead; it also bounds a
   * whole transaction. Must not exceed what Raft accepts for one entry (its
   * `bytesPerMessageMax` minus the entry overhead), or valid commands are refused at proposal.
   */
  readonly commandBytesMax: number;
  /**
   * Most compares, and most ops in each branch, of one transaction. Unit: count.
   * Default: 128 (etcd's `--max-txn-ops`). Trade-off: bigger transactions hold the apply loop
   * longer and make larger log entries.
   */
  readonly txnOpsMax: number;
  /**
   * Longest client id. Unit: bytes (UTF-8). Default: 128 (room for a UUID with a prefix).
   * Why: the id is kept per client for `clientIdleMsMax`; a bound keeps that table small.
   */
  readonly clientIdBytesMax: number;
  /**
   * Events kept for watchers and reads at older revisions. Once the history holds more, the
   * oldest revisions are dropped whole (auto-compaction); the newest revision is always kept,
   * however many events it has. Unit: events. Default: 10 000.
   * Trade-off: a watcher more than this many events behind gets `compacted` and must re-list;
   * memory grows with it (see `historyBytesMax`).
   */
  readonly historyEventsMax: number;
  /**
   * Memory the history may hold, estimated as 2 bytes per UTF-16 code unit of each event's key,
   * value and previous value, plus `KV_EVENT_OVERHEAD_BYTES` per event. Past it the oldest
   * revisions are dropped, as for `historyEventsMax`. Unit: bytes. Default: 64 MiB.
   * Why: with values up to 1.5 MiB, 10 000 events could otherwise take gigabytes.
   */
  readonly historyBytesMax: number;
  /**
   * Clients whose latest sequence, digest and result are remembered. Past it the client applied
   * least recently (by log index) is forgotten; its next retry of an old request would be
   * applied again. Unit: clients. Default: 10 000.
   * Trade-off: with `clientsBytesMax` this bounds the table; most records are small (a put's
   * answer is its revision), about 150 bytes each plus the client id.
   */
  readonly clientsMax: number;
  /**
   * Memory the idempotency records may take in all, estimated as `clientRecordSizeBytes` does
   * (2 bytes per UTF-16 unit of the client id and of every string kept in the result, plus
   * fixed overheads). Past it the least recently applied clients are forgotten, as for
   * `clientsMax`. Unit: bytes. Default: 16 MiB.
   * Why: 10 000 clients of ordinary results take under 3 MiB; the bound is for results kept
   * whole up to `clientResultBytesMax` (4 096 such records). Before this bound, 600 puts of
   * 1000 KiB with prevKv from fresh client ids took 1.3 GB on every replica (issue #14).
   */
  readonly clientsBytesMax: number;
  /**
   * The largest answer kept whole for a retry, estimated like `clientsBytesMax`. A larger one
   * is kept trimmed: without its key-values (`prevKv`, `prevKvs`, a transaction's range `kvs`),
   * marked `trimmed: true`; a retry gets that. Unit: bytes. Default: 4096.
   * Why: what a retry needs is the outcome and its revision; the recipes' transactions
   * (elections, locks, compare-and-swap) read one small key and stay whole, so their retries
   * still see what the first attempt read.
   */
  readonly clientResultBytesMax: number;
  /**
   * A client with no command applied for longer than this (in log time: the leader-stamped
   * `nowMs` of the commands) is forgotten. Unit: ms. Default: 3 600 000 (1 hour).
   * Why: far longer than any client retries a request (seconds to a minute), so a retry finds
   * its record; short enough that clients gone for good free their memory within the hour.
   */
  readonly clientIdleMsMax: number;
  /**
   * Most leases held at once; a grant beyond it fails with `lease-limit`. Unit: leases.
   * Default: 100 000. Why: each lease costs the leader a deadline and every replica a record
   * (about 200 bytes plus its keys' names); etcd has no limit, but every queue here has one.
   */
  readonly leasesMax: number;
  /**
   * Longest lease TTL a grant may ask for. Unit: ms. Default: 2 592 000 000 (30 days).
   * Why: a lease that outlives its holder by a month is a leak, not a lease; long-lived data
   * belongs in plain keys. (The shortest TTL depends on Raft timing: the server checks it.)
   */
  readonly leaseTtlMsMax: number;
  /** TEST-ONLY planted bugs, see {@link KvMutants}. Default: absent (no mutant). */
  readonly mutants?: KvMutants;
}

/**
 * TEST-ONLY planted bugs in the store. Each flag turns on one clearly marked branch that breaks
 * a rule, so the simulator (`conclave sim --scenario core --mutant NAME`) can prove a checker
 * catches it. Production configs leave `mutants` out.
 */
export interface KvMutants {
  /**
   * The idempotency check dropped: a retry of the latest applied request of a client (same id,
   * sequence and digest) is applied again instead of answered from its saved result.
   */
  readonly retryReapplied: boolean;
}

/** Estimated memory of one history event apart from its strings (objects, numbers). */
export const KV_EVENT_OVERHEAD_BYTES = 100;

/**
 * Counted per live key by `KvStore.keyspaceBytes` besides its key and value characters (the
 * record, its Map entry and its place in the ordered index). Unit: bytes.
 */
export const KV_KEY_OVERHEAD_BYTES = 64;

const MIB = 1024 * 1024;

/** The defaults, suited to a consistent core on a LAN and to tests alike. */
export const KV_STORE_DEFAULTS: KvStoreConfig = Object.freeze({
  keyBytesMax: 4096,
  valueBytesMax: 1.5 * MIB,
  commandBytesMax: 2 * MIB,
  txnOpsMax: 128,
  clientIdBytesMax: 128,
  historyEventsMax: 10_000,
  historyBytesMax: 64 * MIB,
  clientsMax: 10_000,
  clientsBytesMax: 16 * MIB,
  clientResultBytesMax: 4096,
  clientIdleMsMax: 3_600_000,
  leasesMax: 100_000,
  leaseTtlMsMax: 30 * 24 * 3_600_000,
});

/** Bytes an encoded put needs beyond its key, value and client id (field names, numbers). */
export const KV_PUT_ENCODING_SLACK_BYTES = 256;

/** Every rule `config` breaks; empty when it is valid. */
export function validateKvStoreConfig(config: KvStoreConfig): readonly ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const fields: readonly (keyof KvStoreConfig)[] = [
    'keyBytesMax', 'valueBytesMax', 'commandBytesMax', 'txnOpsMax', 'clientIdBytesMax',
    'historyEventsMax', 'historyBytesMax', 'clientsMax', 'clientsBytesMax',
    'clientResultBytesMax', 'clientIdleMsMax', 'leasesMax',
    'leaseTtlMsMax',
  ];
  for (const field of fields) {
    const value = config[field];
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      problems.push({ field, value, rule: 'must be an integer >= 1' });
    }
  }
  if (problems.length > 0) return problems;
  const { keyBytesMax, valueBytesMax, clientIdBytesMax, commandBytesMax } = config;
  const largestPutBytes = keyBytesMax + valueBytesMax + clientIdBytesMax
    + KV_PUT_ENCODING_SLACK_BYTES;
  if (commandBytesMax < largestPutBytes) {
    problems.push({
      field: 'commandBytesMax,keyBytesMax,valueBytesMax,clientIdBytesMax',
      value: { commandBytesMax, keyBytesMax, valueBytesMax, clientIdBytesMax },
      rule: `commandBytesMax must be at least keyBytesMax + valueBytesMax + clientIdBytesMax + `
        + `${KV_PUT_ENCODING_SLACK_BYTES} (${largestPutBytes}), or a put within the limits `
        + 'cannot be encoded',
    });
  }
  return problems;
}
