/**
 * What the commands that talk to a cluster share (`status`, `kv`, `watch`, `lease`, `elect`,
 * `lock`): the endpoint and timing flags, building a client from them, and turning every
 * failure into one clear line and an exit code (2: usage, 1: the cluster could not do it)
 * instead of a stack trace.
 */
import { Command, InvalidArgumentError } from 'commander';
import { connect, type ConclaveClient, type ConnectOptions } from '../../client/index.js';
import { parseEndpointList } from '../../client/endpoints.js';
import { CoordError, UsageError } from '../../errors.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';

/** The client ports of `conclave dev` with its default base port (2379, every other port). */
export const DEFAULT_ENDPOINTS = '127.0.0.1:2379,127.0.0.1:2381,127.0.0.1:2383';
export const ENDPOINTS_ENV = 'CONCLAVE_ENDPOINTS';
export const EXIT_OPERATIONAL = 1;
export const EXIT_USAGE = 2;

/** Per-command defaults: a person at a terminal wants an answer within seconds. */
const CLI_REQUEST_TIMEOUT_MS = 2000;
const CLI_DEADLINE_MS = 5000;

export interface ClientFlags {
  readonly endpoints?: string[];
  readonly json?: boolean;
  readonly timeoutMs?: number;
  readonly deadlineMs?: number;
}

/** Adds --endpoints, --json, --timeout-ms and --deadline-ms to `command`. */
export function addClientOptions(command: Command): Command {
  return command
    .option('--endpoints <list>', `client endpoints, host:port,... (default: $${ENDPOINTS_ENV}, ` +
      `else ${DEFAULT_ENDPOINTS})`, endpointsFlag)
    .option('--json', 'machine-readable output (one JSON object per line)', false)
    .option('--timeout-ms <ms>', 'longest wait for one request ' +
      `(default: ${CLI_REQUEST_TIMEOUT_MS})`, integerIn(1, 3_600_000))
    .option('--deadline-ms <ms>', 'how long to keep retrying (other members, a new leader) ' +
      `before giving up (default: ${CLI_DEADLINE_MS})`, integerIn(1, 86_400_000));
}

function endpointsFlag(value: string): string[] {
  const parsed = parseEndpointList(value);
  if ('problems' in parsed) throw new InvalidArgumentError(parsed.problems.join('; '));
  return parsed.urls;
}

/** The endpoints: the flag, else $CONCLAVE_ENDPOINTS, else the `conclave dev` defaults. */
export function resolveEndpoints(flags: ClientFlags,
  env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  if (flags.endpoints !== undefined) return flags.endpoints;
  const fromEnv = env[ENDPOINTS_ENV];
  const parsed = parseEndpointList(fromEnv !== undefined && fromEnv.trim() !== ''
    ? fromEnv : DEFAULT_ENDPOINTS);
  if ('problems' in parsed) {
    throw new UsageError(`$${ENDPOINTS_ENV} is invalid: ${parsed.problems.join('; ')}`);
  }
  return parsed.urls;
}

/** `extra`: client options a command sets from its own flags (e.g. leaseMarginMs). */
export function clientFor(flags: ClientFlags,
  extra: Partial<Omit<ConnectOptions, 'endpoints'>> = {}): ConclaveClient {
  return connect({
    ...extra,
    endpoints: resolveEndpoints(flags),
    requestTimeoutMs: flags.timeoutMs ?? CLI_REQUEST_TIMEOUT_MS,
    retryDeadlineMs: flags.deadlineMs ?? CLI_DEADLINE_MS,
  });
}

/**
 * Runs `body` with a client built from `flags`, closes the client, and maps failures to one
 * line on stderr (and, with --json, `{"error":{...}}` on stdout) and an exit code.
 * `write`: the command changes data, so an unknown outcome is spelled out.
 */
export async function withClient(io: CliIo, name: string, flags: ClientFlags, write: boolean,
  body: (client: ConclaveClient) => Promise<number>,
  extra: Partial<Omit<ConnectOptions, 'endpoints'>> = {}): Promise<number> {
  let client: ConclaveClient | undefined;
  try {
    client = clientFor(flags, extra);
    return await body(client);
  } catch (error) {
    return reportError(io, name, flags, write, error);
  } finally {
    client?.close();
  }
}

export function reportError(io: CliIo, name: string, flags: ClientFlags, write: boolean,
  error: unknown): number {
  // Anything else is a bug: main prints it (with its stack under CONCLAVE_DEBUG).
  if (!(error instanceof CoordError)) throw error;
  const usage = error.code === 'CONCLAVE_USAGE' || error.code === 'CONCLAVE_CONFIG_INVALID';
  const note = !write || usage ? ''
    : error.outcome === 'unknown' ? ' (outcome unknown: the write may have been applied)'
      : ' (not applied)';
  const message = error.message.replace(/\s*\n\s*/g, '; ');
  io.err(`conclave ${name}: ${error.code}: ${message}${note}`);
  if (flags.json === true) {
    io.out(JSON.stringify({ error: { code: error.code, message, outcome: error.outcome } }));
  }
  return usage ? EXIT_USAGE : EXIT_OPERATIONAL;
}

/** A flag parser for non-negative revisions. */
export const revisionFlag = integerIn(0, Number.MAX_SAFE_INTEGER);
