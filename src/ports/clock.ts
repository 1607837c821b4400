/**
 * Time as the outside world gives it. Protocols never read a clock: the runtime reads this port
 * and passes `nowMs` in. The simulator's twin adds per-node offset and drift.
 */
export interface Clock {
  /**
   * Milliseconds on a clock that never goes backwards and is not adjusted by NTP; the origin is
   * arbitrary (process start). All timeouts, leases and failure detection use this one.
   */
  monotonicMs(): number;
  /**
   * Milliseconds since the Unix epoch as the machine believes it. May jump in either direction;
   * only for logs and for humans, never for a timeout.
   */
  wallMs(): number;
}
