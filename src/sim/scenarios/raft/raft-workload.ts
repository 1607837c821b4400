/**
 * Simulated clients of the raft scenario: each runs a closed loop of register operations (get,
 * put, cas on a few keys) against the node it believes leads, records every call and return in a
 * history for the linearizability checker, and treats a call with no answer in time as unknown
 * (maybe applied). Clients never crash; the nodes they talk to do.
 *
 * Most gets are linearizable reads without a log write (the runtime's ReadIndex `read`, which a
 * follower forwards to its leader); `getsThroughLogRate` of them go through the log as commands,
 * so both paths stay checked.
 */
import type { NodeId } from '../../../core/ids.js';
import { randomChance, randomFloat, randomInt } from '../../../core/random.js';
import type { ProposalOutcome } from '../../../runtime/raft/raft-runtime.js';
import { HistoryRecorder } from '../../checkers/history.js';
import type { KvInput, KvOutput } from '../../checkers/kv-model.js';
import type { Prng } from '../../prng.js';
import type { Scheduler } from '../../scheduler.js';
import { encodeKvCommand } from './sim-kv.js';

export interface WorkloadOptions {
  readonly clients: number;
  readonly keys: number;
  /** Mean think time between a client's operations. Unit: ms. */
  readonly thinkMsMean: number;
  /** A call with no answer after this long is unknown. Unit: ms. */
  readonly callTimeoutMs: number;
  /** No new calls after this instant. Unit: ms (virtual). */
  readonly stopAtMs: number;
  /** Share of gets proposed as log commands instead of ReadIndex reads. Unit: ratio. */
  readonly getsThroughLogRate: number;
}

/** The answer to a read: the value, or a failure with the leader to try next. */
export type ReadAnswer =
  | { readonly kind: 'ok'; readonly value: string | undefined }
  | { readonly kind: 'failed' };

/** What the workload needs of the cluster: submit a proposal to a node's running process. */
export interface WorkloadCluster {
  readonly nodeIds: readonly NodeId[];
  propose(node: NodeId, data: Uint8Array, done: (outcome: ProposalOutcome<KvOutput>) => void): void;
  /** A linearizable read of `key` at `node` (ReadIndex), answered from its state machine. */
  read(node: NodeId, key: string, done: (answer: ReadAnswer) => void): void;
}

export interface WorkloadCounts {
  ok: number;
  failed: number;
  unknown: number;
  /** Of the ok calls, gets served by ReadIndex reads (no log write). */
  reads: number;
}

export class RaftWorkload {
  readonly history = new HistoryRecorder<KvInput, KvOutput>();
  readonly counts: WorkloadCounts = { ok: 0, failed: 0, unknown: 0, reads: 0 };
  /** Virtual instants of successful calls through the log (writes), for liveness checks. */
  readonly okAtMs: number[] = [];

  constructor(
    private readonly prng: Prng,
    private readonly scheduler: Scheduler,
    private readonly cluster: WorkloadCluster,
    private readonly options: WorkloadOptions,
  ) {}

  start(): void {
    for (let c = 0; c < this.options.clients; c++) this.next(`c${c}`, 0, undefined);
  }

  private next(clientId: string, sequence: number, leaderGuess: NodeId | undefined): void {
    const thinkMs = -Math.log(1 - randomFloat(this.prng)) * this.options.thinkMsMean;
    if (this.scheduler.nowMs + thinkMs >= this.options.stopAtMs) return;
    this.scheduler.schedule(thinkMs, () => this.call(clientId, sequence, leaderGuess));
  }

  private call(clientId: string, sequence: number, leaderGuess: NodeId | undefined): void {
    const ids = this.cluster.nodeIds;
    const target = leaderGuess ?? ids[randomInt(this.prng, 0, ids.length)]!;
    const input = this.drawInput(clientId, sequence);
    const id = this.history.invoke(clientId, input, this.scheduler.nowMs);
    let finished = false;
    const finish = (nextGuess: NodeId | undefined): void => {
      finished = true;
      this.next(clientId, sequence + 1, nextGuess);
    };
    const timeout = this.scheduler.schedule(this.options.callTimeoutMs, () => {
      if (finished) return;
      this.history.unknown(id);
      this.counts.unknown++;
      finish(undefined);
    });
    if (input.kind === 'get' && !randomChance(this.prng, this.options.getsThroughLogRate)) {
      this.cluster.read(target, input.key, (answer) => {
        if (finished) return;
        timeout.cancelled = true;
        if (answer.kind === 'failed') {
          this.history.fail(id, this.scheduler.nowMs);
          this.counts.failed++;
          return finish(undefined);
        }
        this.history.complete(id, { value: answer.value }, this.scheduler.nowMs);
        this.counts.ok++;
        this.counts.reads++;
        return finish(target);
      });
      return;
    }
    this.cluster.propose(target, encodeKvCommand(input), (outcome) => {
      if (finished) return;
      timeout.cancelled = true;
      switch (outcome.kind) {
        case 'applied':
          this.history.complete(id, outcome.result, this.scheduler.nowMs);
          this.counts.ok++;
          this.okAtMs.push(this.scheduler.nowMs);
          return finish(target);
        case 'failed':
          this.history.fail(id, this.scheduler.nowMs);
          this.counts.failed++;
          return finish(outcome.leaderHint);
        case 'unknown':
          this.history.unknown(id);
          this.counts.unknown++;
          return finish(undefined);
      }
    });
  }

  private drawInput(clientId: string, sequence: number): KvInput {
    const key = `k${randomInt(this.prng, 0, this.options.keys)}`;
    const value = `${clientId}.${sequence}`;
    const roll = randomFloat(this.prng);
    if (roll < 0.4) return { kind: 'get', key };
    if (roll < 0.8) return { kind: 'put', key, value };
    if (roll < 0.9) return { kind: 'delete', key };
    const expected = randomChance(this.prng, 0.3) ? undefined : `${clientId}.${Math.max(0, sequence - 1)}`;
    return { kind: 'cas', key, expected, value };
  }
}
