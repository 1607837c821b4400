/**
 * What a run must show, computed from its events alone (not from the supervisor's own
 * verdicts): the failed service restarted exactly once, no other service restarted, and no
 * order from a replaced leader obeyed.
 *
 * "Stale" is judged independently of the Fence: an order (or a leader's announcement) is stale
 * when a leadership with a higher token had already begun, by the clock of this machine, when
 * the supervisor handled it. A Fence that let one through would be caught here.
 */
import type { EshopEvent } from './events.js';

export interface RunChecks {
  /** Restarts of the service the scenario failed (must be 1). */
  readonly restartsOfFailed: number;
  /** Restarts of any other service (must be 0). */
  readonly unneededRestarts: number;
  /** Stale orders and announcements the supervisor refused (409). */
  readonly staleRejected: number;
  /** Stale orders and announcements the supervisor obeyed (must be 0). */
  readonly staleAccepted: number;
  /** Tokens obeyed from two different monitors (must be 0: one leadership, one token). */
  readonly sharedTokens: number;
  /** paused-leader: whether the paused leader's order reached the supervisor after SIGCONT. */
  readonly staleOrderArrived: boolean;
}

export interface CheckInput {
  readonly events: readonly EshopEvent[];
  /** Wall-clock time of the fault (events before it belong to the setup). Unit: ms. */
  readonly startAtMs: number;
  readonly failedService: string;
  /** paused-leader: the monitor that was paused, and the token it held. */
  readonly paused?: { readonly monitor: string; readonly token: number };
}

export function checkRun(input: CheckInput): RunChecks {
  const after = input.events.filter((e) => e.atMs >= input.startAtMs);
  const restarts = after.filter((e) => e.kind === 'restarted');
  const leaderships = input.events.flatMap((e) => (e.kind === 'became-leader'
    ? [{ atMs: e.atMs, token: e.token }] : []));
  const newerBegun = (token: number, atMs: number): boolean =>
    leaderships.some((l) => l.token > token && l.atMs < atMs);
  let staleRejected = 0;
  let staleAccepted = 0;
  const monitorsByToken = new Map<number, Set<string>>();
  for (const event of input.events) {
    if (event.kind === 'rejected') {
      if (event.atMs >= input.startAtMs) staleRejected++;
      continue;
    }
    if (event.kind !== 'leader-registered' && event.kind !== 'restarted'
      && event.kind !== 'duplicate') continue;
    if (newerBegun(event.token, event.atMs)) staleAccepted++;
    const monitors = monitorsByToken.get(event.token) ?? new Set<string>();
    monitors.add(event.monitor);
    monitorsByToken.set(event.token, monitors);
  }
  const paused = input.paused;
  const staleOrderArrived = paused !== undefined && after.some((e) =>
    (e.kind === 'rejected' || e.kind === 'restarted' || e.kind === 'duplicate')
    && e.monitor === paused.monitor && e.token === paused.token
    && e.atMs > (resumedAtMs(after, paused.monitor) ?? Infinity));
  return {
    restartsOfFailed: restarts.filter((e) => e.service === input.failedService).length,
    unneededRestarts: restarts.filter((e) => e.service !== input.failedService).length,
    staleRejected,
    staleAccepted,
    sharedTokens: [...monitorsByToken.values()].filter((m) => m.size > 1).length,
    staleOrderArrived,
  };
}

/** The problems of a run, in words; empty when it passed. */
export function runViolations(checks: RunChecks, scenario: string): string[] {
  const problems: string[] = [];
  if (checks.restartsOfFailed !== 1) {
    problems.push(`the failed service was restarted ${checks.restartsOfFailed} times, not once`);
  }
  if (checks.unneededRestarts > 0) {
    problems.push(`${checks.unneededRestarts} restart(s) of services that had not failed`);
  }
  if (checks.staleAccepted > 0) {
    problems.push(`${checks.staleAccepted} stale order(s) obeyed by the supervisor`);
  }
  if (checks.sharedTokens > 0) {
    problems.push(`${checks.sharedTokens} token(s) used by two monitors`);
  }
  if (scenario === 'paused-leader' && !checks.staleOrderArrived) {
    problems.push('the paused leader\'s order never reached the supervisor: nothing was shown');
  }
  return problems;
}

function resumedAtMs(events: readonly EshopEvent[], monitor: string): number | undefined {
  return events.find((e) => e.kind === 'resumed' && e.source === monitor)?.atMs;
}
