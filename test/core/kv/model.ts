/**
 * A deliberately naive reference model of the store's MVCC semantics, for property tests: it
 * copies the whole key map at every revision and keeps every event, so a read at revision r is
 * a lookup, with no undo logic to get wrong. It shares only the validation rules with the
 * real store (`validateKvCommand` decides which commands are invalid).
 */
import type {
  KeyValue, KvClientCommand, KvCompare, KvEvent, KvStoreConfig, KvTxnOp,
} from '../../../src/core/kv/index.js';
import { validateKvCommand } from '../../../src/core/kv/index.js';

/** The parts of a result the model predicts. */
export interface ModelOutcome {
  readonly kind: string;
  readonly revision?: number;
  readonly succeeded?: boolean;
  readonly code?: string;
}

export class KvModel {
  /** states[r] = every key at revision r; states[0] is unused. */
  readonly states: Map<string, KeyValue>[] = [new Map(), new Map()];
  readonly events: KvEvent[] = [];
  compactRevision = 0;
  private readonly sequences = new Map<string, number>();

  constructor(private readonly config: KvStoreConfig) {}

  get revision(): number {
    return this.states.length - 1;
  }

  current(): Map<string, KeyValue> {
    return this.states[this.revision] as Map<string, KeyValue>;
  }

  apply(command: KvClientCommand): ModelOutcome {
    // The arbitraries always stamp commands with an idempotency key.
    const clientId = command.clientId as string;
    const sequence = command.sequence as number;
    const applied = this.sequences.get(clientId) ?? 0;
    if (sequence < applied) return { kind: 'error', code: 'duplicate-stale' };
    if (sequence === applied) return { kind: 'retry' };
    this.sequences.set(clientId, sequence);
    if (validateKvCommand(command, this.config).length > 0) {
      return { kind: 'error', code: 'invalid' };
    }
    switch (command.kind) {
      case 'put':
        return { kind: 'put', revision: this.write([{ ...command, kind: 'put' }]) };
      case 'delete':
        return { kind: 'delete', revision: this.write([{ ...command, kind: 'delete' }]) };
      case 'txn': {
        const succeeded = command.compare.every((c) => this.holds(c));
        const revision = this.write(succeeded ? command.success : command.failure);
        return { kind: 'txn', revision, succeeded };
      }
      case 'compact':
        if (command.revision <= this.compactRevision) return { kind: 'error', code: 'compacted' };
        if (command.revision > this.revision) return { kind: 'error', code: 'future-revision' };
        this.compactRevision = command.revision;
        return { kind: 'compact', revision: this.revision };
      default:
        // Leases have their own tests (lease.test.ts); the generators never make them.
        throw new Error(`the model does not cover ${command.kind}`);
    }
  }

  private holds(c: KvCompare): boolean {
    const kv = this.current().get(c.key);
    let order: number;
    if (c.target === 'value') {
      if (kv === undefined) return false;
      order = kv.value === c.value ? 0 : kv.value > c.value ? 1 : -1;
    } else {
      const stored = kv === undefined ? 0 : kv[c.target];
      const operand = c.target === 'version' ? c.version
        : c.target === 'createRevision' ? c.createRevision : c.modRevision;
      order = Math.sign(stored - operand);
    }
    return c.result === 'equal' ? order === 0 : c.result === 'not-equal' ? order !== 0
      : c.result === 'greater' ? order > 0 : order < 0;
  }

  /** Runs ops on a copy; commits it as a new revision only when something changed. */
  private write(ops: readonly KvTxnOp[]): number {
    const next = new Map(this.current());
    const revision = this.revision + 1;
    const events: KvEvent[] = [];
    for (const op of ops) {
      if (op.kind === 'put') {
        const prev = next.get(op.key);
        const kv = { key: op.key, value: op.value, createRevision: prev?.createRevision ?? revision,
          modRevision: revision, version: (prev?.version ?? 0) + 1 };
        next.set(op.key, kv);
        events.push(prev === undefined ? { type: 'put', kv } : { type: 'put', kv, prevKv: prev });
      } else if (op.kind === 'delete') {
        const keys = [...next.keys()].filter((k) => (op.prefix === true ? k.startsWith(op.key)
          : k === op.key)).sort();
        for (const key of keys) {
          events.push({ type: 'delete', prevKv: next.get(key) as KeyValue,
            kv: { key, value: '', createRevision: 0, modRevision: revision, version: 0 } });
          next.delete(key);
        }
      }
    }
    if (events.length === 0) return this.revision;
    this.states.push(next);
    this.events.push(...events);
    return revision;
  }
}

/** A state as the store's range returns it: key order. */
export function sortedKvs(state: Map<string, KeyValue>): KeyValue[] {
  return [...state.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
