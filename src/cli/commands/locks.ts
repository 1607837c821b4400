/**
 * `conclave locks [NAME]` (and `conclave lock NAME --list`): every lock with candidates, its
 * holder (id, fencing token, lease, term) and its queue, read from the lock's key prefix.
 *
 *   LOCK     HOLDER  FENCING TOKEN  LEASE  TERM  WAITING
 *   nightly  a       42             17     3     b, c
 */
import { Command } from 'commander';
import type { ConclaveClient } from '../../client/index.js';
import type { CliIo } from '../io.js';
import { table } from '../output.js';
import { listRecipes, type RecipeListing } from '../recipe-listing.js';
import { addClientOptions, withClient, type ClientFlags } from './client-options.js';

export function locksCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('locks')
    .description('list every lock with its holder and its queue (or only lock NAME)')
    .argument('[name]', 'only this lock'));
  return command.action(async (name: string | undefined, flags: ClientFlags) => {
    io.exitCode = await withClient(io, 'locks', flags, false,
      (client) => printLocks(io, client, name, flags.json === true));
  });
}

/** Prints the listing (JSON: one object per lock per line); exit 0, also when there is none. */
export async function printLocks(io: CliIo, client: ConclaveClient, name: string | undefined,
  json: boolean): Promise<number> {
  const { listings } = await listRecipes(client, 'lock', name);
  if (json) {
    for (const l of listings) io.out(JSON.stringify(l));
    return 0;
  }
  if (listings.every((l) => l.holder === undefined)) {
    io.out(name === undefined ? 'no lock is held' : `lock ${name} is free`);
    return 0;
  }
  for (const line of table(['LOCK', 'HOLDER', 'FENCING TOKEN', 'LEASE', 'TERM', 'WAITING'],
    listings.filter((l) => l.holder !== undefined).map(row))) io.out(line);
  return 0;
}

function row(l: RecipeListing): string[] {
  return [l.name, l.holder?.id ?? '-', String(l.holder?.fencingToken ?? '-'),
    String(l.holder?.lease ?? '-'), String(l.term),
    l.queue.length === 0 ? '-' : l.queue.map((c) => c.id).join(', ')];
}
