/**
 * The Generation Clock pattern: a number that only grows (Raft's term, the emergent
 * coordinator's generation, ZAB's epoch), carried by every message so that a node can tell a
 * stale sender from a newer one, and persisted before any message depends on it.
 */
import { assert, assertNever } from '../assert.js';

/** How an incoming generation compares with ours. */
export type GenerationComparison = 'lower' | 'equal' | 'higher';

/**
 * What to do with a message that carries `incoming`, given our `current` generation:
 * - `reject`: the sender is stale; refuse the message and tell it `current` (it steps down);
 * - `accept`: same generation; process the message normally;
 * - `adopt`: the sender is ahead; move to `next` (persist it before using it), step down from
 *   any role held in `previous`, then process the message.
 */
export type GenerationDecision<G extends number> =
  | { readonly kind: 'reject'; readonly current: G }
  | { readonly kind: 'accept' }
  | { readonly kind: 'adopt'; readonly previous: G; readonly next: G };

/**
 * True when `value` can be a generation: a safe integer >= 0 (0 means "no generation yet").
 * Codecs check this on decode, so the clock can assert it.
 */
export function isValidGeneration(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** `incoming` relative to `local`. */
export function compareGenerations<G extends number>(
  local: G,
  incoming: G,
): GenerationComparison {
  assertGeneration(local, 'local');
  assertGeneration(incoming, 'incoming');
  if (incoming < local) return 'lower';
  return incoming === local ? 'equal' : 'higher';
}

/**
 * The Generation Clock rule as a pure function, for protocols that keep the generation
 * elsewhere: lower → reject (tell the sender ours), equal → accept, higher → adopt.
 * (Raft §5.1: "If a server receives a request with a stale term number, it rejects the
 * request"; "If one server's current term is smaller than the other's, then it updates its
 * current term to the larger value"; a leader or candidate that does so reverts to follower.)
 */
export function classifyIncoming<G extends number>(local: G, incoming: G): GenerationDecision<G> {
  const comparison = compareGenerations(local, incoming);
  switch (comparison) {
    case 'lower':
      return { kind: 'reject', current: local };
    case 'equal':
      return { kind: 'accept' };
    case 'higher':
      return { kind: 'adopt', previous: local, next: incoming };
    default:
      return assertNever(comparison, 'generation comparison');
  }
}

/**
 * A node's generation clock, with the persist-before-use rule built in.
 *
 * Persist before use: a generation this node starts (`next`) or adopts (`observe` of a higher
 * one) is *pending* until the caller has made it durable and called `markPersisted`. While it is
 * pending, nothing that depends on it may leave the node: no vote, no request for votes, no
 * append, no grant. Otherwise a crash and restart could bring the node back in an older
 * generation, and it could vote twice in one term or reuse a generation another node already
 * saw. `usable()` says whether the current generation is durable; `assertUsable()` guards the
 * send path. Receiving and rejecting messages needs no durability.
 *
 * Invariants (asserted): `current` and `durable` never decrease; `durable <= current`.
 */
export class GenerationClock<G extends number = number> {
  private currentValue: G;
  private durableValue: G;

  /**
   * `initial` is the generation loaded from durable storage (0 on a fresh node). Name the type
   * (`new GenerationClock<Term>(term(3))`); without it the clock is over plain numbers rather
   * than the literal type of `initial`.
   */
  constructor(initial: NoInfer<G>) {
    assertGeneration(initial, 'initial');
    this.currentValue = initial;
    this.durableValue = initial;
  }

  /** The highest generation this node knows of (possibly still pending). */
  get current(): G {
    return this.currentValue;
  }

  /** The highest generation known to be on disk. */
  get durable(): G {
    return this.durableValue;
  }

  /** True while `current` is not yet durable. */
  get pending(): boolean {
    return this.durableValue < this.currentValue;
  }

  /** `incoming` relative to `current`. */
  compare(incoming: G): GenerationComparison {
    return compareGenerations(this.currentValue, incoming);
  }

  /**
   * Applies the Generation Clock rule to a message carrying `incoming`: on `adopt` the clock
   * moves to `incoming` (pending until `markPersisted`); otherwise it does not change.
   */
  observe(incoming: G): GenerationDecision<G> {
    const decision = classifyIncoming(this.currentValue, incoming);
    if (decision.kind === 'adopt') this.advanceTo(decision.next);
    return decision;
  }

  /** Starts a new generation, current + 1 (on becoming candidate or coordinator); pending. */
  next(): G {
    const next = (this.currentValue + 1) as G;
    assertGeneration(next, 'next');
    this.advanceTo(next);
    return next;
  }

  /**
   * Records that `generation` reached disk. A completion for a generation older than the
   * durable one (a late callback) changes nothing.
   */
  markPersisted(generation: G): void {
    assertGeneration(generation, 'persisted');
    assert(generation <= this.currentValue,
      () => `markPersisted(${generation}) is ahead of the current generation ${this.currentValue}`);
    if (generation > this.durableValue) this.durableValue = generation;
  }

  /** True when messages that depend on `current` may be sent (it is durable). */
  usable(): boolean {
    return !this.pending;
  }

  /** Fails when `current` is not yet durable: call before sending anything that depends on it. */
  assertUsable(): void {
    assert(this.usable(), () => `generation ${this.currentValue} used before it was persisted `
      + `(durable: ${this.durableValue})`);
  }

  private advanceTo(next: G): void {
    assert(next > this.currentValue,
      () => `generation must only grow: ${this.currentValue} -> ${next}`);
    this.currentValue = next;
  }
}

function assertGeneration(value: number, what: string): void {
  assert(isValidGeneration(value),
    () => `${what} generation must be a safe integer >= 0: ${String(value)}`);
}
