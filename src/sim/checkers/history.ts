/**
 * Client histories for the linearizability checker: what each client asked, when it asked, and
 * what came back. Plain JSON-serializable data, so a simulation, a real-process test or a file
 * written by an earlier run can all feed the same checker.
 *
 * Outcomes (Jepsen's ok / fail / info):
 * - `ok`: the operation returned `output` at time `return`; it took effect exactly once,
 *   somewhere in [call, return].
 * - `failed`: it definitely did not take effect (for example rejected before it was proposed).
 *   The checker drops it; a failed write that some read observes makes the history illegal.
 * - `unknown`: it may have taken effect, at any time after its call, or never (a timeout, a
 *   lost connection, an ambiguous error). The checker treats its return time as +infinity and
 *   its output as unconstrained, whatever `return` and `output` say.
 *
 * Times are milliseconds read from one clock for the whole history (the simulator's virtual
 * time, or one test process's monotonic clock). A call and a return at the same time count as
 * concurrent (see linearizability.ts).
 */
import { assert } from '../../core/assert.js';
import type { Brand } from '../../core/ids.js';

/** What became of an operation: see the file comment. */
export type OperationOutcome = 'ok' | 'failed' | 'unknown';

/** One client operation. `I` is the model's input type, `O` its output type. */
export interface Operation<I, O> {
  /** Who issued it; a label for reports (ops of one client may still overlap). */
  readonly clientId: string;
  readonly input: I;
  /** When the client sent it. Unit: ms on the history's clock. */
  readonly call: number;
  /**
   * When the answer arrived; undefined when none did (timed out, never returned). Ignored for
   * `unknown` outcomes. Unit: ms on the history's clock.
   */
  readonly return: number | undefined;
  /** The answer; undefined when there was none. Ignored unless the outcome is `ok`. */
  readonly output: O | undefined;
  readonly outcome: OperationOutcome;
}

/** A handle on an operation being recorded: its index in `operations()`. */
export type OperationId = Brand<number, 'OperationId'>;

const OUTCOMES: readonly OperationOutcome[] = ['ok', 'failed', 'unknown'];

/**
 * Every problem with a history's shape, at once (empty when it is well formed). Accepts parsed
 * JSON: a missing `return` or `output` field reads as undefined.
 */
export function validateHistory(operations: readonly unknown[]): string[] {
  const problems: string[] = [];
  operations.forEach((value, index) => {
    const where = `operation ${index}`;
    if (typeof value !== 'object' || value === null) {
      problems.push(`${where}: not an object: ${String(value)}`);
      return;
    }
    const op = value as Partial<Record<keyof Operation<unknown, unknown>, unknown>>;
    if (typeof op.clientId !== 'string' || op.clientId === '') {
      problems.push(`${where}: clientId must be a non-empty string: ${String(op.clientId)}`);
    }
    if (op.input === undefined) problems.push(`${where}: input is missing`);
    if (typeof op.call !== 'number' || !Number.isFinite(op.call)) {
      problems.push(`${where}: call must be a finite number: ${String(op.call)}`);
    }
    if (!OUTCOMES.includes(op.outcome as OperationOutcome)) {
      problems.push(
        `${where}: outcome must be one of ${OUTCOMES.join(', ')}: ${String(op.outcome)}`);
    }
    const ret = op.return;
    if (ret !== undefined && (typeof ret !== 'number' || !Number.isFinite(ret))) {
      problems.push(`${where}: return must be a finite number or undefined: ${String(ret)}`);
    } else if (typeof ret === 'number' && typeof op.call === 'number' && ret < op.call) {
      problems.push(`${where}: return ${ret} is before call ${op.call}`);
    }
    if (op.outcome === 'ok') {
      if (ret === undefined) problems.push(`${where}: an ok operation needs a return time`);
      if (op.output === undefined) problems.push(`${where}: an ok operation needs an output`);
    }
  });
  return problems;
}

interface OperationRecord<I, O> {
  clientId: string;
  input: I;
  call: number;
  return: number | undefined;
  output: O | undefined;
  outcome: OperationOutcome | 'pending';
}

/**
 * Records a history as the clients run. Each operation gets exactly one of `complete`, `fail`
 * or `unknown`; one still pending when `operations()` is read counts as `unknown` (it never
 * returned, so it may or may not have taken effect).
 *
 * @example
 * const history = new HistoryRecorder<KvInput, KvOutput>();
 * const id = history.invoke('c1', { kind: 'put', key: 'x', value: 'a' }, nowMs);
 * // ... later, when the answer arrives:
 * history.complete(id, {}, laterMs);
 * checkLinearizable(kvModel, history.operations());
 */
export class HistoryRecorder<I, O> {
  private readonly records: OperationRecord<I, O>[] = [];
  private pendingCountValue = 0;

  /** Operations invoked but not yet completed, failed or marked unknown. */
  get pendingCount(): number {
    return this.pendingCountValue;
  }

  /** Records that `clientId` sent `input` at `nowMs`. */
  invoke(clientId: string, input: I, nowMs: number): OperationId {
    assert(clientId !== '', 'HistoryRecorder.invoke: clientId must not be empty');
    assert(Number.isFinite(nowMs), () => `HistoryRecorder.invoke: nowMs must be finite: ${nowMs}`);
    const record: OperationRecord<I, O> = {
      clientId, input, call: nowMs, return: undefined, output: undefined, outcome: 'pending',
    };
    this.records.push(record);
    this.pendingCountValue++;
    return (this.records.length - 1) as OperationId;
  }

  /** The operation returned `output` at `nowMs`: it took effect between its call and now. */
  complete(id: OperationId, output: O, nowMs: number): void {
    const record = this.pending(id, 'complete');
    assert(output !== undefined, () => `HistoryRecorder.complete: operation ${id} has no output`);
    this.finish(record, id, nowMs);
    record.output = output;
    record.outcome = 'ok';
  }

  /** The operation definitely did not take effect (answer received at `nowMs`). */
  fail(id: OperationId, nowMs: number): void {
    const record = this.pending(id, 'fail');
    this.finish(record, id, nowMs);
    record.outcome = 'failed';
  }

  /** The outcome cannot be known (timeout, lost connection): it may take effect, or never. */
  unknown(id: OperationId): void {
    this.pending(id, 'unknown').outcome = 'unknown';
  }

  /** A copy of the history so far; still-pending operations appear as `unknown`. */
  operations(): Operation<I, O>[] {
    return this.records.map((r) => ({
      clientId: r.clientId,
      input: r.input,
      call: r.call,
      return: r.outcome === 'pending' ? undefined : r.return,
      output: r.outcome === 'ok' ? r.output : undefined,
      outcome: r.outcome === 'pending' ? 'unknown' : r.outcome,
    }));
  }

  private pending(id: OperationId, what: string): OperationRecord<I, O> {
    const record = this.records[id];
    assert(record !== undefined, () => `HistoryRecorder.${what}: no operation ${id}`);
    assert(record.outcome === 'pending',
      () => `HistoryRecorder.${what}: operation ${id} already ended as ${record.outcome}`);
    this.pendingCountValue--;
    return record;
  }

  private finish(record: OperationRecord<I, O>, id: OperationId, nowMs: number): void {
    assert(Number.isFinite(nowMs) && nowMs >= record.call,
      () => `HistoryRecorder: operation ${id} ends at ${nowMs}, before its call ${record.call}`);
    record.return = nowMs;
  }
}
