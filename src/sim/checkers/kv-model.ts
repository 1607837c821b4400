/**
 * The sequential specification of a key-value store of string registers, for the
 * linearizability checker: get, put, delete and compare-and-set, partitioned by key (each
 * key is an independent register, so each is checked alone).
 *
 * Outputs: `get` answers `{ value }` (no `value` when the key is absent); `cas` answers
 * `{ ok }`; `put` and `delete` answer `{}`. A cas that compared and lost is an `ok` outcome
 * with `{ ok: false }`, not a `failed` one: `failed` means the request never took effect.
 */
import { assert, assertNever } from '../../core/assert.js';
import type { Operation } from './history.js';
import { partitionBy } from './linearizability.js';
import type { Model, StepResult } from './linearizability.js';

export type KvInput =
  | { readonly kind: 'get'; readonly key: string }
  | { readonly kind: 'put'; readonly key: string; readonly value: string }
  | { readonly kind: 'delete'; readonly key: string }
  /** Sets `value` if the key holds `expected`; `expected` undefined means "the key is absent". */
  | {
    readonly kind: 'cas';
    readonly key: string;
    readonly expected?: string | undefined;
    readonly value: string;
  };

/** `value` for get (absent: no such key), `ok` for cas, neither for put and delete. */
export interface KvOutput {
  readonly value?: string | undefined;
  readonly ok?: boolean;
}

/** Key to value; partitions hold one key, but the model is correct unpartitioned too. */
export type KvState = ReadonlyMap<string, string>;

const EMPTY: KvState = new Map();

function withValue(state: KvState, key: string, value: string | undefined): KvState {
  const next = new Map(state);
  if (value === undefined) next.delete(key);
  else next.set(key, value);
  return next;
}

function step(state: KvState, input: KvInput, output: KvOutput | undefined): StepResult<KvState> {
  const current = state.get(input.key);
  switch (input.kind) {
    case 'get':
      return { ok: output === undefined || output.value === current, next: state };
    case 'put':
      return { ok: true, next: withValue(state, input.key, input.value) };
    case 'delete':
      return {
        ok: true,
        next: current === undefined ? state : withValue(state, input.key, undefined),
      };
    case 'cas': {
      const matches = current === input.expected;
      const next = matches ? withValue(state, input.key, input.value) : state;
      if (output === undefined) return { ok: true, next };
      assert(typeof output.ok === 'boolean',
        () => `kv model: a completed cas needs output.ok: ${JSON.stringify(output)}`);
      return { ok: output.ok === matches, next };
    }
    default:
      return assertNever(input, 'kv input');
  }
}

const quote = (value: string | undefined): string =>
  value === undefined ? 'absent' : JSON.stringify(value);

function describe(input: KvInput, output: KvOutput | undefined): string {
  const key = JSON.stringify(input.key);
  switch (input.kind) {
    case 'get':
      return `get(${key}) → ${output === undefined ? '?' : quote(output.value)}`;
    case 'put':
      return `put(${key}, ${quote(input.value)})`;
    case 'delete':
      return `delete(${key})`;
    case 'cas': {
      const result = output === undefined ? '?' : output.ok === true ? 'ok' : 'failed';
      return `cas(${key}, ${quote(input.expected)} → ${quote(input.value)}) → ${result}`;
    }
    default:
      return assertNever(input, 'kv input');
  }
}

function hash(state: KvState): string {
  // JSON strings delimit themselves, so concatenating them is unambiguous; sorted, so that
  // equal maps built in different orders get one key. A partition holds one key: no sort.
  let key = '';
  const entries = state.size > 1 ? sortedEntries(state) : state.entries();
  for (const [k, v] of entries) key += JSON.stringify(k) + JSON.stringify(v);
  return key;
}

function sortedEntries(state: KvState): [string, string][] {
  return [...state.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function describeState(state: KvState): string {
  if (state.size === 0) return 'every key absent';
  return sortedEntries(state)
    .map(([key, value]) => `${JSON.stringify(key)} = ${JSON.stringify(value)}`).join(', ');
}

/**
 * Drops unknown writes (put, cas) of a value that no operation observes: no completed get
 * returned it and no cas expects it. Such a write, if it took effect, only hid the value
 * before it until the next put or delete; in that window no completed get read (it would
 * have read the unobserved value), no cas compared equal (none expects it), and an unknown
 * cas there had no effect, so dropping the write (and any unknown cas that would now succeed
 * there) leaves a linearization of the rest. A completed cas that failed is the exception:
 * the hidden value may be its reason to fail, so a partition holding one is left whole.
 */
function simplify(
  operations: readonly Operation<KvInput, KvOutput>[],
): Operation<KvInput, KvOutput>[] {
  const observed = new Set<string>();
  for (const op of operations) {
    const { input, output } = op;
    if (input.kind === 'cas') {
      if (op.outcome === 'ok' && output?.ok === false) return [...operations];
      if (input.expected !== undefined) observed.add(input.expected);
    } else if (input.kind === 'get' && op.outcome === 'ok' && output?.value !== undefined) {
      observed.add(output.value);
    }
  }
  return operations.filter((op) => op.outcome !== 'unknown'
    || !(op.input.kind === 'put' || op.input.kind === 'cas') || observed.has(op.input.value));
}

/**
 * The key-value register model. Unknown-outcome gets are dropped before the search
 * (`readOnly`); unknown writes may take effect at any time after their call, or never.
 *
 * @example
 * const result = checkLinearizable(kvModel, history.operations());
 * if (result.result === 'illegal') console.log(formatIllegalReport(result));
 */
export const kvModel: Model<KvState, KvInput, KvOutput> = Object.freeze({
  init: () => EMPTY,
  step,
  hash,
  partition: partitionBy<KvInput, KvOutput>((input) => input.key),
  partitionLabel: (operations: readonly Operation<KvInput, KvOutput>[]) =>
    `key ${JSON.stringify(operations[0]?.input.key ?? '')}`,
  readOnly: (input: KvInput) => input.kind === 'get',
  simplify,
  describe,
  describeState,
});
