/**
 * Leader election over the consistent core: `client.election(name)`. Each candidate owns one
 * key under the election's candidate prefix, attached to its lease; the candidates line up by
 * the keys' create revisions, each waits on the one just before it, and the first in line
 * claims the leadership by bumping the generation key. The decisions are the pure Campaign's
 * (src/core/election/campaign.ts); recipe-driver.ts performs them. docs/elections.md has the
 * recipe, its timing assumptions and how to fence the resource a leader writes to.
 */
import { electionLeader, recipeKeys, recipeNameProblem, type RecipeKeys }
  from '../core/election/index.js';
import type { KeyValue } from '../core/kv/types.js';
import { UsageError } from '../errors.js';
import type { SignalOptions } from './kv.js';
import type { Lease } from './lease.js';
import {
  Holding, raceSignal, RECIPE_TTL_MS_DEFAULT, runRecipe, type RecipeComponents, type RecipeHold,
} from './recipe-driver.js';
import { WatchCompactedError } from './watch.js';

export interface CampaignOptions {
  /**
   * The TTL of the lease granted for this campaign (kept alive every TTL/3). Unit: ms.
   * Default: 10 000. Why: it must exceed the servers' minimum (about 3.1 × their longest
   * election timeout: 6.2 s on the LAN defaults; a smaller one is refused with
   * CONCLAVE_REQUEST_INVALID naming the minimum), and it bounds how long a crashed leader
   * blocks its successor. Not allowed together with `lease`.
   */
  readonly ttlMs?: number;
  /**
   * What the leader publishes (an address, say); `leader()` and `observe()` show it.
   * Default: ''.
   */
  readonly value?: string;
  /**
   * Aborts the campaign while it waits: it then rejects with an AbortError (a CoordError) after
   * deleting its key and revoking its lease. It has no effect once elected (use `resign()`).
   */
  readonly signal?: AbortSignal;
  /**
   * Campaign under this lease instead of granting one. It is never revoked here: `resign()`
   * deletes only the candidate key. One campaign per lease per election.
   */
  readonly lease?: Lease;
}

/** The leader as every client sees it: the candidate first in line. */
export interface ElectionLeader {
  readonly id: string;
  readonly value: string;
  /** The create revision of its candidate key. */
  readonly fencingToken: number;
  readonly key: string;
}

export interface ObserveOptions {
  /** Ends the iteration. */
  readonly signal?: AbortSignal;
}

/** One election, by name. Use `client.election(name)`. */
export class Election {
  private readonly keys: RecipeKeys;

  constructor(readonly name: string, private readonly c: RecipeComponents) {
    const problem = recipeNameProblem(name);
    if (problem !== undefined) throw new UsageError(`election name: ${problem}`);
    this.keys = recipeKeys('election', name);
  }

  /**
   * Campaigns as `id` and resolves once elected. Rejects with CONCLAVE_LEASE_EXPIRED
   * (a LeadershipLostError) when the lease ended while waiting (or the process stalled, or the
   * key vanished), with an AbortError when `options.signal` aborted, or with the CoordError of
   * a call that failed; in every case after giving up the key and the lease.
   */
  async campaign(id: string, options: CampaignOptions = {}): Promise<Leadership> {
    if (typeof id !== 'string' || id === '') {
      throw new UsageError(`a candidate id is a non-empty string, got ${JSON.stringify(id)}`);
    }
    const value = options.value ?? '';
    const hold = await runRecipe(this.c, { keys: this.keys,
      value: candidateValue(id, value), ttlMs: recipeTtlMs(options),
      ...(options.lease === undefined ? {} : { lease: options.lease }),
      ...(options.signal === undefined ? {} : { signal: options.signal }) });
    return new Leadership(this.name, id, value, hold);
  }

  /**
   * The leader now (linearizable): the candidate with the lowest create revision, or
   * undefined when there is none. That candidate may still be claiming; its `fencingToken` is
   * the one it leads with.
   */
  async leader(options: SignalOptions = {}): Promise<ElectionLeader | undefined> {
    const result = await this.c.kv.range(this.keys.candidatePrefix, options);
    return leaderOf(result.kvs);
  }

  /**
   * The leader now (or undefined), then each change of leader or of its value, until
   * `options.signal` aborts or the loop breaks. It follows the candidates with one watch, and
   * lists them again if the history was compacted under it.
   */
  async *observe(options: ObserveOptions = {}):
    AsyncGenerator<ElectionLeader | undefined, void, undefined> {
    const signal = options.signal ?? new AbortController().signal;
    const prefix = this.keys.candidatePrefix;
    let shown: string | undefined;
    const changed = (candidates: Map<string, KeyValue>):
      { leader: ElectionLeader | undefined } | undefined => {
      const leader = leaderOf([...candidates.values()]);
      const fingerprint = leader === undefined ? '-' : JSON.stringify(leader);
      if (fingerprint === shown) return undefined;
      shown = fingerprint;
      return { leader };
    };
    while (!signal.aborted) {
      let listed;
      try {
        listed = await raceSignal(this.c.kv.range(prefix, { signal }), signal);
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      const candidates = new Map(listed.kvs.map((kv) => [kv.key, kv]));
      const first = changed(candidates);
      if (first !== undefined) yield first.leader;
      try {
        const watch = this.c.watch({ prefix }, { fromRevision: listed.revision + 1, signal });
        for await (const { type, kv } of watch) {
          if (type === 'delete') candidates.delete(kv.key);
          else candidates.set(kv.key, kv);
          const next = changed(candidates);
          if (next !== undefined) yield next.leader;
        }
        return; // the watch ends only when the signal aborted
      } catch (error) {
        if (!(error instanceof WatchCompactedError)) throw error;
      }
    }
  }
}

/** An election won. Its `signal` says when it ended; see `Election.campaign`. */
export class Leadership extends Holding {
  constructor(
    readonly name: string,
    readonly id: string,
    private valueNow: string,
    hold: RecipeHold,
  ) {
    super(hold);
  }

  get value(): string {
    return this.valueNow;
  }

  /**
   * Publishes a new value, only while this leadership's key is still there; stopped at once
   * when the leadership ends or `options.signal` aborts.
   */
  async proclaim(value: string, options: SignalOptions = {}): Promise<void> {
    await this.hold.proclaim(candidateValue(this.id, value), options.signal);
    this.valueNow = value;
  }

  /**
   * Aborts the signal (with a HoldingReleasedError, code CONCLAVE_RELEASED), then deletes the
   * key and revokes the lease (if granted for it). After a loss it resolves at once: the
   * revoke begun at the loss goes on in the background, given up after the lease's TTL.
   */
  resign(): Promise<void> {
    return this.hold.release('resigned');
  }
}

/** The TTL of a recipe's own lease, checked. */
export function recipeTtlMs(options: { readonly ttlMs?: number; readonly lease?: Lease }):
  number {
  if (options.lease !== undefined && options.ttlMs !== undefined) {
    throw new UsageError('give ttlMs or lease, not both: a lease brings its own TTL');
  }
  const ttlMs = options.ttlMs ?? RECIPE_TTL_MS_DEFAULT;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) {
    throw new UsageError(`ttlMs is a positive integer (ms), got ${String(options.ttlMs)}`);
  }
  return ttlMs;
}

/** The candidate key's value: `{"id":..,"value":..}`. */
export function candidateValue(id: string, value: string): string {
  return JSON.stringify({ id, value });
}

/** Reads a candidate key's value; one not written by a recipe shows as its raw text. */
export function parseCandidateValue(text: string): { id: string; value: string } {
  try {
    const parsed = JSON.parse(text) as { id?: unknown; value?: unknown };
    if (typeof parsed.id === 'string' && typeof parsed.value === 'string') {
      return { id: parsed.id, value: parsed.value };
    }
  } catch {
    // fall through: not ours
  }
  return { id: '', value: text };
}

function leaderOf(kvs: readonly KeyValue[]): ElectionLeader | undefined {
  const first = electionLeader(kvs);
  if (first === undefined) return undefined;
  return { ...parseCandidateValue(first.value), fencingToken: first.createRevision,
    key: first.key };
}
