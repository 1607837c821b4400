/**
 * Distributed locks: `client.lock(name)` and `client.withLock(name, fn)`. A lock is the election
 * recipe under its own key space (`conclave/lock/<name>/`): waiters line up by create revision,
 * each watches only the one before it, and the holder's fencing token is its key's create
 * revision, so a resource that remembers the highest token (`Fence`) refuses a holder that was
 * paused past its lease. docs/elections.md has the recipe and the timing bounds.
 */
import { recipeKeys, recipeNameProblem } from '../core/election/index.js';
import { UsageError } from '../errors.js';
import { candidateValue, recipeTtlMs } from './election.js';
import type { Lease } from './lease.js';
import { Holding, runRecipe, type RecipeComponents, type RecipeHold } from './recipe-driver.js';

export interface LockOptions {
  /**
   * The TTL of the lease granted for this lock (kept alive every TTL/3). Unit: ms. Default:
   * 10 000. Why: above the servers' minimum TTL (about 3.1 × their longest election timeout:
   * 6.2 s on the LAN defaults; a smaller one is refused, naming the minimum); it bounds how
   * long a crashed holder blocks the next one. Not allowed together with `lease`.
   */
  readonly ttlMs?: number;
  /**
   * Aborts the wait: `lock()` then rejects with an AbortError (a CoordError) after deleting its
   * key and revoking its lease. No effect once acquired (use `unlock()`).
   */
  readonly signal?: AbortSignal;
  /** Hold the lock under this lease instead of granting one (never revoked here). */
  readonly lease?: Lease;
  /** Who holds it, stored in the lock's key for people and tools. Default: the client id. */
  readonly id?: string;
}

/** A lock held. Its `signal` says when it ended. */
export class Lock extends Holding {
  constructor(readonly name: string, readonly id: string, hold: RecipeHold) {
    super(hold);
  }

  /**
   * Aborts the signal (with a HoldingReleasedError, code CONCLAVE_RELEASED), then deletes the
   * key and revokes the lease (if granted for it). After a loss it resolves at once: the
   * revoke begun at the loss goes on in the background, given up after the lease's TTL.
   */
  unlock(): Promise<void> {
    return this.hold.release('unlocked');
  }
}

/** Waits for the lock `name`; rejects as `Election.campaign` does. */
export async function acquireLock(c: RecipeComponents, name: string, clientId: string,
  options: LockOptions = {}): Promise<Lock> {
  const problem = recipeNameProblem(name);
  if (problem !== undefined) throw new UsageError(`lock name: ${problem}`);
  const id = options.id ?? clientId;
  const hold = await runRecipe(c, { keys: recipeKeys('lock', name), value: candidateValue(id, ''),
    ttlMs: recipeTtlMs(options),
    ...(options.lease === undefined ? {} : { lease: options.lease }),
    ...(options.signal === undefined ? {} : { signal: options.signal }) });
  return new Lock(name, id, hold);
}

/**
 * Runs `fn` holding the lock, then unlocks (also when `fn` throws). `fn` should check
 * `lock.held()` right before each fenced action, stop when `lock.signal` aborts, and pass
 * `lock.fencingToken` to what it writes to. `fn` is not called if the lock is no longer held
 * when it would start (a pause between acquiring and calling it): then this rejects with the
 * signal's reason. A failed unlock is not reported: the lock then ends with its lease, within
 * its TTL; after a loss the unlock returns at once.
 */
export async function withLock<T>(c: RecipeComponents, name: string, clientId: string,
  fn: (lock: Lock) => Promise<T> | T, options: LockOptions = {}): Promise<T> {
  const lock = await acquireLock(c, name, clientId, options);
  try {
    if (!lock.held()) throw lock.signal.reason as unknown;
    return await fn(lock);
  } finally {
    await lock.unlock().catch(() => undefined);
  }
}
