// Goal: the key-value register model answers as a single-copy store would: get sees the last
// value, put and delete always succeed, cas succeeds exactly when the value matches, and an
// unknown output accepts anything while still computing the next state.
// Method: call the model's functions directly on small states.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kvModel } from '../../../src/sim/checkers/kv-model.js';
import type { KvInput, KvOutput, KvState } from '../../../src/sim/checkers/kv-model.js';
import { cas, del, get, maybe, ok, put, saw } from './kv-histories.js';

const run = (inputs: readonly KvInput[]): KvState =>
  inputs.reduce((state, input) => kvModel.step(state, input, undefined).next, kvModel.init());

const accepts = (state: KvState, input: KvInput, output: KvOutput): boolean =>
  kvModel.step(state, input, output).ok;

describe('sim: checkers: kv model: steps', () => {
  test('get sees the last value put, or absent', () => {
    const state = run([put('x', 'a')]);
    assert.equal(accepts(state, get('x'), saw('a')), true);
    assert.equal(accepts(state, get('x'), saw('b')), false);
    assert.equal(accepts(state, get('x'), saw(undefined)), false);
    assert.equal(accepts(state, get('y'), saw(undefined)), true);
    assert.equal(accepts(state, get('y'), { value: undefined }), true);
  });

  test('delete removes the key, and deleting an absent key is fine', () => {
    assert.equal(accepts(run([put('x', 'a'), del('x')]), get('x'), saw(undefined)), true);
    assert.equal(kvModel.step(kvModel.init(), del('x'), {}).ok, true);
  });

  test('cas succeeds exactly when the current value is the expected one', () => {
    const empty = kvModel.init();
    const withA = run([put('x', 'a')]);
    assert.equal(accepts(empty, cas('x', undefined, 'b'), { ok: true }), true);
    assert.equal(accepts(empty, cas('x', 'a', 'b'), { ok: true }), false);
    assert.equal(accepts(withA, cas('x', 'a', 'b'), { ok: true }), true);
    assert.equal(accepts(withA, cas('x', undefined, 'b'), { ok: false }), true);
    assert.equal(kvModel.hash(kvModel.step(withA, cas('x', 'a', 'b'), { ok: true }).next),
      kvModel.hash(run([put('x', 'b')])));
    assert.equal(kvModel.step(withA, cas('x', 'z', 'b'), { ok: false }).next, withA);
  });

  test('an unknown output is accepted and still changes the state', () => {
    const state = run([put('x', 'a')]);
    assert.equal(kvModel.step(state, get('x'), undefined).ok, true);
    const swapped = kvModel.step(state, cas('x', 'a', 'b'), undefined);
    assert.equal(swapped.ok, true);
    assert.equal(swapped.next.get('x'), 'b');
  });

  test('a step never mutates the state it is given', () => {
    const state = run([put('x', 'a')]);
    kvModel.step(state, put('x', 'b'), {});
    kvModel.step(state, del('x'), {});
    assert.equal(state.get('x'), 'a');
  });

  test('a completed cas without ok is a programmer error', () => {
    assert.throws(() => kvModel.step(kvModel.init(), cas('x', undefined, 'a'), {}), /output.ok/);
  });
});

describe('sim: checkers: kv model: keys and reports', () => {
  test('hash is canonical: equal maps built in different orders hash the same', () => {
    const xy = run([put('x', '1'), put('y', '2')]);
    const yx = run([put('y', '2'), put('x', '1')]);
    assert.equal(kvModel.hash(xy), kvModel.hash(yx));
    assert.notEqual(kvModel.hash(xy), kvModel.hash(run([put('x', '1')])));
    assert.notEqual(kvModel.hash(run([put('x', 'a"b')])), kvModel.hash(run([put('x"', 'b')])));
  });

  test('partitions group operations by key in order of first appearance', () => {
    const a = ok('c1', put('y', 'a'), 0, 1);
    const b = ok('c1', put('x', 'a'), 0, 1);
    const c = ok('c1', get('y'), 2, 3, saw('a'));
    const parts = kvModel.partition?.([a, b, c]);
    assert.deepEqual(parts, [[a, c], [b]]);
    assert.equal(kvModel.partitionLabel?.([a, c]), 'key "y"');
  });

  test('simplify drops unknown writes of values nobody observes', () => {
    const lost = maybe('c1', put('x', 'lost'), 0);
    const seen = maybe('c1', put('x', 'seen'), 0);
    const expected = maybe('c1', cas('x', undefined, 'expected'), 0);
    const gone = maybe('c2', del('x'), 0);
    const read = ok('c3', get('x'), 5, 6, saw('seen'));
    const lostCas = maybe('c4', cas('x', 'expected', 'z'), 7);
    assert.deepEqual(kvModel.simplify?.([lost, seen, expected, gone, read, lostCas]),
      [seen, expected, gone, read]);
  });

  test('simplify keeps everything when a completed cas failed (the hidden value may explain it)',
    () => {
      const history = [maybe('c1', put('x', 'lost'), 0), ok('c2', cas('x', 'a', 'b'), 5, 6, {
        ok: false,
      })];
      assert.deepEqual(kvModel.simplify?.(history), history);
    });

  test('only gets are read-only', () => {
    const kinds = [get('x'), put('x', 'a'), del('x'), cas('x', undefined, 'a')]
      .map((input) => kvModel.readOnly?.(input));
    assert.deepEqual(kinds, [true, false, false, false]);
  });

  test('describe shows each operation with its answer, or ? when unknown', () => {
    assert.equal(kvModel.describe(get('x'), saw('a')), 'get("x") → "a"');
    assert.equal(kvModel.describe(get('x'), {}), 'get("x") → absent');
    assert.equal(kvModel.describe(get('x'), undefined), 'get("x") → ?');
    assert.equal(kvModel.describe(put('x', 'a'), {}), 'put("x", "a")');
    assert.equal(kvModel.describe(del('x'), {}), 'delete("x")');
    assert.equal(kvModel.describe(cas('x', undefined, 'a'), { ok: true }),
      'cas("x", absent → "a") → ok');
    assert.equal(kvModel.describe(cas('x', 'a', 'b'), { ok: false }),
      'cas("x", "a" → "b") → failed');
    assert.equal(kvModel.describeState?.(run([put('y', '2'), put('x', '1')])),
      '"x" = "1", "y" = "2"');
    assert.equal(kvModel.describeState?.(kvModel.init()), 'every key absent');
  });
});
