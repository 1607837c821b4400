/**
 * Goal: the server can reject every bad command before it reaches the log, learning every
 * broken rule at once. Method: commands that break one or many rules (stamp, key and value
 * limits, txn size, write conflicts, integers), checking the exact list of fields reported;
 * valid edge cases (limits exactly met, empty prefix) report nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  KV_STORE_DEFAULTS, validateKvCommand, validateKvRangeRequest, validateKvWatchRequest,
} from '../../../src/core/kv/index.js';
import type { KvCommand, KvStoreConfig, KvTxnOp } from '../../../src/core/kv/index.js';

const config: KvStoreConfig = { ...KV_STORE_DEFAULTS, keyBytesMax: 8, valueBytesMax: 16,
  txnOpsMax: 3, clientIdBytesMax: 4 };
const stamp = { clientId: 'c1', sequence: 1, nowMs: 0 };
const fields = (command: KvCommand): string[] =>
  validateKvCommand(command, config).map((p) => p.field);
const txn = (success: KvTxnOp[], failure: KvTxnOp[] = []): KvCommand =>
  ({ kind: 'txn', ...stamp, compare: [], success, failure });

describe('kv: validate', () => {
  test('a command exactly at the limits is valid', () => {
    assert.deepEqual(fields({ kind: 'put', clientId: 'abcd', sequence: 1, nowMs: 0,
      key: 'é'.repeat(4), value: '😀'.repeat(4) }), []);
    assert.deepEqual(fields({ kind: 'delete', ...stamp, key: '', prefix: true }), []);
  });

  test('every broken rule is reported at once', () => {
    assert.deepEqual(fields({ kind: 'put', clientId: 'abcde', sequence: 0, nowMs: 1.5,
      key: 'é'.repeat(5), value: 'x'.repeat(17) }), ['clientId', 'sequence', 'nowMs', 'key',
      'value']);
  });

  test('keys must be non-empty unless they are a prefix, and well-formed', () => {
    assert.deepEqual(fields({ kind: 'put', ...stamp, key: '', value: '' }), ['key']);
    assert.deepEqual(fields({ kind: 'delete', ...stamp, key: '' }), ['key']);
    assert.deepEqual(fields({ kind: 'put', ...stamp, key: 'a\ud800', value: '\udc00' }),
      ['key', 'value']);
  });

  test('a txn may have at most txnOpsMax compares and ops per branch', () => {
    const put = (key: string): KvTxnOp => ({ kind: 'put', key, value: '' });
    const compare = Array.from({ length: 4 }, () =>
      ({ key: 'a', target: 'version' as const, result: 'equal' as const, version: 0 }));
    assert.deepEqual(fields({ kind: 'txn', ...stamp, compare,
      success: ['a', 'b', 'c', 'd'].map(put), failure: ['a', 'b', 'c'].map(put) }),
    ['compare', 'success']);
  });

  test('a branch may not write a key twice, nor put a key it deletes', () => {
    assert.deepEqual(fields(txn([{ kind: 'put', key: 'a', value: '1' },
      { kind: 'put', key: 'a', value: '2' }])), ['success[1].key']);
    assert.deepEqual(fields(txn([], [{ kind: 'put', key: 'a/1', value: '1' },
      { kind: 'delete', key: 'a/', prefix: true }])), ['failure[1]']);
    // The same key in both branches, overlapping deletes and reads of a written key are fine.
    assert.deepEqual(fields(txn([{ kind: 'put', key: 'a', value: '1' },
      { kind: 'range', key: 'a' }, { kind: 'delete', key: 'b' }],
    [{ kind: 'put', key: 'a', value: '2' }, { kind: 'delete', key: 'b', prefix: true },
      { kind: 'delete', key: 'b' }])), []);
  });

  test('compare operands and ranges are checked', () => {
    assert.deepEqual(fields({ kind: 'txn', ...stamp, success: [], failure: [], compare: [
      { key: 'a', target: 'version', result: 'equal', version: -1 },
      { key: '', target: 'modRevision', result: 'equal', modRevision: 1 },
      { key: 'a', target: 'value', result: 'equal', value: 'x'.repeat(17) },
    ] }), ['compare[0].version', 'compare[1].key', 'compare[2].value']);
    assert.deepEqual(fields(txn([{ kind: 'range', key: 'a', limit: 0.5 }])), ['success[0].limit']);
  });

  test('compact needs a revision of at least 1', () => {
    assert.deepEqual(fields({ kind: 'compact', ...stamp, revision: 0 }), ['revision']);
  });

  test('range and watch requests are checked the same way', () => {
    assert.deepEqual(validateKvRangeRequest({ key: 'x'.repeat(9), limit: -1, revision: -1 },
      config).map((p) => p.field), ['key', 'limit', 'revision']);
    assert.deepEqual(validateKvRangeRequest({ key: '', prefix: true, limit: 0, revision: 0 },
      config), []);
    assert.deepEqual(validateKvWatchRequest(0, { key: '' }, 1.5, config).map((p) => p.field),
      ['fromRevision', 'key', 'limit']);
  });
});
