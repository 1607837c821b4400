/**
 * A linearizability checker: Wing & Gong's search with Lowe's memoization (WGL), as Porcupine
 * runs it, partitioned by key (P-compositionality: a history is linearizable iff every
 * partition is). Deterministic: the search is bounded by a step budget, never by a clock, and
 * a partition that runs out of steps is `unknown`, never a false `ok`.
 *
 * The search (Lowe, "Testing for linearizability", CCPE 2017; Horn & Kroening, "Faster
 * linearizability checking via P-compositionality", 2015; Porcupine follows both):
 * - Each operation gives a call event and a return event; all events sit in one doubly linked
 *   list sorted by time. At equal times calls sort before returns, so intervals that touch
 *   count as overlapping: coarse clocks (a real process's milliseconds) can never make the
 *   checker report `illegal`; the price is that an anomaly confined to one instant is missed.
 * - Walk the list from its head. A call that is reached before any return is a candidate for
 *   the next linearization point: if the model accepts it in the current state, and the pair
 *   (set of linearized operations, new state) has not been seen before, push it, unlink its
 *   call and return events, and start again from the head. Reaching a return event means the
 *   operation it closes must already have been linearized: backtrack (pop the last choice,
 *   relink it, try the candidate after it). Backtracking past the start means `illegal`.
 * - The memo cache (Lowe's improvement) holds every (linearized set, state) pair ever pushed;
 *   from one such pair the rest of the search is the same, so each is explored once.
 * - `unknown` operations return at +infinity. When the walk reaches such a return, every
 *   operation left is `unknown` and the model accepts any of them (see `Model.step`), so the
 *   partition is `ok` without linearizing them one by one.
 *
 * Cost: near-linear on linearizable histories with few concurrent operations per partition;
 * exponential in the worst case. Unknown-outcome operations are the usual culprit (each one
 * that stays pending doubles the configurations: linearized yet or not), above all when the
 * history is illegal and the whole space must be refuted. Hence `Model.readOnly` and
 * `Model.simplify`, which drop unknown operations that cannot matter before the search.
 *
 * The search is iterative (an explicit stack), so long histories cannot overflow the call
 * stack, and resumable, so partitions take turns in slices of steps: one hard partition does
 * not starve the others, and an illegal one is found even when another is too hard to finish.
 */
import { assert } from '../../core/assert.js';
import { validateHistory } from './history.js';
import type { Operation, OperationOutcome } from './history.js';

/** What `Model.step` returns: whether the operation is legal in `state`, and the state after. */
export interface StepResult<S> {
  readonly ok: boolean;
  /** The state after the operation; ignored when `ok` is false. */
  readonly next: S;
}

/** A sequential specification: the single-copy object that the history must look like. */
export interface Model<S, I, O> {
  /** The state before any operation. */
  init(): S;
  /**
   * Applies `input` to `state`; `ok` says whether `output` is what the object would answer.
   * `output` is undefined for operations of unknown outcome: the step must then succeed (any
   * answer is acceptable) and only compute the next state. Pure: never mutate `state`.
   */
  step(state: S, input: I, output: O | undefined): StepResult<S>;
  /**
   * A canonical key for `state`: equal for equal states and different for different ones. It
   * keys the memo cache, so a collision could prune a branch and give a wrong verdict.
   */
  hash(state: S): string;
  /**
   * Splits a history into independent parts (by key, for a key-value store), each checked
   * alone (P-compositionality). Returns the same operation objects, each in exactly one part.
   */
  partition?(operations: readonly Operation<I, O>[]): Operation<I, O>[][];
  /** A name for a partition in reports, for example `key "x"`. */
  partitionLabel?(operations: readonly Operation<I, O>[]): string;
  /**
   * True when `input` never changes the state (a read). Reads of unknown outcome constrain
   * nothing, so the checker drops them before the search instead of exploring them.
   */
  readOnly?(input: I): boolean;
  /**
   * Drops, from one partition, `unknown` operations that provably cannot change the verdict
   * (for a register: a write whose value nobody observes). Each pending unknown operation
   * doubles the configurations the search may visit, so this is where a model can buy back
   * speed. Must return a subset of `operations` that removes only `unknown` ones, and must
   * keep the verdict: the rest is linearizable iff the whole is.
   */
  simplify?(operations: readonly Operation<I, O>[]): Operation<I, O>[];
  /** One operation for reports, for example `get("x") → "a"`; `output` undefined if unknown. */
  describe(input: I, output: O | undefined): string;
  /** A state for reports; `hash(state)` is used when absent. */
  describeState?(state: S): string;
}

/** Sizes that bound the search. Every field is a count of steps, not of time. */
export interface LinearizabilityConfig {
  /**
   * The most search steps the whole check may take, over all partitions; when it runs out,
   * unfinished partitions are `unknown`. A step is one candidate tried (one `Model.step`) or
   * one backtrack. Unit: steps. Default: 1,000,000 — a register history of 5 clients × 200
   * operations on 5 keys needs about 1,500; the searches that need far more are the
   * exponential ones (an illegal history with many maybe-applied writes on one hot key),
   * where a larger budget seldom changes the verdict. A million steps cost about 2-4 s of one
   * core and under 100 MB of memo cache: the most one simulation seed should spend here.
   */
  readonly stepBudget: number;
  /**
   * Steps a partition runs before the next unfinished one gets its turn. Unit: steps.
   * Default: 10,000 — large enough that switching costs nothing, small enough that with
   * dozens of partitions every one gets a turn early in the budget.
   */
  readonly sliceSteps: number;
}

export const LINEARIZABILITY_DEFAULTS: Readonly<LinearizabilityConfig> = Object.freeze({
  stepBudget: 1_000_000,
  sliceSteps: 10_000,
});

/** Every violated rule of `config`, at once (empty when valid). */
export function validateLinearizabilityConfig(config: LinearizabilityConfig): string[] {
  const problems: string[] = [];
  if (!Number.isSafeInteger(config.stepBudget) || config.stepBudget < 1) {
    problems.push(`stepBudget must be a positive integer: ${config.stepBudget}`);
  }
  if (!Number.isSafeInteger(config.sliceSteps) || config.sliceSteps < 1) {
    problems.push(`sliceSteps must be a positive integer: ${config.sliceSteps}`);
  }
  return problems;
}

/** `ok`: linearizable; `illegal`: not; `unknown`: the step budget ran out first. */
export type LinearizabilityVerdict = 'ok' | 'illegal' | 'unknown';

/** One operation as reports show it. */
export interface DescribedOperation {
  /** Its index in the history given to `checkLinearizable`. */
  readonly operationIndex: number;
  readonly clientId: string;
  readonly call: number;
  /** As recorded; the checker used +infinity for `unknown` outcomes. */
  readonly return: number | undefined;
  readonly outcome: OperationOutcome;
  /** `Model.describe` of it (output shown only for `ok` outcomes). */
  readonly description: string;
}

/** Where an illegal partition got stuck: its longest linearizable prefix and what follows. */
export interface IllegalDetail {
  readonly partitionIndex: number;
  readonly partitionLabel: string;
  /** The longest sequence of operations the search could linearize, in order. */
  readonly linearizedPrefix: readonly DescribedOperation[];
  /** The model's state after that prefix. */
  readonly stateAfterPrefix: string;
  /**
   * The first operation that could not be linearized: the search reached its return with it
   * still pending. The model rejects it in `stateAfterPrefix`.
   */
  readonly blockingOperation: DescribedOperation;
  /**
   * The other operations called before `blockingOperation` returned and not in the prefix,
   * in call order. The model rejects each of them in `stateAfterPrefix` too.
   */
  readonly pendingOperations: readonly DescribedOperation[];
}

/** The verdict for one partition. */
export interface PartitionResult {
  readonly index: number;
  /** `Model.partitionLabel`, or `partition N`. */
  readonly label: string;
  readonly result: LinearizabilityVerdict;
  /** Operations searched (after dropping failed ones, unknown reads, and `simplify`). */
  readonly operationCount: number;
  readonly stepsUsed: number;
}

/** What `checkLinearizable` returns; plain data, safe to `JSON.stringify`. */
export interface LinearizabilityResult {
  /** `illegal` if any partition is; else `unknown` if any is; else `ok`. */
  readonly result: LinearizabilityVerdict;
  readonly partitions: readonly PartitionResult[];
  /** Operations in the history given. */
  readonly operationCount: number;
  /** Operations not searched: `failed` ones, unknown reads, and what `simplify` dropped. */
  readonly droppedCount: number;
  readonly stepsUsed: number;
  readonly stepBudget: number;
  /** Present when `result` is `illegal`: the first illegal partition found. */
  readonly illegal?: IllegalDetail;
}

/**
 * Checks that `operations` is linearizable with respect to `model`. Partitions take turns in
 * slices of `sliceSteps` until each is decided or `stepBudget` is spent; the check stops at
 * the first illegal partition (the others are then reported `unknown` unless already done).
 * Throws an AssertionError on a malformed history or config (programmer errors).
 */
export function checkLinearizable<S, I, O>(
  model: Model<S, I, O>,
  operations: readonly Operation<I, O>[],
  config: Partial<LinearizabilityConfig> = {},
): LinearizabilityResult {
  const full: LinearizabilityConfig = { ...LINEARIZABILITY_DEFAULTS, ...config };
  const configProblems = validateLinearizabilityConfig(full);
  assert(configProblems.length === 0,
    () => `checkLinearizable: invalid config: ${configProblems.join('; ')}`);
  const historyProblems = validateHistory(operations);
  assert(historyProblems.length === 0,
    () => `checkLinearizable: malformed history: ${historyProblems.join('; ')}`);

  const searched = operations.filter((op) => op.outcome !== 'failed'
    && !(op.outcome === 'unknown' && model.readOnly?.(op.input) === true));
  const parts = splitPartitions(model, operations, searched);
  const searches = parts.map((part) => new PartitionSearch(model, part.operations, part.indices));
  const stepsUsed = runRoundRobin(searches, full);

  const partitions = searches.map((search, index): PartitionResult => ({
    index,
    label: parts[index]!.label,
    result: search.status === 'running' ? 'unknown' : search.status,
    operationCount: search.operationCount,
    stepsUsed: search.stepsUsed,
  }));
  const illegalIndex = partitions.findIndex((p) => p.result === 'illegal');
  const result: LinearizabilityVerdict = illegalIndex >= 0 ? 'illegal'
    : partitions.some((p) => p.result === 'unknown') ? 'unknown' : 'ok';
  const summary = {
    result,
    partitions,
    operationCount: operations.length,
    droppedCount: operations.length - parts.reduce((sum, p) => sum + p.operations.length, 0),
    stepsUsed,
    stepBudget: full.stepBudget,
  };
  if (illegalIndex < 0) return summary;
  const detail = searches[illegalIndex]!.illegalDetail(illegalIndex, parts[illegalIndex]!.label);
  return { ...summary, illegal: detail };
}

/**
 * A `Model.partition` that groups operations by `keyOf(input)`, parts in the order their key
 * first appears in the history (deterministic for a given history).
 */
export function partitionBy<I, O>(
  keyOf: (input: I) => string,
): (operations: readonly Operation<I, O>[]) => Operation<I, O>[][] {
  return (operations) => {
    const byKey = new Map<string, Operation<I, O>[]>();
    for (const op of operations) {
      const key = keyOf(op.input);
      const part = byKey.get(key);
      if (part === undefined) byKey.set(key, [op]);
      else part.push(op);
    }
    return [...byKey.values()];
  };
}

interface Part<I, O> {
  readonly operations: readonly Operation<I, O>[];
  /** Each operation's index in the whole history. */
  readonly indices: readonly number[];
  readonly label: string;
}

function splitPartitions<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
  searched: readonly Operation<I, O>[],
): Part<I, O>[] {
  const indexOf = new Map<Operation<I, O>, number>();
  history.forEach((op, index) => indexOf.set(op, index));
  const groups = model.partition === undefined ? [[...searched]] : model.partition(searched);
  const given = new Set(searched);
  const seen = new Set<Operation<I, O>>();
  for (const group of groups) {
    for (const op of group) {
      assert(!seen.has(op) && given.has(op), () =>
        `Model.partition returned twice, or was not given: ${JSON.stringify(op)}`);
      seen.add(op);
    }
  }
  assert(seen.size === searched.length, () =>
    `Model.partition lost ${searched.length - seen.size} of ${searched.length} operations`);
  return groups.map((group, index) => {
    const kept = model.simplify?.(group) ?? group;
    const inGroup = new Set(group);
    const keptSet = new Set(kept);
    assert(kept.every((op) => inGroup.has(op)) && keptSet.size === kept.length
      && group.every((op) => keptSet.has(op) || op.outcome === 'unknown'),
    () => `Model.simplify may only drop unknown operations of its partition ${index}`);
    return {
      operations: kept,
      indices: kept.map((op) => indexOf.get(op)!),
      label: model.partitionLabel?.(group) ?? `partition ${index}`,
    };
  });
}

/** Runs unfinished searches in turn until all are decided, one is illegal, or budget is spent. */
function runRoundRobin<S, I, O>(
  searches: readonly PartitionSearch<S, I, O>[],
  config: LinearizabilityConfig,
): number {
  let used = 0;
  for (;;) {
    let running = 0;
    for (const search of searches) {
      if (search.status !== 'running') continue;
      const budgetLeft = config.stepBudget - used;
      if (budgetLeft <= 0) return used;
      used += search.advance(Math.min(config.sliceSteps, budgetLeft));
      // Read through a method: the compiler would keep the narrowing above past advance().
      const status = search.currentStatus();
      if (status === 'illegal') return used;
      if (status === 'running') running++;
    }
    if (running === 0) return used;
  }
}

/** Index of the list's head sentinel, and "no entry". */
const HEAD = 0;
const NONE = -1;

/** Where the search went deepest: the raw material of an `IllegalDetail`. */
interface Deepest<S> {
  /** Local operation numbers, in linearization order. */
  readonly prefix: readonly number[];
  readonly state: S;
  readonly blocking: number;
  readonly pending: readonly number[];
}

/** WGL over one partition, resumable: `advance(n)` runs at most n steps. */
class PartitionSearch<S, I, O> {
  status: 'running' | 'ok' | 'illegal' = 'running';
  stepsUsed = 0;

  // The event list; entry 0 is the head sentinel, entries 1..2n are events in time order.
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  /** For a call entry, its return entry; NONE for a return entry. */
  private readonly matchOf: Int32Array;
  private readonly opOf: Int32Array;

  private cursor: number;
  private state: S;
  private readonly linearized: Uint32Array;
  private readonly stackEntries: number[] = [];
  private readonly stackStates: S[] = [];
  /** State key → hash of the linearized set → the sets seen with that state. */
  private readonly cache = new Map<string, Map<number, Uint32Array[]>>();
  private deepest: Deepest<S> | undefined;

  constructor(
    private readonly model: Model<S, I, O>,
    private readonly operations: readonly Operation<I, O>[],
    private readonly indices: readonly number[],
  ) {
    const n = operations.length;
    this.next = new Int32Array(2 * n + 1);
    this.prev = new Int32Array(2 * n + 1);
    this.matchOf = new Int32Array(2 * n + 1).fill(NONE);
    this.opOf = new Int32Array(2 * n + 1).fill(NONE);
    this.linearized = new Uint32Array(Math.ceil(n / 32));
    this.buildList();
    this.cursor = this.next[HEAD]!;
    this.state = model.init();
  }

  currentStatus(): 'running' | 'ok' | 'illegal' {
    return this.status;
  }

  get operationCount(): number {
    return this.operations.length;
  }

  /** Runs at most `stepsMax` steps; returns the number run. */
  advance(stepsMax: number): number {
    let used = 0;
    while (this.status === 'running' && used < stepsMax) {
      if (this.next[HEAD] === NONE) {
        this.status = 'ok';
        break;
      }
      used++;
      const entry = this.cursor;
      if (this.matchOf[entry] !== NONE) this.tryLinearize(entry);
      else this.reachReturn(entry);
    }
    this.stepsUsed += used;
    return used;
  }

  illegalDetail(partitionIndex: number, partitionLabel: string): IllegalDetail {
    const deepest = this.deepest;
    assert(this.status === 'illegal' && deepest !== undefined,
      () => `illegalDetail: partition ${partitionIndex} is ${this.status}`);
    for (const op of [deepest.blocking, ...deepest.pending]) {
      // Had one been legal there, the search would have gone one step deeper from this prefix
      // (or, if its successor was cached, already have been deeper): WGL's own invariant.
      assert(!this.modelStep(deepest.state, op).ok, () =>
        `linearizability: pending operation ${this.indices[op]} is legal after the deepest prefix`);
    }
    const describe = (op: number): DescribedOperation => this.describeOp(op);
    return {
      partitionIndex,
      partitionLabel,
      linearizedPrefix: deepest.prefix.map(describe),
      stateAfterPrefix: this.model.describeState?.(deepest.state) ?? this.model.hash(deepest.state),
      blockingOperation: describe(deepest.blocking),
      pendingOperations: deepest.pending.map(describe),
    };
  }

  /** Sorts the 2n events and links them after the head sentinel. */
  private buildList(): void {
    const n = this.operations.length;
    const events: { time: number; isCall: boolean; op: number }[] = [];
    this.operations.forEach((op, i) => {
      events.push({ time: op.call, isCall: true, op: i });
      const ret = op.outcome === 'unknown' ? Infinity : op.return;
      assert(ret !== undefined, () => `operation ${this.indices[i]} is ok but never returned`);
      events.push({ time: ret, isCall: false, op: i });
    });
    // Calls before returns at equal times: touching intervals overlap (see file comment).
    events.sort((a, b) => a.time < b.time ? -1 : a.time > b.time ? 1
      : a.isCall !== b.isCall ? (a.isCall ? -1 : 1) : a.op - b.op);
    const callEntryOf = new Int32Array(n);
    events.forEach((event, position) => {
      const entry = position + 1;
      this.prev[entry] = entry - 1;
      this.next[entry] = entry === 2 * n ? NONE : entry + 1;
      this.opOf[entry] = event.op;
      if (event.isCall) callEntryOf[event.op] = entry;
      else this.matchOf[callEntryOf[event.op]!] = entry;
    });
    this.next[HEAD] = n === 0 ? NONE : 1;
    this.prev[HEAD] = NONE;
  }

  /** A call reached before any return: try it as the next linearization point. */
  private tryLinearize(entry: number): void {
    const op = this.opOf[entry]!;
    const { ok, next } = this.modelStep(this.state, op);
    if (ok && this.remember(op, next)) {
      this.stackEntries.push(entry);
      this.stackStates.push(this.state);
      this.state = next;
      setBit(this.linearized, op);
      this.lift(entry);
      this.cursor = this.next[HEAD]!;
      return;
    }
    this.cursor = this.next[entry]!;
  }

  /** A return reached while its operation is pending: backtrack, or finish. */
  private reachReturn(entry: number): void {
    const op = this.opOf[entry]!;
    if (this.operations[op]!.outcome === 'unknown') {
      // Every finite return is unlinked already, so all that is left is of unknown outcome,
      // and the model accepts those in any state: linearize them in any order.
      this.status = 'ok';
      return;
    }
    if (this.deepest === undefined || this.stackEntries.length > this.deepest.prefix.length) {
      this.recordDeepest(entry);
    }
    const callEntry = this.stackEntries.pop();
    if (callEntry === undefined) {
      this.status = 'illegal';
      return;
    }
    this.state = this.stackStates.pop()!;
    clearBit(this.linearized, this.opOf[callEntry]!);
    this.unlift(callEntry);
    this.cursor = this.next[callEntry]!;
  }

  /** Adds (linearized + op, state) to the memo cache; false when it was there already. */
  private remember(op: number, state: S): boolean {
    const bits = this.linearized.slice();
    setBit(bits, op);
    // Two levels, because models have few distinct states and a number keys a Map cheaply.
    const stateKey = this.model.hash(state);
    let byBits = this.cache.get(stateKey);
    if (byBits === undefined) {
      byBits = new Map();
      this.cache.set(stateKey, byBits);
    }
    const bitsKey = hashBits(bits);
    const bucket = byBits.get(bitsKey);
    if (bucket === undefined) {
      byBits.set(bitsKey, [bits]);
      return true;
    }
    if (bucket.some((other) => equalBits(other, bits))) return false;
    bucket.push(bits);
    return true;
  }

  private recordDeepest(returnEntry: number): void {
    const blocking = this.opOf[returnEntry]!;
    const pending: number[] = [];
    for (let e = this.next[HEAD]!; e !== returnEntry && e !== NONE; e = this.next[e]!) {
      if (this.matchOf[e] !== NONE && this.opOf[e] !== blocking) pending.push(this.opOf[e]!);
    }
    this.deepest = {
      prefix: this.stackEntries.map((e) => this.opOf[e]!),
      state: this.state,
      blocking,
      pending,
    };
  }

  /** Unlinks a call and its return (dancing links: they keep their own pointers). */
  private lift(callEntry: number): void {
    const { next, prev } = this;
    next[prev[callEntry]!] = next[callEntry]!;
    prev[next[callEntry]!] = prev[callEntry]!; // a call always has its return after it
    const ret = this.matchOf[callEntry]!;
    next[prev[ret]!] = next[ret]!;
    if (next[ret] !== NONE) prev[next[ret]!] = prev[ret]!;
  }

  /** Relinks what `lift` unlinked; must undo lifts in reverse order. */
  private unlift(callEntry: number): void {
    const { next, prev } = this;
    const ret = this.matchOf[callEntry]!;
    next[prev[ret]!] = ret;
    if (next[ret] !== NONE) prev[next[ret]!] = ret;
    prev[next[callEntry]!] = callEntry;
    next[prev[callEntry]!] = callEntry;
  }

  private modelStep(state: S, op: number): StepResult<S> {
    const operation = this.operations[op]!;
    const output = operation.outcome === 'ok' ? operation.output : undefined;
    return this.model.step(state, operation.input, output);
  }

  private describeOp(op: number): DescribedOperation {
    const operation = this.operations[op]!;
    const output = operation.outcome === 'ok' ? operation.output : undefined;
    return {
      operationIndex: this.indices[op]!,
      clientId: operation.clientId,
      call: operation.call,
      return: operation.return,
      outcome: operation.outcome,
      description: this.model.describe(operation.input, output),
    };
  }
}

function setBit(bits: Uint32Array, i: number): void {
  bits[i >>> 5]! |= 1 << (i & 31);
}

function clearBit(bits: Uint32Array, i: number): void {
  bits[i >>> 5]! &= ~(1 << (i & 31));
}

/** FNV-1a over the words: only a bucket key, so collisions cost a comparison, not a verdict. */
function hashBits(bits: Uint32Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bits.length; i++) h = Math.imul(h ^ bits[i]!, 0x01000193);
  return h >>> 0;
}

function equalBits(a: Uint32Array, b: Uint32Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** How many linearized operations `formatIllegalReport` shows before eliding older ones. */
const REPORT_PREFIX_LINES_MAX = 30;

/**
 * A readable report of a check: one line when it is ok or unknown; for an illegal history the
 * partition, the end of the longest linearizable prefix, the state after it, the operation
 * that could not be linearized and the operations pending beside it.
 */
export function formatIllegalReport(result: LinearizabilityResult): string {
  const head = `linearizability: ${result.result} (${result.operationCount} operations, `
    + `${result.droppedCount} dropped, ${result.partitions.length} partitions, `
    + `${result.stepsUsed} of ${result.stepBudget} steps)`;
  const detail = result.illegal;
  if (detail === undefined) {
    const unknown = result.partitions.filter((p) => p.result === 'unknown');
    if (unknown.length === 0) return head;
    return `${head}\n  undecided when the step budget ran out: `
      + unknown.map((p) => `${p.label} (${p.operationCount} operations)`).join(', ');
  }
  const partition = result.partitions[detail.partitionIndex];
  const prefix = detail.linearizedPrefix;
  const shown = prefix.slice(-REPORT_PREFIX_LINES_MAX);
  const lines = [
    head,
    `  illegal partition ${detail.partitionIndex}: ${detail.partitionLabel}`
      + ` (${partition?.operationCount ?? '?'} operations)`,
    `  longest linearizable prefix: ${prefix.length} operations`
      + (shown.length < prefix.length ? `, last ${shown.length} shown` : ''),
    ...shown.map((op, i) => `    ${prefix.length - shown.length + i + 1}. ${formatOp(op)}`),
    `  state after the prefix: ${detail.stateAfterPrefix}`,
    `  first operation that cannot be linearized (illegal in that state):`,
    `    ${formatOp(detail.blockingOperation)}`,
    '  pending beside it (each illegal in that state too):',
    ...detail.pendingOperations.map((op) => `    ${formatOp(op)}`),
  ];
  if (detail.pendingOperations.length === 0) lines.push('    (none)');
  return lines.join('\n');
}

function formatOp(op: DescribedOperation): string {
  const end = op.outcome === 'unknown' ? '∞)' : `${op.return ?? '?'}]`;
  const note = op.outcome === 'unknown' ? ' [outcome unknown]' : '';
  return `#${op.operationIndex} ${op.clientId} [${op.call}, ${end} ${op.description}${note}`;
}
