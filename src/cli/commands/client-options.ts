/**
 * What the commands that talk to a cluster share (`status`, `kv`, `watch`, `lease`, `elect`,
 * `lock`): the endpoint, TLS and timing flags, building a client from them, and turning every
 * failure into one clear line and an exit code (2: usage, 1: the cluster could not do it)
 * instead of a stack trace. The TLS flags are etcdctl's: `--cacert`, `--cert`, `--key`. Each
 * flag may come from the environment instead: $CONCLAVE_ENDPOINTS, $CONCLAVE_CACERT,
 * $CONCLAVE_CERT, $CONCLAVE_KEY, $CONCLAVE_TIMEOUT_MS, $CONCLAVE_DEADLINE_MS, $CONCLAVE_USER,
 * $CONCLAVE_PASSWORD. Authentication is etcdctl's too: `--user NAME[:PASSWORD]` and
 * `--password` (docs/security.md, "Authentication").
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  connect, type ClientTlsOptions, type ConclaveClient, type ConnectOptions,
} from '../../client/index.js';
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
  /** As given (host:port or URLs); resolved once the TLS flags are known. */
  readonly endpoints?: string;
  readonly json?: boolean;
  readonly timeoutMs?: number;
  readonly deadlineMs?: number;
  /** Files: PEM CA bundle, client certificate, its key. */
  readonly cacert?: string;
  readonly cert?: string;
  readonly key?: string;
  /** `NAME` or `NAME:PASSWORD` (etcdctl's --user). */
  readonly user?: string;
  readonly password?: string;
}

/**
 * The environment variables of the client flags (etcdctl's ETCDCTL_* convention): a flag on
 * the command line wins over its variable.
 */
export const CLIENT_FLAG_ENV = {
  cacert: 'CONCLAVE_CACERT', cert: 'CONCLAVE_CERT', key: 'CONCLAVE_KEY',
  timeoutMs: 'CONCLAVE_TIMEOUT_MS', deadlineMs: 'CONCLAVE_DEADLINE_MS',
  user: 'CONCLAVE_USER', password: 'CONCLAVE_PASSWORD',
} as const;

/** Adds --endpoints, --cacert, --cert, --key, --json, --timeout-ms and --deadline-ms. */
export function addClientOptions(command: Command): Command {
  return command
    .option('--endpoints <list>', `client endpoints, host:port or URLs, comma-separated ` +
      `(default: $${ENDPOINTS_ENV}, else ${DEFAULT_ENDPOINTS})`, endpointsFlag)
    .addOption(new Option('--cacert <file>', 'verify the members\' TLS certificates with this '
      + 'PEM CA bundle; turns TLS on (host:port endpoints become https://)')
      .env(CLIENT_FLAG_ENV.cacert))
    .addOption(new Option('--cert <file>', 'this client\'s TLS certificate (PEM), for members '
      + 'that require one; turns TLS on; needs --key').env(CLIENT_FLAG_ENV.cert))
    .addOption(new Option('--key <file>', 'the private key (PEM) of --cert')
      .env(CLIENT_FLAG_ENV.key))
    .addOption(new Option('--user <name[:password]>', 'log in as this user (auth on; '
      + 'docs/security.md)').env(CLIENT_FLAG_ENV.user))
    .addOption(new Option('--password <password>', 'the password of --user, when it is not '
      + 'given as NAME:PASSWORD').env(CLIENT_FLAG_ENV.password))
    .option('--json', 'machine-readable output (one JSON object per line)', false)
    .addOption(new Option('--timeout-ms <ms>', 'longest wait for one request ' +
      `(default: ${CLI_REQUEST_TIMEOUT_MS})`).argParser(integerIn(1, 3_600_000))
      .env(CLIENT_FLAG_ENV.timeoutMs))
    .addOption(new Option('--deadline-ms <ms>', 'how long to keep retrying (other members, a '
      + `new leader) before giving up (default: ${CLI_DEADLINE_MS})`)
      .argParser(integerIn(1, 86_400_000)).env(CLIENT_FLAG_ENV.deadlineMs));
}

function endpointsFlag(value: string): string {
  const parsed = parseEndpointList(value);
  if ('problems' in parsed) throw new InvalidArgumentError(parsed.problems.join('; '));
  return value;
}

/**
 * The endpoints: the flag, else $CONCLAVE_ENDPOINTS, else the `conclave dev` defaults; with
 * TLS on, host:port means https:// and an http:// URL is a usage error.
 */
export function resolveEndpoints(flags: ClientFlags,
  env: Readonly<Record<string, string | undefined>> = process.env, tls = false): string[] {
  const fromEnv = env[ENDPOINTS_ENV];
  const [source, text] = flags.endpoints !== undefined ? ['--endpoints', flags.endpoints]
    : fromEnv !== undefined && fromEnv.trim() !== '' ? [`$${ENDPOINTS_ENV}`, fromEnv]
      : ['the default endpoints', DEFAULT_ENDPOINTS];
  const parsed = parseEndpointList(text, { tls });
  if ('problems' in parsed) {
    throw new UsageError(`${source} ${source.startsWith('$') ? 'is invalid: ' : ''}`
      + parsed.problems.join('; '));
  }
  return parsed.urls;
}

/**
 * The TLS options of --cacert, --cert and --key, read from their files (undefined without
 * any); a file that cannot be read, or --cert without --key, is a usage error naming the flag.
 */
export function tlsFromFlags(flags: ClientFlags): ClientTlsOptions | undefined {
  if (flags.cacert === undefined && flags.cert === undefined && flags.key === undefined) {
    return undefined;
  }
  if ((flags.cert === undefined) !== (flags.key === undefined)) {
    throw new UsageError(flags.cert === undefined ? '--key needs --cert'
      : '--cert needs --key (the private key of the certificate)');
  }
  const read = (flag: string, file: string | undefined): { [k: string]: string } => {
    if (file === undefined) return {};
    try {
      return { [flag]: readFileSync(file, 'utf8') };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new UsageError(`--${flag === 'ca' ? 'cacert' : flag}: cannot read ${file}`
        + (typeof code === 'string' ? ` (${code})` : ''));
    }
  };
  return { ...read('ca', flags.cacert), ...read('cert', flags.cert), ...read('key', flags.key) };
}

/** The user and password of --user and --password (undefined without --user). */
export function authFromFlags(flags: ClientFlags): { user: string; password: string }
  | undefined {
  if (flags.user === undefined || flags.user === '') {
    if (flags.password !== undefined) throw new UsageError('--password needs --user');
    return undefined;
  }
  const colon = flags.user.indexOf(':');
  const user = colon < 0 ? flags.user : flags.user.slice(0, colon);
  const password = colon < 0 ? flags.password : flags.user.slice(colon + 1);
  if (user === '') throw new UsageError('--user: the name is empty');
  if (password === undefined) {
    throw new UsageError(`--user ${user}: give the password as --user ${user}:PASSWORD, with `
      + '--password, or in $CONCLAVE_PASSWORD');
  }
  return { user, password };
}

/**
 * The `Authorization` header for the operator commands that speak raw HTTP (`snapshot save`,
 * `member`): a login with --user (none without it, or when auth is off).
 */
export async function bearerHeaders(flags: ClientFlags): Promise<Record<string, string>> {
  const auth = authFromFlags(flags);
  if (auth === undefined) return {};
  const { user: _user, password: _password, ...rest } = flags;
  const client = clientFor(rest);
  try {
    const answer = await client.authCall('auth-authenticate',
      { name: auth.user, password: auth.password }) as { token?: unknown };
    return typeof answer.token === 'string' ? { authorization: `Bearer ${answer.token}` } : {};
  } catch (error) {
    if (error instanceof CoordError && error.message.includes('auth is not enabled')) return {};
    throw error;
  } finally {
    client.close();
  }
}

/** `extra`: client options a command sets from its own flags (e.g. leaseMarginMs). */
export function clientFor(flags: ClientFlags,
  extra: Partial<Omit<ConnectOptions, 'endpoints'>> = {}): ConclaveClient {
  const tls = tlsFromFlags(flags);
  const auth = authFromFlags(flags);
  return connect({
    ...extra,
    ...(auth === undefined ? {} : { auth }),
    endpoints: resolveEndpoints(flags, process.env, tls !== undefined),
    requestTimeoutMs: flags.timeoutMs ?? CLI_REQUEST_TIMEOUT_MS,
    retryDeadlineMs: flags.deadlineMs ?? CLI_DEADLINE_MS,
    ...(tls === undefined ? {} : { tls }),
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
