/**
 * `conclave kv put|get|del|range`: the key-value store from the command line. Text output is
 * for people (a value alone on its line, so `$(conclave kv get k)` works); `--json` prints one
 * JSON object, the client's result as it is. Exit 0 on success, 1 when the cluster could not
 * do it (or `get` found no key), 2 on bad usage.
 */
import { Command } from 'commander';
import type { KeyValue, ReadConsistency } from '../../client/index.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';
import {
  addClientOptions, revisionFlag, withClient, EXIT_OPERATIONAL, type ClientFlags,
} from './client-options.js';

interface ReadFlags extends ClientFlags {
  readonly serializable?: boolean;
  readonly revision?: number;
}

export function kvCommand(io: CliIo): Command {
  const kv = new Command('kv').description('read and write the key-value store');
  kv.addCommand(putCommand(io));
  kv.addCommand(getCommand(io));
  kv.addCommand(delCommand(io));
  kv.addCommand(rangeCommand(io));
  // main copies its output and exit settings to `kv` only; pass them on to the subcommand.
  kv.hook('preSubcommand', (parent, sub) => {
    sub.copyInheritedSettings(parent);
  });
  return kv;
}

function putCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('put').description('set KEY to VALUE')
    .argument('<key>').argument('<value>')
    .option('--prev-kv', 'also print the previous value', false));
  return command.action(async (key: string, value: string, flags: ClientFlags &
    { prevKv?: boolean }) => {
    io.exitCode = await withClient(io, 'kv put', flags, true, async (client) => {
      const result = await client.kv.put(key, value, { prevKv: flags.prevKv === true });
      if (flags.json === true) io.out(JSON.stringify(result));
      else {
        io.out(`OK revision ${result.revision}`);
        if (result.prevKv !== undefined) io.out(`previous: ${result.prevKv.value}`);
      }
      return 0;
    });
  });
}

function getCommand(io: CliIo): Command {
  const command = addReadOptions(new Command('get')
    .description('print the value of KEY (exit 1 when the key does not exist)').argument('<key>'));
  return command.action(async (key: string, flags: ReadFlags) => {
    io.exitCode = await withClient(io, 'kv get', flags, false, async (client) => {
      const result = await client.kv.get(key, readOptions(flags));
      const found = result.kv !== undefined;
      if (flags.json === true) io.out(JSON.stringify({ found, ...result }));
      else if (result.kv !== undefined) io.out(result.kv.value);
      if (result.kv !== undefined) return 0;
      io.err(`conclave kv get: ${key} not found (revision ${result.revision})`);
      return EXIT_OPERATIONAL;
    });
  });
}

function delCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('del').alias('delete')
    .description('delete KEY (or every key starting with it, with --prefix)').argument('<key>')
    .option('--prefix', 'delete every key starting with KEY', false)
    .option('--prev-kv', 'also print the deleted key-values', false));
  return command.action(async (key: string, flags: ClientFlags &
    { prefix?: boolean; prevKv?: boolean }) => {
    io.exitCode = await withClient(io, 'kv del', flags, true, async (client) => {
      const result = await client.kv.delete(key, { prefix: flags.prefix === true,
        prevKv: flags.prevKv === true });
      if (flags.json === true) io.out(JSON.stringify(result));
      else {
        io.out(`deleted ${result.deleted} revision ${result.revision}`);
        for (const kv of result.prevKvs ?? []) io.out(formatKv(kv));
      }
      return 0;
    });
  });
}

function rangeCommand(io: CliIo): Command {
  const command = addReadOptions(new Command('range')
    .description('list the keys starting with PREFIX ("" for every key), one "key<TAB>value" ' +
      'per line').argument('<prefix>')
    .option('--limit <n>', 'at most N keys', integerIn(1, 1_000_000_000)));
  return command.action(async (prefix: string, flags: ReadFlags & { limit?: number }) => {
    io.exitCode = await withClient(io, 'kv range', flags, false, async (client) => {
      const result = await client.kv.range(prefix, { ...readOptions(flags),
        ...(flags.limit === undefined ? {} : { limit: flags.limit }) });
      if (flags.json === true) {
        io.out(JSON.stringify(result));
        return 0;
      }
      for (const kv of result.kvs) io.out(formatKv(kv));
      if (result.more) {
        io.err(`(${result.kvs.length} of ${result.count} keys shown; raise --limit for more)`);
      }
      return 0;
    });
  });
}

function addReadOptions(command: Command): Command {
  return addClientOptions(command)
    .option('--serializable', 'answer from any member, maybe stale (no leader needed)', false)
    .option('--revision <n>', 'read as of revision N', revisionFlag);
}

function readOptions(flags: ReadFlags): { consistency: ReadConsistency; revision?: number } {
  return { consistency: flags.serializable === true ? 'serializable' : 'linearizable',
    ...(flags.revision === undefined ? {} : { revision: flags.revision }) };
}

function formatKv(kv: KeyValue): string {
  return `${kv.key}\t${kv.value}`;
}
