/**
 * `conclave elect NAME --id ID`: campaigns in an election and holds the leadership until Ctrl-C
 * or SIGTERM, then resigns. It prints one status line per event on stdout, `event key=value
 * ...` (or one JSON object with --json):
 *
 *   campaigning name=billing id=a ttlMs=10000
 *   elected name=billing id=a fencingToken=42 term=3 lease=17
 *   resigned name=billing id=a fencingToken=42 term=3
 *   lost name=billing id=a fencingToken=42 term=3 reason=stalled detail="..."
 *
 * While the campaign waits for another leader to go, one `waiting name=billing holder=b ...`
 * line goes to stderr. `conclave elect NAME --listen` campaigns for nothing: it prints
 * `leader name=billing id=b value=... fencingToken=40` now and at each change of leader.
 */
import { Command } from 'commander';
import {
  LeadershipLostError, RECIPE_TTL_MS_DEFAULT, type ConclaveClient, type Leadership,
} from '../../client/index.js';
import type { CliIo } from '../io.js';
import { UsageError } from '../../errors.js';
import { addClientOptions, withClient, type ClientFlags } from './client-options.js';
import {
  addRecipeOptions, announceWaiting, EXIT_LOST, firstAbort, printStatus, recipeClientOptions,
  StopSignals,
  type RecipeFlags,
} from './recipe-options.js';

interface ElectFlags extends ClientFlags, RecipeFlags {
  readonly id?: string;
  readonly listen?: boolean;
  readonly value?: string;
}

const EXIT_CODES = `
Exit codes:
  0   resigned after Ctrl-C or SIGTERM (or stopped before being elected)
  1   the cluster could not do it (unreachable, no quorum, TTL below the servers' minimum)
  2   bad usage
  ${EXIT_LOST}  the leadership was lost (or the campaign, while waiting): its lease ended, this
      process stalled longer than the lease margin, or its key was deleted; the line
      "lost ... reason=..." says which`;

export function electCommand(io: CliIo): Command {
  const command = addRecipeOptions(addClientOptions(new Command('elect')
    .description('campaign in election NAME as --id; print the leadership with its fencing ' +
      'token and term, and hold it until Ctrl-C or SIGTERM (then resign)')
    .argument('<name>', 'the election (letters, digits, ".", "_", "-")')
    .option('--id <id>', 'this candidate\'s id (needed to campaign)')
    .option('-l, --listen', 'do not campaign: print the leader now and at each change, until '
      + 'Ctrl-C (etcdctl elect -l)', false)
    .option('--value <value>', 'what the leader publishes, e.g. its address (default: "")')))
    .addHelpText('after', EXIT_CODES);
  return command.action(async (name: string, flags: ElectFlags) => {
    if (flags.listen === true) {
      io.exitCode = await withClient(io, 'elect', flags, false,
        (client) => listen(io, client, name, flags.json === true));
      return;
    }
    const id = flags.id;
    if (id === undefined) {
      throw new UsageError('elect: --id ID is needed to campaign (or --listen)');
    }
    io.exitCode = await withClient(io, 'elect', flags, true,
      (client) => elect(io, client, name, id, flags), recipeClientOptions(flags));
  });
}

/**
 * Follows the election's leader until Ctrl-C / SIGTERM: `leader name=N id=I value=V
 * fencingToken=T` at the start and at each change, `no-leader name=N` while there is none.
 */
async function listen(io: CliIo, client: ConclaveClient, name: string, json: boolean):
  Promise<number> {
  const stop = new StopSignals();
  try {
    for await (const leader of client.election(name).observe({ signal: stop.signal })) {
      if (leader === undefined) printStatus(io, json, 'no-leader', { name });
      else {
        printStatus(io, json, 'leader', { name, id: leader.id, value: leader.value,
          fencingToken: leader.fencingToken });
      }
    }
    return 0;
  } finally {
    stop.remove();
  }
}

async function elect(io: CliIo, client: ConclaveClient, name: string, id: string,
  flags: ElectFlags): Promise<number> {
  const json = flags.json === true;
  const fields = { name, id };
  const stop = new StopSignals();
  try {
    const ttlMs = flags.ttl ?? RECIPE_TTL_MS_DEFAULT;
    const election = client.election(name);
    printStatus(io, json, 'campaigning', { ...fields, ttlMs });
    let leadership: Leadership;
    const waiting = announceWaiting(io, json, client, 'election', name, id);
    try {
      leadership = await election.campaign(id, { ttlMs, value: flags.value ?? '',
        signal: stop.signal });
    } catch (error) {
      waiting.cancel();
      if (stop.signal.aborted && error instanceof Error && error.name === 'AbortError') {
        printStatus(io, json, 'stopped', fields);
        return 0;
      }
      if (!(error instanceof LeadershipLostError)) throw error;
      printStatus(io, json, 'lost', { ...fields, reason: error.lossReason,
        detail: error.message });
      return EXIT_LOST;
    }
    waiting.cancel();
    return await hold(io, json, leadership, stop);
  } finally {
    stop.remove();
  }
}

/** Holds until Ctrl-C / SIGTERM (resign, exit 0) or the leadership's end (exit EXIT_LOST). */
async function hold(io: CliIo, json: boolean, leadership: Leadership, stop: StopSignals):
  Promise<number> {
  const fields = { name: leadership.name, id: leadership.id,
    fencingToken: leadership.fencingToken, term: leadership.term };
  printStatus(io, json, 'elected', { ...fields, lease: leadership.leaseId });
  await firstAbort([stop.signal, leadership.signal]);
  if (leadership.signal.aborted) {
    const reason = leadership.signal.reason as LeadershipLostError;
    printStatus(io, json, 'lost', { ...fields, reason: reason.lossReason,
      detail: reason.message });
    // The revoke began at the loss; wait for it so the successor need not wait out the TTL.
    await leadership.resign().catch(() => undefined);
    return EXIT_LOST;
  }
  await leadership.resign();
  printStatus(io, json, 'resigned', fields);
  return 0;
}
