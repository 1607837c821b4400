/**
 * The key-value API: etcd v3 semantics (revisions, prefix ranges, transactions with compares)
 * over the client protocol. Writes go to the leader with an idempotency key per request;
 * linearizable reads are answered by the leader after it confirmed its leadership (ReadIndex);
 * serializable reads are
 * answered by whichever member is reached (possibly stale, still available without a leader).
 */
import type {
  KeyValue, KvCompactResult, KvCompare, KvDeleteResult, KvPutResult, KvRangeResult, KvTxnOp,
  KvTxnResult,
} from '../core/kv/types.js';
import type { ClientRequest } from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import type { Caller } from './caller.js';
import type { LaneTicket, WriteLanes } from './lanes.js';

/** How fresh a read must be. */
export type ReadConsistency = 'linearizable' | 'serializable';

/** What every call takes. */
export interface SignalOptions {
  /**
   * Ends the call at once: it rejects with an AbortError (a CoordError, `cause` the signal's
   * reason) whose `outcome` is `failed` when no request had left, `unknown` when one may have
   * reached a member. Pass a leadership's or lock's `signal` to stop its writes when it ends.
   */
  readonly signal?: AbortSignal | undefined;
}

export interface GetOptions extends SignalOptions {
  /**
   * `linearizable` reflects every write acknowledged before the read began (served by the
   * leader). `serializable` is one member's state, maybe stale, but needs no leader.
   * Default: 'linearizable'.
   */
  readonly consistency?: ReadConsistency;
  /** Read as of this revision (while the history holds it). Default: the current one. */
  readonly revision?: number;
}

export interface RangeOptions extends GetOptions {
  /** At most this many key-values (the result's `more` says there were more). Default: all. */
  readonly limit?: number;
}

export interface PutOptions extends SignalOptions {
  /** Return the key's previous state as `prevKv`. Default: false. */
  readonly prevKv?: boolean;
  /**
   * Attach the key to this lease: it is deleted when the lease ends. Rejects with
   * CONCLAVE_LEASE_EXPIRED when the lease does not exist. Default: no lease (a put without one
   * detaches the key from any lease).
   */
  readonly lease?: number;
}

export interface DeleteOptions extends SignalOptions {
  /** Delete every key starting with `key`. Default: false. */
  readonly prefix?: boolean;
  /** Return the deleted key-values as `prevKvs`. Default: false. */
  readonly prevKv?: boolean;
}

export interface TxnRequest {
  /** Every compare must hold for `success` to run; otherwise `failure` runs. */
  readonly compare: readonly KvCompare[];
  readonly success: readonly KvTxnOp[];
  readonly failure?: readonly KvTxnOp[];
}

export interface GetResult {
  /** The store's revision when it answered. */
  readonly revision: number;
  /** The key's state; absent when the key does not exist. */
  readonly kv?: KeyValue;
}

export interface CasResult {
  /** True when the key held the expected value and now holds the new one. */
  readonly succeeded: boolean;
  readonly revision: number;
  /** After a failure: the key's state that did not match (absent when the key is absent). */
  readonly current?: KeyValue;
}

export class KvClient {
  constructor(private readonly caller: Caller, private readonly lanes: WriteLanes) {}

  /** Sets `key` to `value`. */
  put(key: string, value: string, options: PutOptions = {}): Promise<KvPutResult> {
    return this.write((ticket) => ({ kind: 'put', key, value, ...ticket,
      ...(options.prevKv === true ? { prevKv: true } : {}),
      ...(options.lease === undefined ? {} : { lease: options.lease }) }), options.signal,
    'put') as Promise<KvPutResult>;
  }

  /** Deletes `key` (or every key under it with `prefix`). */
  delete(key: string, options: DeleteOptions = {}): Promise<KvDeleteResult> {
    return this.write((ticket) => ({ kind: 'delete', key, ...ticket,
      ...(options.prefix === true ? { prefix: true } : {}),
      ...(options.prevKv === true ? { prevKv: true } : {}) }), options.signal,
    'delete') as Promise<KvDeleteResult>;
  }

  /**
   * Compacts the history up to `revision` (etcd's Compact): reads at older revisions and
   * watches from at or below it are answered CONCLAVE_KV_COMPACTED from then on. Rejects with
   * CONCLAVE_KV_COMPACTED when it already is, CONCLAVE_KV_FUTURE_REVISION when it is ahead.
   */
  compact(revision: number, options: SignalOptions = {}): Promise<KvCompactResult> {
    return this.write((ticket) => ({ kind: 'compact', revision, ...ticket }), options.signal,
      'compact') as Promise<KvCompactResult>;
  }

  /** Runs `success` if every compare holds, else `failure`, atomically at one revision. */
  txn(request: TxnRequest, options: SignalOptions = {}): Promise<KvTxnResult> {
    return this.write((ticket) => ({ kind: 'txn', compare: request.compare,
      success: request.success, failure: request.failure ?? [], ...ticket }), options.signal,
    'txn') as Promise<KvTxnResult>;
  }

  /**
   * Compare-and-swap: sets `key` to `value` only if it now holds `expected` (`undefined`:
   * only if it is absent). On failure, `current` is what the key held instead.
   */
  async cas(key: string, expected: string | undefined, value: string,
    options: SignalOptions = {}): Promise<CasResult> {
    const compare: KvCompare = expected === undefined
      ? { key, target: 'version', result: 'equal', version: 0 }
      : { key, target: 'value', result: 'equal', value: expected };
    const result = await this.txn({ compare: [compare],
      success: [{ kind: 'put', key, value }], failure: [{ kind: 'range', key }] }, options);
    if (result.succeeded) return { succeeded: true, revision: result.revision };
    const read = result.responses[0];
    const current = read?.kind === 'range' ? read.kvs[0] : undefined;
    return { succeeded: false, revision: result.revision, ...(current ? { current } : {}) };
  }

  /** The key's state (`kv` absent when the key does not exist) and the store's revision. */
  async get(key: string, options: GetOptions = {}): Promise<GetResult> {
    const result = await this.read(key, false, undefined, options);
    const kv = result.kvs[0];
    return { revision: result.revision, ...(kv === undefined ? {} : { kv }) };
  }

  /** The keys starting with `prefix` (the empty prefix: every key), in key order. */
  range(prefix: string, options: RangeOptions = {}): Promise<KvRangeResult> {
    return this.read(prefix, true, options.limit, options);
  }

  private async read(key: string, prefix: boolean, limit: number | undefined,
    options: GetOptions): Promise<KvRangeResult> {
    const consistency = options.consistency ?? 'linearizable';
    const base = { kind: 'range', key, consistency,
      ...(prefix ? { prefix: true } : {}), ...(limit === undefined ? {} : { limit }),
      ...(options.revision === undefined ? {} : { revision: options.revision }) } as const;
    const { signal } = options;
    // A linearizable read is answered by the leader after a ReadIndex round (no log entry,
    // no idempotency key): it takes no write lane, so reads never queue behind writes.
    const body = await this.caller.call(base,
      { leaderOnly: consistency === 'linearizable', signal });
    return expectKind(body, 'range') as KvRangeResult;
  }

  private async write(request: (ticket: LaneTicket) => ClientRequest,
    signal: AbortSignal | undefined, kind: string): Promise<unknown> {
    const answer = await this.lanes.with((ticket) => this.caller.call(request(ticket),
      { leaderOnly: true, signal }), signal);
    return expectKind(answer, kind);
  }
}

/** Checks the answer's shape; a mismatch after a write means we cannot tell what happened. */
function expectKind(body: unknown, kind: string): unknown {
  const actual = (body as { kind?: unknown } | undefined)?.kind;
  if (actual !== kind || typeof (body as { revision?: unknown }).revision !== 'number') {
    throw new CoordError('CONCLAVE_PROTOCOL',
      `expected a '${kind}' result with a revision, got ${JSON.stringify(body).slice(0, 200)}`,
      { outcome: kind === 'range' ? 'failed' : 'unknown' });
  }
  return body;
}
