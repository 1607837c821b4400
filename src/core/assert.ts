/**
 * Assertions for programmer errors (TigerStyle): they stay on in production, and the only
 * correct reaction to a failed one is to stop. Operating errors (a peer that is down, a bad
 * frame, a stale term) are values, never assertions.
 */

/** Thrown when an invariant the code relies on does not hold: a bug, not an operating error. */
export class AssertionError extends Error {
  override readonly name = 'AssertionError';
  readonly code = 'CONCLAVE_ASSERTION';
}

/** Fails fast with `message` (which should carry the values involved) unless `condition`. */
export function assert(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) {
    throw new AssertionError(typeof message === 'function' ? message() : message);
  }
}

/** Ends every `switch` over a closed union: a new kind that is not handled fails to compile. */
export function assertNever(value: never, what = 'value'): never {
  throw new AssertionError(`unexpected ${what}: ${JSON.stringify(value)}`);
}
