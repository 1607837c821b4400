/**
 * Goal: election and lock names map to disjoint, well-formed key prefixes, and bad names are
 * refused with a reason. Method: examples.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { candidateKey, recipeKeys, recipeNameProblem } from '../../../src/core/election/index.js';

describe('election: keys', () => {
  test('candidate keys sort like lease ids and live under the recipe prefix', () => {
    const keys = recipeKeys('lock', 'demo');
    assert.equal(keys.candidatePrefix, 'conclave/lock/demo/candidates/');
    assert.equal(keys.generationKey, 'conclave/lock/demo/generation');
    assert.ok(candidateKey(keys, 0x2) < candidateKey(keys, 0x10));
  });

  test('names with slashes, spaces or nothing at all are refused, saying why', () => {
    assert.equal(recipeNameProblem('jobs-1.a_b'), undefined);
    assert.match(recipeNameProblem('a/b') ?? '', /may only hold/);
    assert.match(recipeNameProblem('') ?? '', /empty/);
    assert.match(recipeNameProblem('x'.repeat(200)) ?? '', /maximum is 128/);
  });
});
