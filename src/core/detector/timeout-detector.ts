/**
 * The HeartBeat pattern's detector: a peer is unavailable once it has been silent for longer
 * than `timeoutMs` (about 3 × the heartbeat interval).
 */
import { assert } from '../assert.js';
import { formatConfigProblems } from '../config.js';
import type { NodeId } from '../ids.js';
import {
  TIMEOUT_DETECTOR_DEFAULTS_LAN,
  validateTimeoutDetectorConfig,
  type TimeoutDetectorConfig,
} from './config.js';
import type { FailureDetector } from './failure-detector.js';

interface TimeoutPeerState {
  /** When the silence started: the latest heartbeat, or the `watch` call before any. */
  sinceMs: number;
}

/**
 * Fixed-timeout failure detector.
 *
 * Rules, for a monitored peer whose silence started at `sinceMs` (the latest heartbeat, or the
 * `watch` call when it has never been heard from):
 * - `suspicionLevel = max(0, nowMs - sinceMs) / timeoutMs`, so 1 means "exactly at the timeout";
 * - `isAvailable` is true while the silence is at most `timeoutMs` (level <= 1) and false once it
 *   is longer, as the seed puts it: "doesn't hear from Node B for > 3s".
 *
 * A peer never heard from is "unknown": it counts as available until `timeoutMs` after it was
 * first registered, by its first `heartbeat` or by an explicit `watch(peer, nowMs)`. Call
 * `watch` when you start expecting heartbeats (at start-up, or when a member joins), so that a
 * peer that never comes up is detected; a peer that is neither watched nor heard from is not
 * monitored and always reported available (suspicion 0).
 *
 * Time should come from a monotonic clock. If `nowMs` goes backwards, the silence is clamped at 0
 * and a heartbeat older than the latest one is ignored: the detector never computes a negative
 * silence.
 */
export class TimeoutDetector implements FailureDetector {
  readonly config: TimeoutDetectorConfig;
  private readonly states = new Map<NodeId, TimeoutPeerState>();

  constructor(config: TimeoutDetectorConfig = TIMEOUT_DETECTOR_DEFAULTS_LAN) {
    const problems = validateTimeoutDetectorConfig(config);
    assert(problems.length === 0,
      () => `invalid TimeoutDetectorConfig:\n${formatConfigProblems(problems)}`);
    this.config = Object.freeze({ ...config });
  }

  heartbeat(peer: NodeId, nowMs: number): void {
    assertTime(nowMs);
    const state = this.states.get(peer);
    if (state === undefined) this.states.set(peer, { sinceMs: nowMs });
    else state.sinceMs = Math.max(state.sinceMs, nowMs);
  }

  watch(peer: NodeId, nowMs: number): void {
    assertTime(nowMs);
    if (!this.states.has(peer)) this.states.set(peer, { sinceMs: nowMs });
  }

  isAvailable(peer: NodeId, nowMs: number): boolean {
    // Compared in ms rather than through suspicionLevel, so that rounding in the division
    // cannot move the edge.
    return this.silenceMs(peer, nowMs) <= this.config.timeoutMs;
  }

  /** Silence so far as a fraction of `timeoutMs`: 0 just after a heartbeat, > 1 unavailable. */
  suspicionLevel(peer: NodeId, nowMs: number): number {
    return this.silenceMs(peer, nowMs) / this.config.timeoutMs;
  }

  /** How long `peer` has been silent (0 when not monitored). */
  silenceMs(peer: NodeId, nowMs: number): number {
    assertTime(nowMs);
    const state = this.states.get(peer);
    return state === undefined ? 0 : Math.max(0, nowMs - state.sinceMs);
  }

  remove(peer: NodeId): void {
    this.states.delete(peer);
  }

  peers(): NodeId[] {
    return [...this.states.keys()].sort();
  }
}

function assertTime(nowMs: number): void {
  assert(Number.isFinite(nowMs), () => `nowMs must be a finite number: ${nowMs}`);
}
