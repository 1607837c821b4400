/**
 * Goal: the store's defaults are valid and a bad config is refused with every problem listed.
 * Method: validate the defaults, a config breaking several rules, and the relation between
 * commandBytesMax and the largest put; a store refuses to start on an invalid config.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  KvStore, KV_STORE_DEFAULTS, validateKvStoreConfig,
} from '../../../src/core/kv/index.js';

describe('kv: config', () => {
  test('the defaults are valid and match etcd where etcd has a number', () => {
    assert.deepEqual(validateKvStoreConfig(KV_STORE_DEFAULTS), []);
    assert.equal(KV_STORE_DEFAULTS.valueBytesMax, 1.5 * 1024 * 1024);
    assert.equal(KV_STORE_DEFAULTS.txnOpsMax, 128);
    assert.ok(Object.isFrozen(KV_STORE_DEFAULTS));
  });

  test('every broken field is listed at once', () => {
    const problems = validateKvStoreConfig({ ...KV_STORE_DEFAULTS, keyBytesMax: 0,
      txnOpsMax: 1.5, clientsMax: -1, clientIdleMsMax: Number.NaN });
    assert.deepEqual(problems.map((p) => p.field),
      ['keyBytesMax', 'txnOpsMax', 'clientsMax', 'clientIdleMsMax']);
  });

  test('commandBytesMax must hold the largest valid put', () => {
    const problems = validateKvStoreConfig({ ...KV_STORE_DEFAULTS, commandBytesMax: 1024 * 1024 });
    assert.equal(problems.length, 1);
    assert.match(problems[0]?.rule ?? '', /at least keyBytesMax \+ valueBytesMax/);
  });

  test('a store refuses an invalid config', () => {
    assert.throws(() => new KvStore({ ...KV_STORE_DEFAULTS, historyEventsMax: 0 }),
      /historyEventsMax/);
  });
});
