/**
 * The replicated key-value state machine: etcd v3's MVCC semantics over an in-memory key space,
 * a bounded event history and an idempotent receiver. Every replica applies the same committed
 * entries in the same order and reaches the same state: `apply` reads no clock and no
 * randomness (log time is the leader's `nowMs` stamped in each command).
 */
import { assert, assertNever } from '../assert.js';
import { formatConfigProblems } from '../config.js';
import type { Entry } from '../raft/types.js';
import { AuthTable } from './auth.js';
import { commandDenial } from './authorize.js';
import { ClientTable, trimResult, type KvClientRecord } from './client-table.js';
import { decodeKvCommand } from './codec.js';
import { kvCommandDigest } from './digest.js';
import { KV_STORE_DEFAULTS, validateKvStoreConfig, type KvStoreConfig } from './config.js';
import { EventHistory } from './history.js';
import { KeySpace } from './key-space.js';
import { LeaseTable } from './lease-table.js';
import { checkKvSnapshot, KV_SNAPSHOT_FORMAT, type KvSnapshot } from './snapshot.js';
import { kvSectionBytes, type KvSnapshotSource } from './snapshot-sections.js';
import { compareKeys } from './text.js';
import type {
  KeyValue, KvApplyResult, KvClientCommand, KvCommand, KvCompare, KvCompareResult, KvError,
  KvErrorResult, KvEvent, KvEventsResult, KvKeySelector, KvLease, KvLeaseExpireResult,
  KvLeaseRemaining, KvLeaseSystemCommand, KvRangeRequest, KvRangeResponse, KvRangeResult,
  KvProblem, KvTxnOp, KvTxnOpResponse,
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

const SYSTEM_KINDS: ReadonlySet<string> = new Set(['lease-checkpoint', 'lease-renew',
  'lease-expire']);

/** True for the leader's own lease bookkeeping (no client stamp, no idempotency record). */
export function isLeaseSystemCommand(command: KvCommand): command is KvLeaseSystemCommand {
  return SYSTEM_KINDS.has(command.kind);
}

/** A snapshot source that records nothing once released (see `KvStore.captureSnapshot`). */
export interface KvSnapshotCapture extends KvSnapshotSource {
  release(): void;
}

export class KvStore {
  readonly config: KvStoreConfig;
  private keys = new KeySpace();
  private history = new EventHistory();
  private clients = new ClientTable();
  private leaseTable = new LeaseTable();
  private authTable = new AuthTable();
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
    const store = new KvStore(config);
    store.restore(snapshot);
    return store;
  }

  /**
   * Replaces the whole state with `snapshot`'s (a checked one: see `decodeKvSnapshot`), as
   * when a replica installs the leader's snapshot. Captures taken before stay as they were.
   */
  restore(snapshot: KvSnapshot): void {
    const problems = checkKvSnapshot(snapshot);
    assert(problems.length === 0, () => `unusable kv snapshot: ${problems.join('; ')}`);
    this.keys = new KeySpace();
    this.keys.loadSorted(snapshot.kvs);
    this.history = new EventHistory(snapshot.compactRevision, snapshot.events);
    // Records of older versions kept whole answers: trimmed and bounded as a save would.
    this.clients = new ClientTable();
    for (const record of snapshot.clients) {
      this.clients.save({ ...record, result: trimResult(record.result,
        this.config.clientResultBytesMax) }, this.config.clientsMax, this.config.clientsBytesMax);
    }
    this.leaseTable = new LeaseTable(snapshot.leases);
    this.authTable = new AuthTable(snapshot.auth);
    for (const kv of snapshot.kvs) {
      if (kv.lease !== undefined) this.leaseTable.attach(kv.lease, kv.key);
    }
    this.revisionValue = snapshot.revision;
    this.appliedIndexValue = snapshot.appliedIndex;
    this.logTimeMsValue = snapshot.logTimeMs;
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

  /** Estimated memory of the idempotency records (`KvStoreConfig.clientsBytesMax`). */
  get clientsSizeBytes(): number {
    return this.clients.sizeBytes;
  }

  /**
   * Estimated memory of the live keys: one byte per UTF-16 unit of each key and value (V8
   * keeps Latin-1 text so; other text takes two) plus `KV_KEY_OVERHEAD_BYTES` per key. The
   * same on every replica at the same applied index; the server's space quota counts it.
   * Unit: bytes.
   */
  get keyspaceBytes(): number {
    return this.keys.sizeBytes;
  }

  get historyEventCount(): number {
    return this.history.size;
  }

  /** Estimated memory held by the history (see `KvStoreConfig.historyBytesMax`). Unit: bytes. */
  get historySizeBytes(): number {
    return this.history.sizeBytes;
  }

  /** Users, roles and whether auth is on (read-only outside apply). */
  get auth(): AuthTable {
    return this.authTable;
  }

  get leaseCount(): number {
    return this.leaseTable.size;
  }

  /** The lease's replicated record, if it exists. */
  lease(id: number): KvLease | undefined {
    return this.leaseTable.get(id);
  }

  /** Every lease, in id order. */
  leases(): KvLease[] {
    return this.leaseTable.all();
  }

  /** The keys attached to the lease, in key order (empty when it does not exist). */
  leaseKeys(id: number): string[] {
    return this.leaseTable.keysOf(id);
  }

  leaseKeyCount(id: number): number {
    return this.leaseTable.keyCountOf(id);
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
   * are entries without commands). A retry (same client, sequence and digest as the latest
   * applied) returns the saved result and changes nothing; the same client and sequence with
   * another command gives `idempotency-mismatch`; an older sequence gives `duplicate-stale`.
   * A command without clientId and sequence is applied as it comes, with no record.
   */
  apply(index: number, command: KvCommand): KvApplyResult {
    this.advanceIndex(index);
    const problems = validateKvCommand(command, this.config);
    if (isLeaseSystemCommand(command)) return this.applySystem(command, problems);
    // Without a usable stamp there is no client record to consult or keep.
    if (problems.some((p) => STAMP_FIELDS.has(p.field))) {
      return kvError({ code: 'invalid', problems });
    }
    this.logTimeMsValue = Math.max(this.logTimeMsValue, command.nowMs);
    this.clients.expire(this.logTimeMsValue, this.config.clientIdleMsMax);
    const { clientId, sequence } = command;
    if (clientId === undefined || sequence === undefined) {
      return this.executeChecked(index, command, problems);
    }
    const digest = kvCommandDigest(command);
    // A clientId is its principal's: another user's retry under the same id is a new client.
    const recordId = scopedClientId(command.principal, clientId);
    const check = this.clients.check(recordId, sequence, digest);
    switch (check.kind) {
      case 'retry':
        // MUTANT retryReapplied: the retry runs again (after the original, with its effects).
        if (this.config.mutants?.retryReapplied === true) break;
        return check.result;
      case 'mismatch':
        return kvError({ code: 'idempotency-mismatch', clientId, sequence });
      case 'stale':
        return kvError({ code: 'duplicate-stale', clientId, sequence,
          sequenceApplied: check.sequenceApplied });
      case 'new':
        break;
      default:
        return assertNever(check, 'client check');
    }
    const result = this.executeChecked(index, command, problems);
    this.clients.save({ clientId: recordId, sequence, appliedAtMs: this.logTimeMsValue, digest,
      result: trimResult(result, this.config.clientResultBytesMax) },
    this.config.clientsMax, this.config.clientsBytesMax);
    return result;
  }

  /** Runs a client command that passed (or failed) validation, then bounds the history. */
  private executeChecked(index: number, command: KvClientCommand,
    problems: readonly KvProblem[]): KvApplyResult {
    const result = problems.length > 0 ? kvError({ code: 'invalid', problems })
      : this.denied(command) ?? this.execute(index, command);
    this.history.enforceBounds(this.config.historyEventsMax, this.config.historyBytesMax);
    return result;
  }

  /**
   * The apply-time check (authorize.ts): a command stamped with a principal while auth is on
   * must still be allowed now. Unstamped commands were proposed with auth off (or are the
   * member's own, as automatic compaction), and were allowed then.
   */
  private denied(command: KvClientCommand): KvErrorResult | undefined {
    if (command.principal === undefined || !this.authTable.enabled) return undefined;
    const reason = commandDenial(this.authTable, command.principal, command,
      (id) => this.leaseTable.get(id));
    return reason === undefined ? undefined : kvError({ code: 'permission-denied', reason });
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
      leases: this.leaseTable.all(),
      ...(this.authTable.empty ? {} : { auth: this.authTable.toSnapshot() }),
    };
  }

  /**
   * The whole state as of now, to encode in steps (`KvSnapshotEncoder`) while this store goes
   * on applying: the keys are captured copy-on-write (KeySpace.capture), the history, client
   * records and leases copied (their own bounds keep them small). Release it when done.
   */
  captureSnapshot(): KvSnapshotCapture {
    const keys = this.keys.capture();
    return {
      header: { format: KV_SNAPSHOT_FORMAT, appliedIndex: this.appliedIndexValue,
        revision: this.revisionValue, compactRevision: this.history.compactRevision,
        logTimeMs: this.logTimeMsValue },
      keyCount: keys.size,
      nextKeys: (bytesTarget) => keys.next(bytesTarget, kvSectionBytes),
      rewindKeys: () => keys.rewind(),
      events: this.history.toArray(),
      clients: this.clients.toArray(),
      leases: this.leaseTable.all(),
      ...(this.authTable.empty ? {} : { auth: this.authTable.toSnapshot() }),
      release: () => keys.release(),
    };
  }

  private advanceIndex(index: number): void {
    assert(Number.isSafeInteger(index) && index > this.appliedIndexValue,
      () => `kv: apply out of order: index ${index} after ${this.appliedIndexValue}`);
    this.appliedIndexValue = index;
  }

  /** The leader's lease bookkeeping: no client record; log time still moves. */
  private applySystem(command: KvLeaseSystemCommand, problems: readonly KvProblem[])
    : KvApplyResult {
    if (problems.length > 0) return kvError({ code: 'invalid', problems });
    this.logTimeMsValue = Math.max(this.logTimeMsValue, command.nowMs);
    this.clients.expire(this.logTimeMsValue, this.config.clientIdleMsMax);
    const result = this.executeSystem(command);
    this.history.enforceBounds(this.config.historyEventsMax, this.config.historyBytesMax);
    return result;
  }

  private execute(index: number, command: KvClientCommand): KvApplyResult {
    switch (command.kind) {
      case 'put': {
        // The command is a put op with a stamp besides (runOp reads only the op's fields).
        const op: KvTxnOp = command;
        const missing = this.missingLease([op]);
        if (missing !== undefined) return missing;
        const { responses, revision } = this.runOps([op]);
        return { ...(responses[0] as KvTxnOpResponse & { kind: 'put' }), revision };
      }
      case 'delete': {
        const op: KvTxnOp = command;
        const { responses, revision } = this.runOps([op]);
        return { ...(responses[0] as KvTxnOpResponse & { kind: 'delete' }), revision };
      }
      case 'txn': {
        // etcd: every compare is evaluated against the state before the transaction.
        const succeeded = command.compare.every((c) => this.compareHolds(c));
        const ops = succeeded ? command.success : command.failure;
        const missing = this.missingLease(ops);
        if (missing !== undefined) return missing;
        const { responses, revision } = this.runOps(ops);
        return { kind: 'txn', revision, succeeded, responses };
      }
      case 'compact':
        return this.compact(command.revision);
      case 'lease-grant':
        return this.grantLease(index, command.ttlMs, command.principal);
      case 'auth': {
        const applied = this.authTable.apply(index, command);
        if (applied.kind === 'refused') {
          return kvError({ code: 'auth-refused', reason: applied.reason });
        }
        return { kind: 'auth', revision: this.revisionValue, op: command.op };
      }
      case 'lease-revoke': {
        if (!this.leaseTable.has(command.leaseId)) {
          return kvError({ code: 'lease-not-found', leaseId: command.leaseId });
        }
        const { revision, deleted } = this.endLeases([command.leaseId]);
        return { kind: 'lease-revoke', revision, leaseId: command.leaseId, deleted };
      }
      default:
        return assertNever(command, 'kv command');
    }
  }

  private executeSystem(command: KvLeaseSystemCommand): KvApplyResult {
    switch (command.kind) {
      case 'lease-checkpoint': {
        const recorded: KvLeaseRemaining[] = [];
        for (const { leaseId, remainingMs } of command.leases) {
          const lease = this.leaseTable.get(leaseId);
          if (lease === undefined) continue;
          const clamped = Math.min(remainingMs, lease.ttlMs);
          this.leaseTable.update({ ...lease, remainingMs: clamped, renewing: false });
          recorded.push({ leaseId, remainingMs: clamped });
        }
        return { kind: 'lease-checkpoint', revision: this.revisionValue, leases: recorded };
      }
      case 'lease-renew': {
        const renewed: number[] = [];
        for (const leaseId of command.leaseIds) {
          const lease = this.leaseTable.get(leaseId);
          if (lease === undefined) continue;
          this.leaseTable.update({ ...lease, renewing: true, renewals: lease.renewals + 1 });
          renewed.push(leaseId);
        }
        return { kind: 'lease-renew', revision: this.revisionValue, leaseIds: renewed };
      }
      case 'lease-expire':
        return this.expireLeases(command.leases);
      default:
        return assertNever(command, 'kv lease system command');
    }
  }

  private grantLease(index: number, ttlMs: number, owner: string | undefined): KvApplyResult {
    const { leasesMax } = this.config;
    if (this.leaseTable.size >= leasesMax) return kvError({ code: 'lease-limit', leasesMax });
    // The entry index is unique for the cluster's life, so an id is never reused.
    this.leaseTable.add({ id: index, ttlMs, remainingMs: ttlMs, renewing: false, renewals: 0,
      ...(owner !== undefined && { owner }) });
    return { kind: 'lease-grant', revision: this.revisionValue, leaseId: index, ttlMs };
  }

  /**
   * Revokes the listed expired leases, except one whose renewals moved past the leader's view:
   * a renewal applied after the leader decided means some leader acknowledged a keep-alive.
   */
  private expireLeases(expiries: readonly { leaseId: number; renewals: number }[])
    : KvLeaseExpireResult {
    const expired = new Set<number>();
    const kept: number[] = [];
    for (const { leaseId, renewals } of expiries) {
      const lease = this.leaseTable.get(leaseId);
      if (lease === undefined || expired.has(leaseId)) continue;
      if (lease.renewals > renewals) kept.push(leaseId);
      else expired.add(leaseId);
    }
    const { revision, deleted } = this.endLeases([...expired]);
    return { kind: 'lease-expire', revision, expired: [...expired], kept, deleted };
  }

  /** Deletes every key of the leases at one new revision (none: no revision), then the leases. */
  private endLeases(ids: readonly number[]): { revision: number; deleted: number } {
    const ops: KvTxnOp[] = [];
    for (const id of ids) {
      for (const key of this.leaseTable.keysOf(id)) ops.push({ kind: 'delete', key });
    }
    const { revision } = this.runOps(ops);
    for (const id of ids) this.leaseTable.remove(id);
    return { revision, deleted: ops.length };
  }

  /** etcd: a put naming a lease that does not exist fails the whole request. */
  private missingLease(ops: readonly KvTxnOp[]): KvErrorResult | undefined {
    for (const op of ops) {
      if (op.kind === 'put' && op.lease !== undefined && !this.leaseTable.has(op.lease)) {
        return kvError({ code: 'lease-not-found', leaseId: op.lease });
      }
    }
    return undefined;
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
          ...(op.lease !== undefined && { lease: op.lease }),
        };
        if (prev?.lease !== undefined) this.leaseTable.detach(prev.lease, op.key);
        if (op.lease !== undefined) this.leaseTable.attach(op.lease, op.key);
        this.keys.set(kv);
        changes.push(prev === undefined ? { type: 'put', kv } : { type: 'put', kv, prevKv: prev });
        return { kind: 'put', ...(op.prevKv === true && prev !== undefined && { prevKv: prev }) };
      }
      case 'delete': {
        const deleted = this.keys.select(op);
        for (const prev of deleted) {
          this.keys.delete(prev.key);
          if (prev.lease !== undefined) this.leaseTable.detach(prev.lease, prev.key);
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

/**
 * The idempotency record's key: the clientId alone with auth off, else the principal's name and
 * the clientId joined by a NUL (a user name never holds one, auth.ts), so ids never collide.
 */
function scopedClientId(principal: string | undefined, clientId: string): string {
  return principal === undefined ? clientId : `${principal}\u0000${clientId}`;
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
