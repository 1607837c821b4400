/**
 * Lifeguard's local health awareness (Dadgar et al. 2017, §4.1 "Local Health Aware Probe"):
 * a member that misses acks and nacks it should have received, or must refute suspicions of
 * itself, is probably the slow one. It then stretches its own probe interval and timeout
 * instead of accusing healthy members.
 */
import { assert } from '../assert.js';

export class Awareness {
  private scoreValue = 0;

  /** `max` is the multiplier cap: the score stays in [0, max − 1]. */
  constructor(private readonly max: number) {
    assert(Number.isInteger(max) && max >= 1,
      () => `awareness max must be an integer >= 1: ${max}`);
  }

  /** 0 means healthy; each point adds one more probe interval of patience. */
  get score(): number {
    return this.scoreValue;
  }

  /** Adds `delta` (negative on good news) and clamps to [0, max − 1]. */
  applyDelta(delta: number): void {
    assert(Number.isInteger(delta), () => `awareness delta must be an integer: ${delta}`);
    this.scoreValue = Math.min(this.max - 1, Math.max(0, this.scoreValue + delta));
  }

  /** `durationMs × (score + 1)`: Lifeguard's scaling of the probe interval and timeout. */
  scale(durationMs: number): number {
    return durationMs * (this.scoreValue + 1);
  }
}
