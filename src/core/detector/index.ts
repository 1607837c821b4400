/**
 * @packageDocumentation
 * Failure detectors for the HeartBeat pattern: feed them heartbeat arrival times, ask them
 * whether a peer is still available. Pure: no timers, no clock; time arrives as `nowMs` (a
 * monotonic instant in ms), so the simulator and real nodes drive them alike.
 *
 * - `TimeoutDetector`: a peer silent for more than `timeoutMs` (about 3 × the heartbeat
 *   interval) is unavailable; `suspicionLevel` = silence / timeout for dashboards.
 * - `PhiAccrualDetector`: learns each peer's inter-arrival distribution and reports phi, the
 *   suspicion on a log10 scale (Hayashibara et al. 2004, computed as Akka does); a peer is
 *   unavailable once phi reaches `threshold`.
 *
 * Invariants: a peer that is not monitored is available (there is no evidence against it);
 * silence counts from the latest heartbeat or, before the first one, from `watch`; phi is never
 * NaN and never decreases while a peer stays silent; each peer's window holds at most
 * `maxSampleSize` intervals; configs are validated at construction (every problem listed).
 *
 * @example
 * ```ts
 * import { PhiAccrualDetector, PHI_ACCRUAL_DEFAULTS_LAN } from './core/detector/index.js';
 * import { nodeId } from './core/ids.js';
 *
 * const detector = new PhiAccrualDetector(PHI_ACCRUAL_DEFAULTS_LAN);
 * const n2 = nodeId('n2');
 * detector.watch(n2, 0);            // expect n2 from now on, even if it never comes up
 * detector.heartbeat(n2, 1000);     // on every heartbeat received from n2
 * detector.phi(n2, 2000);           // ≈ 0: silence well within what n2 usually does
 * detector.isAvailable(n2, 9000);   // false: 8 s of silence is far beyond mean + pause
 * ```
 */
export type { FailureDetector } from './failure-detector.js';
export { TimeoutDetector } from './timeout-detector.js';
export { PhiAccrualDetector, phiOf, type PhiPeerStats } from './phi-accrual-detector.js';
export {
  PHI_ACCRUAL_DEFAULTS_LAN,
  PHI_ACCRUAL_DEFAULTS_LOCAL,
  PHI_SAMPLE_SIZE_LIMIT,
  TIMEOUT_DETECTOR_DEFAULTS_LAN,
  TIMEOUT_DETECTOR_DEFAULTS_LOCAL,
  validatePhiAccrualDetectorConfig,
  validateTimeoutDetectorConfig,
  type PhiAccrualDetectorConfig,
  type TimeoutDetectorConfig,
} from './config.js';
