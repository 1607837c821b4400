/**
 * The raft scenario's replicated state machine: a small key-value register store whose
 * commands are the linearizability checker's KV inputs, encoded as JSON bytes in log entries.
 * Deterministic: the same entries always give the same state and the same results.
 */
import type { Entry } from '../../../core/raft/types.js';
import type { StateMachine } from '../../../runtime/raft/raft-runtime.js';
import type { KvInput, KvOutput } from '../../checkers/kv-model.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeKvCommand(input: KvInput): Uint8Array {
  return encoder.encode(JSON.stringify(input));
}

export function decodeKvCommand(data: Uint8Array): KvInput {
  return JSON.parse(decoder.decode(data)) as KvInput;
}

export class SimKvStateMachine implements StateMachine<KvOutput> {
  private values = new Map<string, string>();
  /** A running hash of every applied command, to compare replicas cheaply. */
  private digestValue = 0;
  appliedIndex = 0;

  apply(entry: Entry): KvOutput {
    this.appliedIndex = entry.index;
    for (let i = 0; i < entry.data.length; i++) {
      this.digestValue = Math.imul(this.digestValue ^ entry.data[i]!, 0x01000193) >>> 0;
    }
    const input = decodeKvCommand(entry.data);
    switch (input.kind) {
      case 'get':
        return { value: this.values.get(input.key) };
      case 'put':
        this.values.set(input.key, input.value);
        return {};
      case 'delete':
        this.values.delete(input.key);
        return {};
      case 'cas': {
        const current = this.values.get(input.key);
        if (current !== input.expected) return { ok: false };
        this.values.set(input.key, input.value);
        return { ok: true };
      }
    }
  }

  /** The value of `key` as of the last applied entry (for reads served without the log). */
  get(key: string): string | undefined {
    return this.values.get(key);
  }

  /** The whole state (Raft §7 snapshot): values, digest and applied index, as JSON bytes. */
  snapshot(): Uint8Array {
    return encoder.encode(JSON.stringify({
      values: [...this.values], digest: this.digestValue, appliedIndex: this.appliedIndex,
    }));
  }

  restore(data: Uint8Array): void {
    const state = JSON.parse(decoder.decode(data)) as {
      values: [string, string][]; digest: number; appliedIndex: number;
    };
    this.values = new Map(state.values);
    this.digestValue = state.digest;
    this.appliedIndex = state.appliedIndex;
  }

  /** Replicas that applied the same entries have the same digest. */
  digest(): string {
    return `${this.appliedIndex}:${this.digestValue.toString(16)}`;
  }
}
