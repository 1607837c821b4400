/** tidy: what every rule reports. */
export interface TidyViolation {
  /** Relative to the checked root, with `/` separators on every platform. */
  readonly file: string;
  readonly line: number;
  readonly rule: string;
  readonly text: string;
}

/** A function longer than the limit (reported apart: the baseline and allow-list judge it). */
export interface LongFunction {
  readonly file: string;
  readonly line: number;
  /** `runRaftSeed`, `LeaderOffice.establish`, `heartbeatScenario.runSeed`. */
  readonly name: string;
  readonly lines: number;
}

/** A line wider than the limit. */
export interface LongLine {
  readonly file: string;
  readonly line: number;
  readonly columns: number;
}
