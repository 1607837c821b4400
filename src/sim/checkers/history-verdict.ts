/**
 * What a simulated run makes of a linearizability check. A check that ran out of steps proved
 * nothing, so `unknown` fails the seed just as `illegal` does, unless every undecided partition
 * is marked too big for the checker. The mark is a size rule applied to the partitions as split
 * before the search (`partitionOperationsSizedMax`), so no search outcome can earn it. A marked
 * seed passes as `too-big` and the run summary counts it, so a run never claims more than it
 * checked. A default-sized run that comes back `unknown` is a failure to fix (partition better,
 * simplify more, or size the budget), not a seed to mark.
 */
import type { Violation } from '../scenario.js';
import { formatIllegalReport, type LinearizabilityResult } from './linearizability.js';

/** `too-big`: unknown, but only in partitions marked too big for the checker. */
export type HistoryVerdict = 'ok' | 'illegal' | 'unknown' | 'too-big';

/**
 * The step budget is planned for at most this many steps per searched operation of one
 * partition. A linearizable register history with little concurrency needs about one step
 * per operation (the raft scenario's default seeds: 0.95–1.1), so 100 leaves room for a few
 * overlapping unknown-outcome writes (each may double the configurations searched). A
 * partition that cannot be decided within that is too hard for its size: a failure.
 * Unit: steps per operation.
 */
export const STEPS_PER_OPERATION_PLANNED = 100;

/**
 * The most operations one partition may hold for its `unknown` verdict to fail the seed:
 * stepBudget / STEPS_PER_OPERATION_PLANNED. Above it a history is too big for the checker: for
 * the raft scenario's budget of 2,000,000 steps, 20,000 operations on one key (its default runs
 * hold under 1,000; runs of several hundred simulated seconds reach the mark). Unit: operations.
 */
export function partitionOperationsSizedMax(stepBudget: number): number {
  return Math.floor(stepBudget / STEPS_PER_OPERATION_PLANNED);
}

export interface HistoryJudgement {
  readonly verdict: HistoryVerdict;
  /** Present when the verdict fails the seed (`illegal`, `unknown`). */
  readonly violation?: Violation;
  /** For `too-big`: the undecided partitions and their sizes, for the report. */
  readonly tooBig?: string;
}

/** The seed's verdict on `result`, checked at virtual time `atMs`. */
export function judgeHistory(result: LinearizabilityResult, atMs: number): HistoryJudgement {
  if (result.result === 'ok') return { verdict: 'ok' };
  if (result.result === 'illegal') {
    return { verdict: 'illegal',
      violation: { checker: 'linearizability', atMs, message: formatIllegalReport(result) } };
  }
  const sizedMax = partitionOperationsSizedMax(result.stepBudget);
  const undecided = result.partitions.filter((p) => p.result === 'unknown');
  const sized = undecided.filter((p) => p.operationCount <= sizedMax);
  if (sized.length === 0) {
    const tooBig = undecided.map((p) => `${p.label} (${p.operationCount} operations)`).join(', ')
      + ` over ${sizedMax} operations`;
    return { verdict: 'too-big', tooBig };
  }
  return {
    verdict: 'unknown',
    violation: {
      checker: 'linearizability-unknown', atMs,
      message: `the step budget ran out on ${sized.length} partition(s) of at most ${sizedMax} `
        + `operations, which the checker is sized to decide (${STEPS_PER_OPERATION_PLANNED} `
        + `steps per operation): the history is neither proven linearizable nor refuted\n`
        + formatIllegalReport(result),
    },
  };
}
