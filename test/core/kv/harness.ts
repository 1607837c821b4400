/**
 * Test helpers for the key-value store: a driver that stamps commands (client, sequence, log
 * time) and applies them at growing log indexes, and small builders for ops and compares.
 */
import assert from 'node:assert/strict';
import { KvStore, KV_STORE_DEFAULTS } from '../../../src/core/kv/index.js';
import type {
  KvApplyResult, KvCommand, KvCompare, KvCompareResult, KvErrorResult, KvStoreConfig, KvTxnOp,
} from '../../../src/core/kv/index.js';

type Unstamped<C> = C extends unknown ? Omit<C, 'clientId' | 'sequence' | 'nowMs'> : never;
export type KvCommandBody = Unstamped<KvCommand>;

export const START_MS = 1_700_000_000_000;

/** Applies commands to one store as one client (or several), stamping each. */
export class Driver {
  readonly store: KvStore;
  index = 0;
  nowMs = START_MS;
  private readonly sequences = new Map<string, number>();

  constructor(config: Partial<KvStoreConfig> = {}) {
    this.store = new KvStore({ ...KV_STORE_DEFAULTS, ...config });
  }

  /** Stamps `body` with the client's next sequence and the current time. */
  stamp(body: KvCommandBody, clientId = 'c1'): KvCommand {
    const sequence = (this.sequences.get(clientId) ?? 0) + 1;
    this.sequences.set(clientId, sequence);
    return { ...body, clientId, sequence, nowMs: this.nowMs } as KvCommand;
  }

  /** Applies `command` (already stamped) at the next log index. */
  applyStamped(command: KvCommand): KvApplyResult {
    this.index += 1;
    return this.store.apply(this.index, command);
  }

  run(body: KvCommandBody, clientId = 'c1'): KvApplyResult {
    return this.applyStamped(this.stamp(body, clientId));
  }

  put(key: string, value: string, clientId = 'c1'): KvApplyResult {
    return this.run({ kind: 'put', key, value }, clientId);
  }

  del(key: string, prefix = false): KvApplyResult {
    return this.run({ kind: 'delete', key, prefix });
  }

  txn(compare: KvCompare[], success: KvTxnOp[], failure: KvTxnOp[] = []): KvApplyResult {
    return this.run({ kind: 'txn', compare, success, failure });
  }
}

export function cmp(
  key: string,
  target: 'version' | 'createRevision' | 'modRevision',
  result: KvCompareResult,
  operand: number,
): KvCompare;
export function cmp(
  key: string,
  target: 'value',
  result: KvCompareResult,
  operand: string,
): KvCompare;
export function cmp(
  key: string,
  target: KvCompare['target'],
  result: KvCompareResult,
  operand: number | string,
): KvCompare {
  return { key, target, result, [target]: operand } as unknown as KvCompare;
}

/** Narrows `result` to `kind`, failing the test otherwise. */
export function expectKind<K extends KvApplyResult['kind']>(
  result: KvApplyResult,
  kind: K,
): Extract<KvApplyResult, { kind: K }> {
  assert.equal(result.kind, kind, `expected ${kind}, got ${JSON.stringify(result)}`);
  return result as Extract<KvApplyResult, { kind: K }>;
}

export function expectError(result: { kind: string }, code: string): KvErrorResult['error'] {
  assert.equal(result.kind, 'error', `expected error ${code}, got ${JSON.stringify(result)}`);
  const error = (result as KvErrorResult).error;
  assert.equal(error.code, code, `expected ${code}, got ${JSON.stringify(error)}`);
  return error;
}
