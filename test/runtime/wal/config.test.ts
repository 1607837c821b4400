/**
 * wal: config. Goal: the defaults are valid, every broken rule is reported at once, and
 * entryDataBytesMax is exactly the largest entry a record holds. Method: direct calls.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  WAL_DEFAULTS, entryDataBytesMax, validateWalConfig,
} from '../../../src/runtime/wal/config.js';

describe('wal: config', () => {
  test('the defaults are valid and frozen', () => {
    assert.deepEqual(validateWalConfig(WAL_DEFAULTS), []);
    assert.ok(Object.isFrozen(WAL_DEFAULTS));
    assert.equal(WAL_DEFAULTS.segmentBytesMax, 64 * 1024 * 1024);
  });

  test('every violated rule is reported at once', () => {
    const problems = validateWalConfig({ segmentBytesMax: 100, recordBytesMax: 1.5,
      manifestBytesMax: 24 });
    assert.deepEqual(problems.map((p) => p.field),
      ['segmentBytesMax', 'recordBytesMax', 'manifestBytesMax']);
    assert.match(problems[0]?.rule ?? '', /integer from 1024 to 1073741824/);
  });

  test('limits above the ranges are refused', () => {
    const problems = validateWalConfig({ segmentBytesMax: 2 ** 31, recordBytesMax: 2 ** 30,
      manifestBytesMax: 2 ** 27 });
    assert.equal(problems.length, 3);
  });

  test('entryDataBytesMax leaves room for the record, batch and entry headers', () => {
    const config = { ...WAL_DEFAULTS, segmentBytesMax: 4096, recordBytesMax: 1024 };
    assert.equal(entryDataBytesMax(config), 1024 - 9 - 12 - 13);
  });
});
