/**
 * `conclave elect NAME --id ID`: campaigns in an election and holds the leadership until Ctrl-C
 * or SIGTERM, then resigns. It prints one status line per event on stdout, `event key=value
 * ...` (or one JSON object with --json):
 *
 *   campaigning name=billing id=a ttlMs=10000
 *   elected name=billing id=a fencingToken=42 term=3 lease=17
 *   resigned name=billing id=a fencingToken=42 term=3
 *   lost name=billing id=a fencingToken=42 term=3 reason=stalled detail="..."
 */
import { Command } from 'commander';
import {
  LeadershipLostError, RECIPE_TTL_MS_DEFAULT, type ConclaveClient, type Leadership,
} from '../../client/index.js';
import type { CliIo } from '../io.js';
import { addClientOptions, withClient, type ClientFlags } from './client-options.js';
import {
  addRecipeOptions, EXIT_LOST, firstAbort, printStatus, recipeClientOptions, StopSignals,
  type RecipeFlags,
} from './recipe-options.js';

interface ElectFlags extends ClientFlags, RecipeFlags {
  readonly id: string;
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
    .requiredOption('--id <id>', 'this candidate\'s id')
    .option('--value <value>', 'what the leader publishes, e.g. its address (default: "")')))
    .addHelpText('after', EXIT_CODES);
  return command.action(async (name: string, flags: ElectFlags) => {
    io.exitCode = await withClient(io, 'elect', flags, true,
      (client) => elect(io, client, name, flags), recipeClientOptions(flags));
  });
}

async function elect(io: CliIo, client: ConclaveClient, name: string, flags: ElectFlags):
  Promise<number> {
  const json = flags.json === true;
  const fields = { name, id: flags.id };
  const stop = new StopSignals();
  try {
    const ttlMs = flags.ttl ?? RECIPE_TTL_MS_DEFAULT;
    const election = client.election(name);
    printStatus(io, json, 'campaigning', { ...fields, ttlMs });
    let leadership: Leadership;
    try {
      leadership = await election.campaign(flags.id, { ttlMs, value: flags.value ?? '',
        signal: stop.signal });
    } catch (error) {
      if (stop.signal.aborted && error instanceof Error && error.name === 'AbortError') {
        printStatus(io, json, 'stopped', fields);
        return 0;
      }
      if (!(error instanceof LeadershipLostError)) throw error;
      printStatus(io, json, 'lost', { ...fields, reason: error.lossReason,
        detail: error.message });
      return EXIT_LOST;
    }
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
