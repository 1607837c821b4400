/**
 * Deadlines for tests on real time (real processes, real sockets, real timers), derived from
 * the timings of what they wait for, and sized for a loaded 2-core machine: there the processes
 * under test get a fraction of a core each, their timers fire late, process start and module
 * loading (tsx compiling the CLI from source) take seconds, and every round trip waits its
 * turn. "Timed out after 15000 ms waiting for a leader followed by a majority" is what a
 * deadline sized for an idle machine gives there.
 *
 * The rule: a wait that takes `idleMs` on an idle machine gets `max(floor, idleMs × LOAD_FACTOR)`.
 * A condition that holds returns at once, so a generous deadline costs nothing on a healthy run;
 * it only decides how long a broken one takes to fail (tens of seconds: STYLE allows it).
 * CONCLAVE_TEST_LOAD_FACTOR overrides the factor for a machine busier still.
 */

/** How much slower than on an idle machine a step may run. Default: 20. */
export const LOAD_FACTOR = loadFactorFromEnv();

/** The shortest deadline for waiting on processes or a cluster. Unit: ms. */
export const DEADLINE_FLOOR_MS = 30_000;

/**
 * The shortest timeout a test may give the system under test on a path that must succeed (a
 * client's request timeout on a healthy cluster): one that fires there fails a healthy run.
 * Unit: ms.
 */
export const PATIENCE_FLOOR_MS = 5_000;

/** What one `node` process (a server, or the CLI from source through tsx) takes to start, idle. */
export const PROCESS_START_MS_IDLE = 1_500;

/** A deadline for a wait that takes `idleMs` on an idle machine. Unit: ms. */
export function deadlineMs(idleMs: number): number {
  return Math.max(DEADLINE_FLOOR_MS, Math.ceil(idleMs * LOAD_FACTOR));
}

/**
 * A timeout for the system under test on a path that must succeed (a request timeout, a
 * retry deadline), for a step that takes `idleMs` idle. Unit: ms.
 */
export function patienceMs(idleMs: number): number {
  return Math.max(PATIENCE_FLOOR_MS, Math.ceil(idleMs * LOAD_FACTOR));
}

/** A real cluster's timings, as the servers were started with them. */
export interface ClusterTiming {
  readonly heartbeatMs: number;
  readonly electionTimeoutMs: number;
}

/** What waiting on a real cluster may take, from its own timings. Unit: ms. */
export interface ClusterDeadlines {
  /**
   * Processes started (or restarted) to a leader a majority follows: start, one election
   * timeout (up to twice that, randomized) and a pre-vote and a vote round, twice over for a
   * split vote.
   */
  readonly leaderMs: number;
  /** A leader change after a kill or a cut: detection, then a new election. */
  readonly failoverMs: number;
  /** A write or read on a cluster with a leader, retries included. */
  readonly requestMs: number;
}

export function clusterDeadlines(timing: ClusterTiming): ClusterDeadlines {
  const electionMs = 2 * timing.electionTimeoutMs + 4 * timing.heartbeatMs;
  return {
    leaderMs: deadlineMs(PROCESS_START_MS_IDLE + 2 * electionMs),
    failoverMs: deadlineMs(2 * electionMs),
    requestMs: deadlineMs(electionMs),
  };
}

/**
 * `--timeout-ms` and `--deadline-ms` for a `conclave` client command in a test: the CLI's
 * defaults (2 s per request, 5 s of retries) are sized for an idle machine.
 */
export function cliClientFlags(): string[] {
  return ['--timeout-ms', String(patienceMs(500)), '--deadline-ms', String(deadlineMs(2000))];
}

function loadFactorFromEnv(): number {
  const raw = process.env['CONCLAVE_TEST_LOAD_FACTOR'];
  if (raw === undefined || raw === '') return 20;
  const factor = Number(raw);
  if (!Number.isFinite(factor) || factor < 1) {
    throw new Error(`CONCLAVE_TEST_LOAD_FACTOR must be a number >= 1: ${raw}`);
  }
  return factor;
}
