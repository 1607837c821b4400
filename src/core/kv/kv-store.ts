/**
 * The replicated key-value state machine: etcd v3's MVCC semantics over an in-memory key space,
 * a bounded event history and an idempotent receiver. Every replica applies the same committed
 * entries in the same order and reaches the same state: `apply` reads no clock and no
 * randomness (log time is the leader's `nowMs` stamped in each command).
 */
import { assert, assertNever } from '../assert.js';
import { formatConfigProblems } from '../config.js';
import type { Entry } from '../raft/types.js';
import { ClientTable, type KvClientRecord } from './client-table.js';
import { decodeKvCommand } from './codec.js';
import { KV_STORE_DEFAULTS, validateKvStoreConfig, type KvStoreConfig } from './config.js';
import { EventHistory } from './history.js';
import { KeySpace } from './key-space.js';
import { checkKvSnapshot, KV_SNAPSHOT_FORMAT, type KvSnapshot } from './snapshot.js';
import { compareKeys } from './text.js';
import type {
  KeyValue, KvApplyResult, KvCommand, KvCompare, KvCompareResult, KvError, KvErrorResult,
  KvEvent, KvEventsResult, KvKeySelector, KvRangeRequest, KvRangeResponse, KvRangeResult,
  KvTxnOp, KvTxnOpResponse,
} from './types.js';
import {
  validateKvCommand, validateKvRangeRequest, validateKvWatchRequest,
} from './validate.js';

/** The revision of an empty store, as in etcd; the first change makes revision 2. */
export const KV_INITIAL_REVISION = 1;

const STAMP_FIELDS: ReadonlySet<string> = new Set(['clientId', 'sequence', 'nowMs']);

export function kvError(error: KvError): KvErrorResult {
  return { kind: 'error', error };
}

export class KvStore {
  readonly config: KvStoreConfig;
  private readonly keys = new KeySpace();
  private history = new EventHistory();
  private clients = new ClientTable();
  private revisionValue = KV_INITIAL_REVISION;
  private appliedIndexValue = 0;
  private logTimeMsValue = 0;

  constructor(config: KvStoreConfig = KV_STORE_DEFAULTS) {
    const problems = validateKvStoreConfig(config);
    assert(problems.length === 0, () => `invalid kv config:\n${formatConfigProblems(problems)}`);
    this.config = config;
  }

  /** A store holding exactly the state `snapshot` describes (see `decodeKvSnapshot`). */
  static fromSnapshot(snapshot: KvSnapshot, config: KvStoreConfig = KV_STORE_DEFAULTS): KvStore {
    const problems = checkKvSnapshot(snapshot);
    assert(problems.length === 0, () => `unusable kv snapshot: ${problems.join('; ')}`);
    const store = new KvStore(config);
    for (const kv of snapshot.kvs) store.keys.set(kv);
    store.history = new EventHistory(snapshot.compactRevision, snapshot.events);
    store.clients = new ClientTable(snapshot.clients);
    store.revisionValue = snapshot.revision;
    store.appliedIndexValue = snapshot.appliedIndex;
    store.logTimeMsValue = snapshot.logTimeMs;
    return store;
  }

  /** The store's revision: 1 when empty, +1 for each command that changed a key. */
  get revision(): number {
    return this.revisionValue;
  }

  /** Reads below it and watches from it or below answer `compacted`; 0 until a compaction. */
  get compactRevision(): number {
    return this.history.compactRevision;
  }

  /** Index of the latest log entry applied; 0 before the first. */
  get appliedIndex(): number {
    return this.appliedIndexValue;
  }

  /** The highest leader-stamped time seen in applied commands (never decreases). Unit: ms. */
  get logTimeMs(): number {
    return this.logTimeMsValue;
  }

  get keyCount(): number {
    return this.keys.size;
  }

  get clientCount(): number {
    return this.clients.size;
  }

  get historyEventCount(): number {
    return this.history.size;
  }

  /** Estimated memory held by the history (see `KvStoreConfig.historyBytesMax`). Unit: bytes. */
  get historySizeBytes(): number {
    return this.history.sizeBytes;
  }

  /** The saved record of a client (for diagnostics and tests). */
  clientRecord(clientId: string): KvClientRecord | undefined {
    return this.clients.get(clientId);
  }

  /** Applies a committed `normal` Raft entry: decodes it (a bad entry gives an error result). */
  applyEntry(entry: Entry): KvApplyResult {
    assert(entry.kind === 'normal', () => `kv: only normal entries carry commands: ${entry.kind}`);
    const decoded = decodeKvCommand(entry.data, this.config.commandBytesMax);
    if (decoded.kind === 'decode-error') {
      this.advanceIndex(entry.index);
      return kvError({ code: 'bad-command', reason: decoded.reason });
    }
    return this.apply(entry.index, decoded);
  }

  /**
   * Applies the command of log entry `index` (greater than every index applied before; gaps
   * are entries without commands). A retry (same client and sequence as the latest applied)
   * returns the saved result and changes nothing; an older sequence gives `duplicate-stale`.
   */
  apply(index: number, command: KvCommand): KvApplyResult {
    this.advanceIndex(index);
    const problems = validateKvCommand(command, this.config);
    // Without a usable stamp there is no client record to consult or keep.
    if (problems.some((p) => STAMP_FIELDS.has(p.field))) {
      return kvError({ code: 'invalid', problems });
    }
    this.logTimeMsValue = Math.max(this.logTimeMsValue, command.nowMs);
    this.clients.expire(this.logTimeMsValue, this.config.clientIdleMsMax);
    const check = this.clients.check(command.clientId, command.sequence);
    if (check.kind === 'retry') return check.result;
    if (check.kind === 'stale') {
      return kvError({ code: 'duplicate-stale', clientId: command.clientId,
        sequence: command.sequence, sequenceApplied: check.sequenceApplied });
    }
    const result = problems.length > 0 ? kvError({ code: 'invalid', problems })
      : this.execute(command);
    this.clients.save({ clientId: command.clientId, sequence: command.sequence,
      appliedAtMs: this.logTimeMsValue, result }, this.config.clientsMax);
    this.history.enforceBounds(this.config.historyEventsMax, this.config.historyBytesMax);
    return result;
  }

  /** The value of `key` now, if it exists. */
  get(key: string): KeyValue | undefined {
    return this.keys.get(key);
  }

  /**
   * Keys as of `request.revision` (default: now), in key order, at most `limit`. Served from
   * this replica's state: linearizable when the caller first waited for a read index.
   */
  range(request: KvRangeRequest): KvRangeResult | KvErrorResult {
    const problems = validateKvRangeRequest(request, this.config);
    if (problems.length > 0) return kvError({ code: 'invalid', problems });
    const at = request.revision ?? 0;
    if (at > this.revisionValue) {
      return kvError({ code: 'future-revision', revision: at,
        currentRevision: this.revisionValue });
    }
    if (at !== 0 && at < this.history.compactRevision) {
      return kvError({ code: 'compacted', compactRevision: this.history.compactRevision });
    }
    const kvs = at === 0 || at === this.revisionValue ? this.keys.select(request)
      : this.selectAt(request, at);
    return { ...rangeResponse(kvs, request.limit ?? 0), revision: this.revisionValue };
  }

  /**
   * Watch events selected by `selector` with revision >= `fromRevision`, in revision order,
   * at most `limit` (0 or absent: all) without splitting a revision. A watcher resumes from
   * `nextRevision`; one that asks from at or below the compact revision gets `compacted` and
   * must re-list (range now, then watch from that range's revision + 1).
   */
  eventsSince(
    fromRevision: number,
    selector: KvKeySelector,
    limit?: number,
  ): KvEventsResult | KvErrorResult {
    const problems = validateKvWatchRequest(fromRevision, selector, limit, this.config);
    if (problems.length > 0) return kvError({ code: 'invalid', problems });
    if (fromRevision <= this.history.compactRevision) {
      return kvError({ code: 'compacted', compactRevision: this.history.compactRevision });
    }
    const found = this.history.since(fromRevision, selector, limit ?? 0, this.revisionValue);
    return { kind: 'events', revision: this.revisionValue, ...found };
  }

  /** The whole state as plain data (see `encodeKvSnapshot`). Shares immutable objects. */
  toSnapshot(): KvSnapshot {
    return {
      format: KV_SNAPSHOT_FORMAT,
      appliedIndex: this.appliedIndexValue,
      revision: this.revisionValue,
      compactRevision: this.history.compactRevision,
      logTimeMs: this.logTimeMsValue,
      kvs: this.keys.all(),
      events: this.history.toArray(),
      clients: this.clients.toArray(),
    };
  }

  private advanceIndex(index: number): void {
    assert(Number.isSafeInteger(index) && index > this.appliedIndexValue,
      () => `kv: apply out of order: index ${index} after ${this.appliedIndexValue}`);
    this.appliedIndexValue = index;
  }

  private execute(command: KvCommand): KvApplyResult {
    switch (command.kind) {
      case 'put': {
        const { key, value, prevKv } = command;
        const op: KvTxnOp = { kind: 'put', key, value, ...(prevKv !== undefined && { prevKv }) };
        const { responses, revision } = this.runOps([op]);
        return { ...(responses[0] as KvTxnOpResponse & { kind: 'put' }), revision };
      }
      case 'delete': {
        const { key, prefix, prevKv } = command;
        const op: KvTxnOp = { kind: 'delete', key, ...(prefix !== undefined && { prefix }),
          ...(prevKv !== undefined && { prevKv }) };
        const { responses, revision } = this.runOps([op]);
        return { ...(responses[0] as KvTxnOpResponse & { kind: 'delete' }), revision };
      }
      case 'txn': {
        // etcd: every compare is evaluated against the state before the transaction.
        const succeeded = command.compare.every((c) => this.compareHolds(c));
        const { responses, revision } = this.runOps(succeeded ? command.success : command.failure);
        return { kind: 'txn', revision, succeeded, responses };
      }
      case 'compact':
        return this.compact(command.revision);
      default:
        return assertNever(command, 'kv command');
    }
  }

  /**
   * Runs ops in order at one new revision (each op sees the earlier ones). The revision only
   * advances when some key changed, as in etcd: a read-only or no-op command keeps it.
   */
  private runOps(ops: readonly KvTxnOp[]): { responses: KvTxnOpResponse[]; revision: number } {
    const revision = this.revisionValue + 1;
    const changes: KvEvent[] = [];
    const responses = ops.map((op) => this.runOp(op, revision, changes));
    if (changes.length > 0) {
      this.revisionValue = revision;
      this.history.append(changes);
    }
    return { responses, revision: this.revisionValue };
  }

  private runOp(op: KvTxnOp, revision: number, changes: KvEvent[]): KvTxnOpResponse {
    switch (op.kind) {
      case 'put': {
        const prev = this.keys.get(op.key);
        const kv: KeyValue = {
          key: op.key,
          value: op.value,
          createRevision: prev?.createRevision ?? revision,
          modRevision: revision,
          version: (prev?.version ?? 0) + 1,
        };
        this.keys.set(kv);
        changes.push(prev === undefined ? { type: 'put', kv } : { type: 'put', kv, prevKv: prev });
        return { kind: 'put', ...(op.prevKv === true && prev !== undefined && { prevKv: prev }) };
      }
      case 'delete': {
        const deleted = this.keys.select(op);
        for (const prev of deleted) {
          this.keys.delete(prev.key);
          const tombstone = { key: prev.key, value: '', createRevision: 0, modRevision: revision,
            version: 0 };
          changes.push({ type: 'delete', kv: tombstone, prevKv: prev });
        }
        return { kind: 'delete', deleted: deleted.length,
          ...(op.prevKv === true && { prevKvs: deleted }) };
      }
      case 'range':
        return rangeResponse(this.keys.select(op), op.limit ?? 0);
      default:
        return assertNever(op, 'kv txn op');
    }
  }

  private compareHolds(c: KvCompare): boolean {
    const kv = this.keys.get(c.key);
    switch (c.target) {
      // etcd: a value compare on an absent key always fails (absent is not the empty string).
      case 'value':
        return kv !== undefined && holds(compareKeys(kv.value, c.value), c.result);
      case 'version':
        return holds(Math.sign((kv?.version ?? 0) - c.version), c.result);
      case 'createRevision':
        return holds(Math.sign((kv?.createRevision ?? 0) - c.createRevision), c.result);
      case 'modRevision':
        return holds(Math.sign((kv?.modRevision ?? 0) - c.modRevision), c.result);
      default:
        return assertNever(c, 'kv compare');
    }
  }

  /** etcd's Compact: no new revision; a revision at or below the compacted one is an error. */
  private compact(revision: number): KvApplyResult {
    const compactRevision = this.history.compactRevision;
    if (revision <= compactRevision) return kvError({ code: 'compacted', compactRevision });
    if (revision > this.revisionValue) {
      return kvError({ code: 'future-revision', revision, currentRevision: this.revisionValue });
    }
    this.history.compact(revision);
    return { kind: 'compact', revision: this.revisionValue, compactRevision: revision };
  }

  /** The selected keys as of `revision` (>= the compact revision): now, minus later changes. */
  private selectAt(selector: KvKeySelector, revision: number): KeyValue[] {
    const overlay = this.history.undoAfter(revision, selector);
    const unchanged = this.keys.select(selector).filter((kv) => !overlay.has(kv.key));
    const restored: KeyValue[] = [];
    for (const kv of overlay.values()) if (kv !== undefined) restored.push(kv);
    // Both lists are sorted and disjoint: merge them (sorting only the usually short one).
    restored.sort((a, b) => compareKeys(a.key, b.key));
    const merged: KeyValue[] = [];
    let i = 0;
    let j = 0;
    while (i < unchanged.length || j < restored.length) {
      const a = unchanged[i];
      const b = restored[j];
      if (b === undefined || (a !== undefined && compareKeys(a.key, b.key) < 0)) {
        merged.push(a as KeyValue);
        i++;
      } else {
        merged.push(b);
        j++;
      }
    }
    return merged;
  }
}

function holds(order: number, result: KvCompareResult): boolean {
  switch (result) {
    case 'equal': return order === 0;
    case 'not-equal': return order !== 0;
    case 'greater': return order > 0;
    case 'less': return order < 0;
    default: return assertNever(result, 'compare result');
  }
}

function rangeResponse(kvs: KeyValue[], limit: number): KvRangeResponse {
  const more = limit > 0 && kvs.length > limit;
  return { kind: 'range', kvs: more ? kvs.slice(0, limit) : kvs, more, count: kvs.length };
}
