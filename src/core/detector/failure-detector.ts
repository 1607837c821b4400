/**
 * What every failure detector offers, so that callers (SWIM, the Raft runtime, a user's own
 * heartbeats) can swap the fixed-timeout detector for the phi accrual one.
 */
import type { NodeId } from '../ids.js';

/**
 * A failure detector fed with heartbeat arrivals. It never schedules anything: time arrives as
 * `nowMs`, a monotonic instant in milliseconds (the same clock for every call).
 *
 * Peers have three states:
 * - not monitored (never passed to `heartbeat` or `watch`, or removed): reported available,
 *   since the detector has no evidence either way;
 * - watched, never heard from: the silence counts from the `watch` call, so a peer that never
 *   comes up is still detected;
 * - heard from: the silence counts from the latest heartbeat.
 */
export interface FailureDetector {
  /** Records a heartbeat from `peer` received at `nowMs`; starts monitoring it if needed. */
  heartbeat(peer: NodeId, nowMs: number): void;
  /**
   * Starts monitoring `peer` before its first heartbeat: from now on, silence counts against
   * it. No effect when the peer is already monitored (watching is not evidence of life).
   */
  watch(peer: NodeId, nowMs: number): void;
  /** False once the detector suspects `peer` has failed; true for unmonitored peers. */
  isAvailable(peer: NodeId, nowMs: number): boolean;
  /** Stops monitoring `peer` and forgets its history. */
  remove(peer: NodeId): void;
  /** The monitored peers, sorted. */
  peers(): NodeId[];
}
