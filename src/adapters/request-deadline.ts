/**
 * The per-request deadline on the HTTP API, modelled on gRPC's `grpc-timeout`: the client
 * sends, with each attempt, how long it will wait for the answer (`conclave-timeout: 800m`,
 * a positive integer and a unit: `m` milliseconds, `S` seconds), and the server answers no
 * later than that: a write or linearizable read still waiting for the log is answered 504
 * CONCLAVE_DEADLINE_EXCEEDED (outcome `unknown` for a write that may still apply, `failed` for
 * what applies nothing), so the client hears the server's verdict instead of timing out on
 * its own. The server never waits longer than its own request timeout either way. Shared by the
 * client's transport and the server (src/server/http-api.ts).
 */
import { CoordError } from '../errors.js';

/** The header's name (lower case, as Node presents headers). */
export const REQUEST_TIMEOUT_HEADER = 'conclave-timeout';

/**
 * The part of an attempt's timeout kept back for the answer's trip to the client and its
 * parsing. Unit: ms. Default: 100, at most a quarter of the timeout. Why: on a LAN the trip
 * takes well under a millisecond and parsing a few; 100 ms leaves room for a loaded client
 * machine, and a quarter keeps a short timeout useful.
 */
export const ANSWER_ALLOWANCE_MS_MAX = 100;

/** The longest value accepted: about 27.7 hours, more than any request needs. Unit: ms. */
export const REQUEST_TIMEOUT_MS_MAX = 99_999_999;

/** The deadline to send for an attempt the client waits `attemptTimeoutMs` for. Unit: ms. */
export function serverDeadlineMs(attemptTimeoutMs: number): number {
  const allowanceMs = Math.min(ANSWER_ALLOWANCE_MS_MAX, attemptTimeoutMs / 4);
  return Math.max(1, Math.floor(attemptTimeoutMs - allowanceMs));
}

/** The header's value for `ms`: milliseconds, as `<n>m`. */
export function formatRequestTimeout(ms: number): string {
  return `${Math.max(1, Math.min(REQUEST_TIMEOUT_MS_MAX, Math.floor(ms)))}m`;
}

/**
 * The client's deadline from the header's value, in ms; undefined when absent. A malformed
 * value throws CONCLAVE_REQUEST_INVALID saying what is wrong.
 */
export function parseRequestTimeout(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const match = /^([1-9][0-9]{0,7})([mS])$/.exec(text.trim());
  if (match === null) {
    throw new CoordError('CONCLAVE_REQUEST_INVALID', `${REQUEST_TIMEOUT_HEADER}: expected a `
      + `positive integer of at most 8 digits and a unit (m: ms, S: s), e.g. 800m; got `
      + JSON.stringify(text.slice(0, 40)));
  }
  const ms = Number(match[1]) * (match[2] === 'S' ? 1000 : 1);
  return Math.min(ms, REQUEST_TIMEOUT_MS_MAX);
}

/**
 * How long the server gives one request: the client's deadline if it sent one shorter than the
 * server's own timeout, else the server's.
 */
export function requestBudget(header: string | string[] | undefined, serverTimeoutMs: number):
  { readonly ms: number; readonly byClient: boolean } {
  const clientMs = parseRequestTimeout(header);
  if (clientMs !== undefined && clientMs < serverTimeoutMs) return { ms: clientMs, byClient: true };
  return { ms: serverTimeoutMs, byClient: false };
}
