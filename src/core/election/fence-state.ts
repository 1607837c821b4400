/**
 * The resource side of fencing (Kleppmann's fencing tokens; no incumbent ships it): remember
 * the highest token accepted and refuse any lower one. A holder that was paused past its lease
 * comes back with a token lower than its successor's, so its late write is refused here even
 * though it still believes it holds the lock.
 *
 * Equal tokens are accepted: the same holder writes many times under one token.
 */

export type FenceDecision =
  | { readonly kind: 'accepted'; readonly token: number; readonly highestBefore: number }
  | { readonly kind: 'stale'; readonly token: number; readonly highest: number };

export class FenceState {
  private highestToken: number;

  /** `highest`: a token already accepted before (e.g. loaded from disk). Default: 0. */
  constructor(highest = 0) {
    assertToken(highest, 'highest');
    this.highestToken = highest;
  }

  /** The highest token accepted so far (0 before any). */
  get highest(): number {
    return this.highestToken;
  }

  /** Would `token` be accepted now? Changes nothing. */
  check(token: number): FenceDecision {
    assertToken(token, 'token');
    const highest = this.highestToken;
    if (token < highest) return { kind: 'stale', token, highest };
    return { kind: 'accepted', token, highestBefore: highest };
  }

  /** Accepts `token` (raising the highest) unless it is lower than the highest. */
  offer(token: number): FenceDecision {
    const decision = this.check(token);
    if (decision.kind === 'accepted') this.highestToken = token;
    return decision;
  }
}

function assertToken(token: number, what: string): void {
  if (!Number.isSafeInteger(token) || token < 0) {
    throw new RangeError(`fencing ${what} must be a non-negative safe integer, got ${token}`);
  }
}
