// Goal: the history format and its recorder: each operation ends exactly once as ok, failed
// or unknown; a pending one reads as unknown; malformed histories are reported in full; a
// history is plain data that survives JSON.
// Method: drive a HistoryRecorder by hand with explicit times and inspect what it returns.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HistoryRecorder, validateHistory } from '../../../src/sim/checkers/history.js';
import type { KvInput, KvOutput } from '../../../src/sim/checkers/kv-model.js';
import { get, put } from './kv-histories.js';

describe('sim: checkers: history: recorder', () => {
  test('records ok, failed and unknown outcomes with their times', () => {
    const history = new HistoryRecorder<KvInput, KvOutput>();
    const write = history.invoke('c1', put('x', 'a'), 10);
    const read = history.invoke('c2', get('x'), 11);
    const lost = history.invoke('c3', put('x', 'b'), 12);
    const rejected = history.invoke('c4', put('x', 'c'), 13);
    assert.equal(history.pendingCount, 4);
    history.complete(write, {}, 20);
    history.complete(read, { value: 'a' }, 21);
    history.unknown(lost);
    history.fail(rejected, 14);
    assert.equal(history.pendingCount, 0);
    assert.deepEqual(history.operations(), [
      { clientId: 'c1', input: put('x', 'a'), call: 10, return: 20, output: {}, outcome: 'ok' },
      { clientId: 'c2', input: get('x'), call: 11, return: 21, output: { value: 'a' },
        outcome: 'ok' },
      { clientId: 'c3', input: put('x', 'b'), call: 12, return: undefined, output: undefined,
        outcome: 'unknown' },
      { clientId: 'c4', input: put('x', 'c'), call: 13, return: 14, output: undefined,
        outcome: 'failed' },
    ]);
  });

  test('an operation still pending when read counts as unknown', () => {
    const history = new HistoryRecorder<KvInput, KvOutput>();
    history.invoke('c1', put('x', 'a'), 10);
    const [op] = history.operations();
    assert.equal(op?.outcome, 'unknown');
    assert.equal(op?.return, undefined);
    assert.equal(history.pendingCount, 1);
  });

  test('an operation ends exactly once, never before its call', () => {
    const history = new HistoryRecorder<KvInput, KvOutput>();
    const id = history.invoke('c1', put('x', 'a'), 10);
    assert.throws(() => history.complete(id, {}, 9), /before its call/);
    const other = history.invoke('c1', put('x', 'b'), 10);
    history.complete(other, {}, 11);
    assert.throws(() => history.fail(other, 12), /already ended as ok/);
    assert.throws(() => history.unknown(other), /already ended as ok/);
  });

  test('operations() is a copy: later events do not change it', () => {
    const history = new HistoryRecorder<KvInput, KvOutput>();
    const id = history.invoke('c1', put('x', 'a'), 10);
    const before = history.operations();
    history.complete(id, {}, 11);
    assert.equal(before[0]?.outcome, 'unknown');
    assert.equal(history.operations()[0]?.outcome, 'ok');
  });
});

describe('sim: checkers: history: validation', () => {
  test('a recorded history is valid and survives a JSON round trip', () => {
    const history = new HistoryRecorder<KvInput, KvOutput>();
    history.complete(history.invoke('c1', put('x', 'a'), 1), {}, 2);
    history.unknown(history.invoke('c1', get('x'), 3));
    const parsed = JSON.parse(JSON.stringify(history.operations())) as unknown[];
    assert.deepEqual(validateHistory(history.operations()), []);
    assert.deepEqual(validateHistory(parsed), []);
  });

  test('every problem is reported at once', () => {
    const problems = validateHistory([
      null,
      { clientId: '', input: get('x'), call: Number.NaN, outcome: 'maybe' },
      { clientId: 'c1', input: get('x'), call: 5, return: 4, output: {}, outcome: 'ok' },
      { clientId: 'c1', call: 5, outcome: 'ok' },
    ]);
    const expected = [
      /operation 0: not an object/,
      /operation 1: clientId/,
      /operation 1: call must be a finite number/,
      /operation 1: outcome must be one of/,
      /operation 2: return 4 is before call 5/,
      /operation 3: input is missing/,
      /operation 3: an ok operation needs a return time/,
      /operation 3: an ok operation needs an output/,
    ];
    assert.equal(problems.length, expected.length, problems.join('\n'));
    expected.forEach((pattern, i) => assert.match(problems[i] ?? '', pattern));
  });
});
