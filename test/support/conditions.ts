/**
 * Waiting in tests: on a condition with a deadline (never sleep-and-hope), and for a promise to
 * reject with a CoordError.
 */
import assert from 'node:assert/strict';
import { CoordError } from '../../src/errors.js';
import { DEADLINE_FLOOR_MS } from './deadlines.js';

/**
 * Polls `condition` every `pollMs` until it holds; fails after `deadlineMs`. Default deadline:
 * DEADLINE_FLOOR_MS (30 s, see deadlines.ts), for a loaded 2-core machine; a condition that
 * holds returns at once.
 */
export async function until(condition: () => boolean, deadlineMs = DEADLINE_FLOOR_MS,
  pollMs = 2): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    assert.ok(performance.now() - start < deadlineMs, 'condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The CoordError `promise` rejects with; fails if it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<CoordError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof CoordError, `not a CoordError: ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}
