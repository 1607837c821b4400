/**
 * A suspicion timer with Lifeguard's dynamic timeout (Dadgar et al. 2017, §4.2 "Local Health
 * Aware Suspicion"): it starts at `maxMs` and shrinks towards `minMs` as distinct members
 * independently confirm the suspicion, following
 *   timeout = max(minMs, maxMs − (maxMs − minMs) × log(c + 1) / log(k + 1))
 * for c confirmations of the k wanted. No timer object: the owner compares `deadlineMs` with
 * the time it is given.
 */
import { assert } from '../assert.js';
import type { NodeId } from '../ids.js';

/** The timeout after `confirmations` of `wanted` confirmations (see the module comment). */
export function suspicionTimeoutMs(
  confirmations: number, wanted: number, minMs: number, maxMs: number,
): number {
  assert(minMs > 0 && maxMs >= minMs, () => `suspicion bounds: min ${minMs}, max ${maxMs}`);
  // With nobody to confirm, do not wait for confirmations that cannot come.
  if (wanted < 1) return minMs;
  const fraction = Math.log(confirmations + 1) / Math.log(wanted + 1);
  return Math.max(minMs, Math.floor(maxMs - fraction * (maxMs - minMs)));
}

export class Suspicion {
  /** Distinct accusers, the first one included (it is not a confirmation). */
  private readonly accusers: NodeId[];
  private confirmations = 0;
  private deadline: number;

  /**
   * `firstAccuser` started the suspicion (it may be this member): its own rumour coming back
   * must not count as a confirmation. `wanted` is k; 0 fixes the timeout at `minMs`.
   */
  constructor(
    firstAccuser: NodeId,
    private readonly wanted: number,
    private readonly minMs: number,
    private readonly maxMs: number,
    private readonly startMs: number,
  ) {
    assert(wanted >= 0 && Number.isInteger(wanted), () => `suspicion wanted: ${wanted}`);
    this.accusers = [firstAccuser];
    this.deadline = startMs + suspicionTimeoutMs(0, wanted, minMs, maxMs);
  }

  /** When the suspect is declared dead unless it refutes first. */
  get deadlineMs(): number {
    return this.deadline;
  }

  /** Everyone who accused, the first accuser first (the evidence behind a death). */
  get evidence(): readonly NodeId[] {
    return this.accusers;
  }

  /**
   * Counts `accuser` if it is new and more confirmations still shorten the timer; returns
   * whether it counted (only then is the confirmation worth gossiping on).
   */
  confirm(accuser: NodeId): boolean {
    if (this.confirmations >= this.wanted) return false;
    if (this.accusers.includes(accuser)) return false;
    this.accusers.push(accuser);
    this.confirmations++;
    const next = this.startMs
      + suspicionTimeoutMs(this.confirmations, this.wanted, this.minMs, this.maxMs);
    assert(next <= this.deadline, () => `a confirmation lengthened a suspicion: ${next}`);
    this.deadline = next;
    return true;
  }
}
