/**
 * A client workload for real-process tests: closed-loop writers and readers on a few keys over
 * the HTTP API; every call goes into a history for the linearizability checker.
 */
import assert from 'node:assert/strict';
import { checkLinearizable, formatIllegalReport } from '../../src/sim/checkers/linearizability.js';
import { HistoryRecorder } from '../../src/sim/checkers/history.js';
import { kvModel, type KvInput, type KvOutput } from '../../src/sim/checkers/kv-model.js';
import { call } from './kv-http.js';
import type { RealCluster } from './real-cluster.js';

/** Closed-loop writers and readers on a few keys; every call goes into the history. */
export class KvWorkload {
  readonly history = new HistoryRecorder<KvInput, KvOutput>();
  readonly acked: { key: string; value: string; atMs: number }[] = [];
  private running = true;
  private sequence = 0;
  readonly loops: Promise<void>[] = [];

  constructor(private readonly cluster: RealCluster, private readonly timeoutMs: number) {}

  start(clients: number): void {
    for (let c = 0; c < clients; c++) this.loops.push(this.loop(`client-${c}`, c));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(clientId: string, index: number): Promise<void> {
    let target = index % this.cluster.members.length;
    while (this.running) {
      const endpoint = this.cluster.endpoints[target]!;
      const key = `k${this.sequence % 3}`;
      const sequence = ++this.sequence;
      const value = `${clientId}-${sequence}`;
      const input: KvInput = sequence % 3 === 0 ? { kind: 'get', key } : { kind: 'put', key, value };
      const id = this.history.invoke(clientId, input, performance.now());
      const outcome = input.kind === 'get'
        ? await call(endpoint, '/v1/kv/range', { key, clientId: `${clientId}-r`, sequence }, this.timeoutMs)
        : await call(endpoint, '/v1/kv/put', { key, value, clientId, sequence }, this.timeoutMs);
      const now = performance.now();
      if (outcome.kind === 'ok') {
        const kvs = (outcome.body['kvs'] as { value: string }[] | undefined) ?? [];
        this.history.complete(id, input.kind === 'get' ? { value: kvs[0]?.value } : {}, now);
        if (input.kind === 'put') this.acked.push({ key, value, atMs: now });
      } else if (outcome.kind === 'failed') {
        this.history.fail(id, now);
        target = (target + 1) % this.cluster.members.length;
      } else {
        this.history.unknown(id);
        target = (target + 1) % this.cluster.members.length;
      }
    }
  }

  /**
   * After `stop`: one linearizable read of every key the workload wrote, through whichever
   * running member answers, each recorded in the history. With them, a lost acknowledged
   * write (a read after it that misses it) makes the history not linearizable.
   */
  async readEveryKey(deadlineMs: number): Promise<void> {
    const end = performance.now() + deadlineMs;
    const running = this.cluster.members.filter((m) => m.child !== undefined)
      .map((m) => this.cluster.endpoint(m));
    for (let k = 0; k < 3; k++) {
      const key = `k${k}`;
      for (let attempt = 0; ; attempt++) {
        assert.ok(performance.now() < end, `no member answered a read of ${key} in time`);
        const input: KvInput = { kind: 'get', key };
        const id = this.history.invoke('final-reader', input, performance.now());
        const outcome = await call(running[attempt % running.length]!, '/v1/kv/range',
          { key, clientId: 'final-reader', sequence: ++this.sequence }, this.timeoutMs);
        if (outcome.kind === 'ok') {
          const kvs = (outcome.body['kvs'] as { value: string }[] | undefined) ?? [];
          this.history.complete(id, { value: kvs[0]?.value }, performance.now());
          break;
        }
        if (outcome.kind === 'failed') this.history.fail(id, performance.now());
        else this.history.unknown(id);
      }
    }
  }

  /**
   * Fails unless the history is proven linearizable: `illegal` and `unknown` (the step budget
   * ran out: nothing proven) both fail. Returns the verdict, `ok`.
   */
  checkLinearizable(): string {
    const result = checkLinearizable(kvModel, this.history.operations());
    assert.equal(result.result, 'ok', formatIllegalReport(result));
    return result.result;
  }
}
