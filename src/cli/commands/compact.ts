/**
 * `conclave compact REV`: compacts the key-value history up to revision REV (etcdctl's
 * `compaction`): reads at older revisions and watches from at or below it are answered
 * CONCLAVE_KV_COMPACTED from then on (watchers re-list, then watch on). Exit 0 when compacted,
 * 1 when the cluster refused (already compacted there, a revision ahead of the store) or could
 * not be reached, 2 on bad usage.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { CliIo } from '../io.js';
import { addClientOptions, withClient, type ClientFlags } from './client-options.js';

export function compactCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('compact')
    .description('compact the history up to REVISION: older revisions can no longer be read '
      + 'or watched from (docs/operations.md)')
    .argument('<revision>', 'the revision to compact to (at most the current one)', revision));
  return command.action(async (target: number, flags: ClientFlags) => {
    io.exitCode = await withClient(io, 'compact', flags, true, async (client) => {
      const result = await client.kv.compact(target);
      if (flags.json === true) io.out(JSON.stringify(result));
      else io.out(`compacted revision ${result.compactRevision}`);
      return 0;
    });
  });
}

function revision(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a revision: an integer of at least 1');
  }
  return n;
}
