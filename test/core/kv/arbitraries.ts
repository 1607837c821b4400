/**
 * fast-check generators of store commands over a small key space (so that keys collide,
 * prefixes overlap and compares sometimes hold), for the property tests.
 */
import fc from 'fast-check';
import type {
  KvClientCommand, KvCompare, KvCompareResult, KvTxnOp,
} from '../../../src/core/kv/index.js';
import type { KvCommandBody } from './harness.js';

const KEYS = ['a', 'a/1', 'a/2', 'ab', 'b', 'b/1', 'c'];
const PREFIXES = ['', 'a', 'a/', 'b'];
const key = fc.constantFrom(...KEYS);
const value = fc.constantFrom('', 'x', 'y', 'z', 'é', '😀');
const small = fc.nat({ max: 12 });
const flag = fc.option(fc.boolean(), { nil: undefined });
const compareResult = fc.constantFrom<KvCompareResult>('equal', 'not-equal', 'greater', 'less');

/** A key or prefix selector; `prefix` is left out or set, as clients do. */
const selector = fc.oneof(
  key.map((k) => ({ key: k })),
  fc.constantFrom(...PREFIXES).map((k) => ({ key: k, prefix: true })),
);

function withOption<T extends object, K extends string, V>(
  base: T,
  name: K,
  option: V | undefined,
): T {
  return option === undefined ? base : { ...base, [name]: option };
}

const putOp: fc.Arbitrary<KvTxnOp> = fc.tuple(key, value, flag)
  .map(([k, v, prevKv]) =>
    withOption({ kind: 'put' as const, key: k, value: v }, 'prevKv', prevKv));
const deleteOp: fc.Arbitrary<KvTxnOp> = fc.tuple(selector, flag)
  .map(([s, prevKv]) => withOption({ kind: 'delete' as const, ...s }, 'prevKv', prevKv));
const limit = fc.option(fc.nat({ max: 3 }), { nil: undefined });
const rangeOp: fc.Arbitrary<KvTxnOp> = fc.tuple(selector, limit)
  .map(([s, limit]) => withOption({ kind: 'range' as const, ...s }, 'limit', limit));
const op = fc.oneof({ weight: 3, arbitrary: putOp }, { weight: 2, arbitrary: deleteOp },
  { weight: 1, arbitrary: rangeOp });

const compare: fc.Arbitrary<KvCompare> = fc.oneof(
  fc.tuple(key, compareResult, value).map(([k, result, v]) =>
    ({ key: k, target: 'value' as const, result, value: v })),
  fc.tuple(key, compareResult, small).map(([k, result, n]) =>
    ({ key: k, target: 'version' as const, result, version: n % 4 })),
  fc.tuple(key, compareResult, small).map(([k, result, n]) =>
    ({ key: k, target: 'createRevision' as const, result, createRevision: n })),
  fc.tuple(key, compareResult, small).map(([k, result, n]) =>
    ({ key: k, target: 'modRevision' as const, result, modRevision: n })),
);

/** A command without its stamp. `compact` is rare and may name any small revision. */
export const commandBody: fc.Arbitrary<KvCommandBody> = fc.oneof(
  { weight: 6, arbitrary: putOp.map((o) => ({ ...o, kind: 'put' }) as KvCommandBody) },
  { weight: 2, arbitrary: deleteOp.map((o) => ({ ...o, kind: 'delete' }) as KvCommandBody) },
  { weight: 3, arbitrary: fc.record({
    compare: fc.array(compare, { maxLength: 3 }),
    success: fc.array(op, { maxLength: 3 }),
    failure: fc.array(op, { maxLength: 3 }),
  }).map((t) => ({ kind: 'txn', ...t }) as KvCommandBody) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 })
    .map((revision) => ({ kind: 'compact', revision }) as KvCommandBody) },
);

/** A command body with its client (of three) and how far log time moves before it. */
export const step = fc.record({
  body: commandBody,
  client: fc.constantFrom('c1', 'c2', 'c3'),
  advanceMs: fc.nat({ max: 2000 }),
});

/** Stamps steps: each client's sequence grows by one per command; time moves forward. */
export function stampSteps(
  steps: readonly { body: KvCommandBody; client: string; advanceMs: number }[],
  startMs: number,
): KvClientCommand[] {
  const sequences = new Map<string, number>();
  let nowMs = startMs;
  return steps.map(({ body, client, advanceMs }) => {
    nowMs += advanceMs;
    const sequence = (sequences.get(client) ?? 0) + 1;
    sequences.set(client, sequence);
    return { ...body, clientId: client, sequence, nowMs } as KvClientCommand;
  });
}
