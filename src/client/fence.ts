/**
 * The resource side of fencing: put a `Fence` in front of whatever a leader or lock holder
 * writes to (an HTTP handler, a database, a supervisor). It remembers the highest fencing token
 * it has accepted and refuses lower ones with CONCLAVE_FENCING_TOKEN_STALE, so a holder that
 * was paused past its lease cannot write after its successor did (docs/elections.md, "Fencing
 * the resource").
 *
 * With `persist`, a new highest token is stored before the write it guards is allowed, so a
 * restarted resource does not forget it (load it back through `highest`). Accepts are
 * serialized: each waits for the previous one's persist, so the stored highest only grows.
 * A new holder announces its token (`announce`) before acting, closing the window in which
 * the previous holder's late write would still be accepted.
 */
import { FenceState } from '../core/election/fence-state.js';
import { CoordError } from '../errors.js';

export interface FenceOptions {
  /** The highest token accepted before (e.g. loaded from disk at start). Default: 0. */
  readonly highest?: number;
  /**
   * Stores a new highest token durably; the accept that raised it resolves only after this
   * does, and fails (accepting nothing) if it throws. Default: none (memory only).
   */
  readonly persist?: (token: number) => Promise<void> | void;
}

export class Fence {
  private readonly state: FenceState;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: FenceOptions = {}) {
    this.state = new FenceState(options.highest ?? 0);
  }

  /** The highest token accepted so far (0 before any). */
  get highest(): number {
    return this.state.highest;
  }

  /**
   * Accepts `token` if it is not lower than the highest accepted so far (persisting a new
   * highest first); otherwise rejects with CONCLAVE_FENCING_TOKEN_STALE naming both tokens.
   * A token that is not a non-negative integer rejects with CONCLAVE_REQUEST_INVALID.
   */
  accept(token: number): Promise<void> {
    const turn = this.tail.then(() => this.acceptNow(token));
    this.tail = turn.catch(() => undefined);
    return turn;
  }

  /**
   * The announce step: a new holder registers its token here once, right after it was
   * elected (or acquired the lock) and before its first action; the resource calls this from
   * its "announce" endpoint and answers only once it resolved. A fence that knows only the
   * tokens of writes it has seen accepts a late write of the previous holder that arrives
   * after the new holder's claim and before the new holder's first write; once the new token
   * is announced (and persisted, with `persist`), that write is refused. Same rule as
   * `accept`: a token lower than the highest rejects with CONCLAVE_FENCING_TOKEN_STALE (the
   * announcer was itself superseded), an equal one (a retried announce) is accepted.
   */
  announce(token: number): Promise<void> {
    return this.accept(token);
  }

  /** Accepts `token`, then runs `write`; the write never runs under a stale token. */
  async guard<T>(token: number, write: () => Promise<T> | T): Promise<T> {
    await this.accept(token);
    return await write();
  }

  private async acceptNow(token: number): Promise<void> {
    if (!Number.isSafeInteger(token) || token < 0) {
      throw new CoordError('CONCLAVE_REQUEST_INVALID',
        `a fencing token is a non-negative integer, got ${String(token)}`);
    }
    const decision = this.state.check(token);
    if (decision.kind === 'stale') {
      throw new CoordError('CONCLAVE_FENCING_TOKEN_STALE', `fencing token ${token} is stale: `
        + `token ${decision.highest} was already accepted (a newer leader or lock holder exists)`);
    }
    if (token > decision.highestBefore && this.options.persist !== undefined) {
      await this.options.persist(token);
    }
    this.state.offer(token);
  }
}

/**
 * Reads a fencing token from text (an HTTP header, an environment variable); throws
 * CONCLAVE_REQUEST_INVALID saying what was wrong.
 */
export function parseFencingToken(text: string | undefined): number {
  const token = text === undefined || !/^\d{1,16}$/.test(text.trim()) ? NaN : Number(text.trim());
  if (!Number.isSafeInteger(token)) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID',
      `a fencing token is a non-negative integer, got ${JSON.stringify(text)}`);
  }
  return token;
}
