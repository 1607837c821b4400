/**
 * What the KV clients do, with the shipped client's KV API (`client.kv`): each runs two loops
 * at once (two calls in flight, on the client's write lanes), each call one of put, delete,
 * compare-and-swap (a txn: compare the value, put on success, read on failure), linearizable
 * get and serializable get, on a few keys, with a short think between. Every call goes into
 * the history (real, virtual time of its call and its answer): `ok` with what came back,
 * `failed` when the client says it definitely did not apply, `unknown` otherwise. Values are
 * unique (client, count), so a read names the one write it saw.
 *
 * Serializable reads are kept out of the linearizability history (a member's state may be
 * stale: they are not linearizable, by definition). They are held to a weaker rule instead:
 * the value read was written by some put or cas that did not definitely fail (no invented,
 * lost or undone value shows).
 *
 * Readers (`--readers`) are KV clients that only issue linearizable gets, on the same keys and
 * into the same history: the stale-leader faults cut them off together with the old leader
 * (core-scenario.ts), so they go on reading there while the other clients write on the new
 * leader's side. A writer cut off that way stalls at its first write (the old leader refuses it
 * while it transfers, and every other member is silent); a reader keeps asking.
 */
import { randomFloat, randomInt } from '../../../core/random.js';
import { CoordError } from '../../../errors.js';
import { HistoryRecorder, type OperationId } from '../../checkers/history.js';
import type { KvInput, KvOutput } from '../../checkers/kv-model.js';
import type { Prng } from '../../prng.js';
import type { Violation } from '../../scenario.js';
import type { SimClient } from '../lease/lease-world.js';

export interface KvWorkloadCounts {
  ok: number;
  failed: number;
  unknown: number;
  puts: number;
  deletes: number;
  cas: number;
  linearizableReads: number;
  serializableReads: number;
}

/** Calls each KV client keeps in flight. */
const LOOPS_PER_CLIENT = 2;
/** Mean pause between two calls of a loop. Unit: ms (client clock). */
const THINK_MS_MEAN = 30;
/** A reader's every call, as a roll of drawInput's: a linearizable get. */
const READER_ROLL = 0.2;

interface SerializableRead {
  readonly clientId: string;
  readonly key: string;
  readonly value: string | undefined;
  readonly atMs: number;
}

export class KvWorkload {
  readonly history = new HistoryRecorder<KvInput, KvOutput>();
  readonly counts: KvWorkloadCounts = { ok: 0, failed: 0, unknown: 0, puts: 0, deletes: 0,
    cas: 0, linearizableReads: 0, serializableReads: 0 };
  private readonly serializable: SerializableRead[] = [];
  /** What each client last saw of each key: its next cas expects it. */
  private readonly seen = new Map<string, string | undefined>();
  private written = 0;
  private stopped = false;

  constructor(
    private readonly prng: Prng,
    private readonly clients: readonly SimClient[],
    private readonly keys: readonly string[],
    private readonly nowMs: () => number,
    /** Clients that only issue linearizable gets (the readers above). */
    private readonly readers: readonly SimClient[] = [],
  ) {}

  start(): void {
    for (const client of [...this.clients, ...this.readers]) {
      for (let i = 0; i < LOOPS_PER_CLIENT; i++) this.next(client);
    }
  }

  stop(): void {
    this.stopped = true;
  }

  /** Serializable reads of a value no put or cas could have written (see the file comment). */
  checkSerializable(): Violation[] {
    const possible = new Set<string>();
    for (const op of this.history.operations()) {
      const { input } = op;
      if ((input.kind === 'put' || input.kind === 'cas') && op.outcome !== 'failed') {
        possible.add(input.value);
      }
    }
    return this.serializable.filter((r) => r.value !== undefined && !possible.has(r.value))
      .slice(0, 3).map((r) => ({ checker: 'serializable-read', atMs: r.atMs,
        message: `${r.clientId} read ${JSON.stringify(r.value)} at ${r.key} (serializable): no `
          + 'put or cas that may have applied wrote it' }));
  }

  private next(client: SimClient): void {
    if (this.stopped) return;
    const thinkMs = -Math.log(1 - randomFloat(this.prng)) * THINK_MS_MEAN;
    client.host.processClock.setTimer(thinkMs, () => {
      if (this.stopped) return;
      void this.one(client).then(() => this.next(client));
    });
  }

  private async one(client: SimClient): Promise<void> {
    const key = this.keys[randomInt(this.prng, 0, this.keys.length)]!;
    const roll = this.readers.includes(client) ? READER_ROLL : randomFloat(this.prng);
    if (roll < 0.15) return this.serializableGet(client, key);
    const input = this.drawInput(client, key, roll);
    const id = this.history.invoke(client.id, input, this.nowMs());
    try {
      this.complete(client, id, input, await this.call(client, input));
    } catch (error) {
      this.failedOrUnknown(id, error);
    }
  }

  private drawInput(client: SimClient, key: string, roll: number): KvInput {
    const value = (): string => `${client.id}-${++this.written}`;
    if (roll < 0.4) {
      this.counts.linearizableReads++;
      return { kind: 'get', key };
    }
    if (roll < 0.65) {
      this.counts.puts++;
      return { kind: 'put', key, value: value() };
    }
    if (roll < 0.75) {
      this.counts.deletes++;
      return { kind: 'delete', key };
    }
    this.counts.cas++;
    return { kind: 'cas', key, expected: this.seen.get(`${client.id} ${key}`), value: value() };
  }

  private async call(client: SimClient, input: KvInput): Promise<KvOutput> {
    const { kv } = client.client;
    switch (input.kind) {
      case 'get': {
        const result = await kv.get(input.key);
        return result.kv === undefined ? {} : { value: result.kv.value };
      }
      case 'put':
        await kv.put(input.key, input.value);
        return {};
      case 'delete':
        await kv.delete(input.key);
        return {};
      case 'cas': {
        const result = await kv.cas(input.key, input.expected, input.value);
        if (!result.succeeded) this.saw(client, input.key, result.current?.value);
        return { ok: result.succeeded };
      }
    }
  }

  private complete(client: SimClient, id: OperationId, input: KvInput, output: KvOutput): void {
    this.counts.ok++;
    this.history.complete(id, output, this.nowMs());
    if (input.kind === 'get') this.saw(client, input.key, output.value);
    else if (input.kind === 'put' || (input.kind === 'cas' && output.ok === true)) {
      this.saw(client, input.key, input.value);
    } else if (input.kind === 'delete') this.saw(client, input.key, undefined);
  }

  private failedOrUnknown(id: OperationId, error: unknown): void {
    if (error instanceof CoordError && error.outcome === 'failed') {
      this.counts.failed++;
      this.history.fail(id, this.nowMs());
    } else {
      this.counts.unknown++;
      this.history.unknown(id);
    }
  }

  private async serializableGet(client: SimClient, key: string): Promise<void> {
    this.counts.serializableReads++;
    try {
      const result = await client.client.kv.get(key, { consistency: 'serializable' });
      this.serializable.push({ clientId: client.id, key, value: result.kv?.value,
        atMs: this.nowMs() });
    } catch {
      // No answer: nothing to check.
    }
  }

  private saw(client: SimClient, key: string, value: string | undefined): void {
    this.seen.set(`${client.id} ${key}`, value);
  }
}
