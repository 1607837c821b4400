/**
 * `conclave lock NAME -- CMD [ARGS...]`: waits for the lock, runs CMD holding it with the
 * fencing token in $CONCLAVE_FENCING_TOKEN (and the term in $CONCLAVE_LOCK_TERM), releases the
 * lock when CMD exits, and exits with CMD's code. If the lock is lost while CMD runs, CMD gets
 * SIGTERM, then SIGKILL after --grace-ms. Status lines go to stderr (stdout is CMD's):
 *
 *   waiting lock=demo holder=b fencingToken=40 ahead=1   (when it is not acquired at once)
 *   acquired lock=demo fencingToken=42 term=3 lease=17
 *   released lock=demo fencingToken=42 term=3 exitCode=0
 *   lost lock=demo fencingToken=42 term=3 reason=lease-ended detail="..."
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { Command } from 'commander';
import {
  LeadershipLostError, RECIPE_TTL_MS_DEFAULT, type ConclaveClient, type Lock,
} from '../../client/index.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';
import { UsageError } from '../../errors.js';
import { addClientOptions, withClient, type ClientFlags } from './client-options.js';
import { printLocks } from './locks.js';
import {
  addRecipeOptions, announceWaiting, EXIT_LOST, recipeClientOptions, statusLine, StopSignals,
  type RecipeFlags,
} from './recipe-options.js';

interface LockFlags extends ClientFlags, RecipeFlags {
  readonly id?: string;
  readonly list?: boolean;
  readonly graceMs?: number;
}

/**
 * How long a CMD that lost its lock may take to stop after SIGTERM before SIGKILL. Unit: ms.
 * Why 2000: enough to flush and exit cleanly; the resource's fencing (Fence) refuses its late
 * writes meanwhile, so a longer grace costs little but delays nothing useful either.
 */
const GRACE_MS_DEFAULT = 2000;
/** Exit code when CMD could not be started (as shells use for "command not found"). */
const EXIT_CANNOT_RUN = 127;

const EXIT_CODES = `
Exit codes:
  CMD's own exit code (128 + N when CMD was ended by signal N)
  ${EXIT_LOST}   the lock was lost while CMD ran (its lease ended, this process stalled longer
       than the lease margin, or its key was deleted); CMD was stopped
  ${EXIT_CANNOT_RUN}  CMD could not be started
  130/143  interrupted (SIGINT/SIGTERM) before the lock was acquired
  1    the cluster could not do it; 2 bad usage

Example:
  conclave lock demo -- sh -c 'echo $CONCLAVE_FENCING_TOKEN'`;

export function lockCommand(io: CliIo): Command {
  const command = addRecipeOptions(addClientOptions(new Command('lock')
    .description('wait for lock NAME, run CMD holding it (fencing token in ' +
      '$CONCLAVE_FENCING_TOKEN), release it when CMD exits; CMD is stopped if the lock is lost')
    .argument('<name>', 'the lock (letters, digits, ".", "_", "-")')
    .argument('[command...]', 'CMD and its arguments, after "--"')
    .option('--list', 'print who holds lock NAME and who waits, then exit (as `conclave locks '
      + 'NAME`)', false)
    .option('--id <id>', 'who holds the lock, stored in its key (default: the client id)')
    .option('--grace-ms <ms>', 'after a lost lock, SIGKILL CMD this long after SIGTERM ' +
      `(default: ${GRACE_MS_DEFAULT})`, integerIn(0, 3_600_000))))
    .addHelpText('after', EXIT_CODES);
  return command.action(async (name: string, argv: string[], flags: LockFlags) => {
    if (flags.list === true) {
      io.exitCode = await withClient(io, 'lock', flags, false,
        (client) => printLocks(io, client, name, flags.json === true));
      return;
    }
    if (argv.length === 0) {
      throw new UsageError('lock: give CMD after "--" (conclave lock NAME -- CMD ...), or --list');
    }
    io.exitCode = await withClient(io, 'lock', flags, true,
      (client) => runLocked(io, client, name, argv, flags), recipeClientOptions(flags));
  });
}

async function runLocked(io: CliIo, client: ConclaveClient, name: string, argv: string[],
  flags: LockFlags): Promise<number> {
  const json = flags.json === true;
  let child: ChildProcess | undefined;
  // Ctrl-C or SIGTERM: before the lock, stop waiting; while CMD runs, pass it on to CMD.
  const stop = new StopSignals((signal) => child?.kill(signal));
  try {
    let lock: Lock;
    const waiting = announceWaiting(io, json, client, 'lock', name,
      flags.id ?? client.clientId);
    try {
      lock = await client.lock(name, { ttlMs: flags.ttl ?? RECIPE_TTL_MS_DEFAULT,
        signal: stop.signal, ...(flags.id === undefined ? {} : { id: flags.id }) });
    } catch (error) {
      waiting.cancel();
      if (stop.which !== undefined && error instanceof Error && error.name === 'AbortError') {
        return 128 + constants.signals[stop.which];
      }
      if (!(error instanceof LeadershipLostError)) throw error;
      io.err(statusLine(json, 'lost', { lock: name, reason: error.lossReason,
        detail: error.message }));
      return EXIT_LOST;
    }
    waiting.cancel();
    const fields = { lock: name, fencingToken: lock.fencingToken, term: lock.term };
    io.err(statusLine(json, 'acquired', { ...fields, lease: lock.leaseId }));
    child = spawn(argv[0] ?? '', argv.slice(1), { stdio: 'inherit', env: { ...process.env,
      CONCLAVE_FENCING_TOKEN: String(lock.fencingToken), CONCLAVE_LOCK_TERM: String(lock.term) } });
    const ended = await superviseChild(io, json, child, lock, fields,
      flags.graceMs ?? GRACE_MS_DEFAULT);
    const lost = lock.signal.aborted;
    await lock.unlock().catch(() => undefined); // after a loss: waits for the revoke begun then
    if (lost) return EXIT_LOST;
    if ('error' in ended) {
      io.err(`conclave lock: cannot run ${JSON.stringify(argv[0])}: ${ended.error.message}`);
      return EXIT_CANNOT_RUN;
    }
    io.err(statusLine(json, 'released', { ...fields, exitCode: ended.exitCode }));
    return ended.exitCode;
  } finally {
    stop.remove();
  }
}

type ChildEnd = { readonly exitCode: number } | { readonly error: Error };

/** Waits for CMD to end; if the lock is lost first, stops CMD (SIGTERM, then SIGKILL). */
function superviseChild(io: CliIo, json: boolean, child: ChildProcess, lock: Lock,
  fields: Readonly<Record<string, string | number>>, graceMs: number): Promise<ChildEnd> {
  return new Promise((resolve) => {
    let killTimer: NodeJS.Timeout | undefined;
    const onLost = (): void => {
      const reason = lock.signal.reason as LeadershipLostError;
      io.err(statusLine(json, 'lost', { ...fields, reason: reason.lossReason,
        detail: reason.message }));
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    };
    const finish = (end: ChildEnd): void => {
      clearTimeout(killTimer);
      lock.signal.removeEventListener('abort', onLost);
      resolve(end);
    };
    if (lock.signal.aborted) onLost();
    else lock.signal.addEventListener('abort', onLost, { once: true });
    child.once('error', (error) => finish({ error }));
    child.once('exit', (code, signal) => finish({ exitCode: code
      ?? 128 + (signal === null ? 0 : constants.signals[signal]) }));
  });
}
