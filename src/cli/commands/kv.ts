/**
 * `conclave kv put|get|del|range|txn`: the key-value store from the command line. Text output
 * is for people (a value alone on its line, so `$(conclave kv get k)` works); `-w json` (or
 * `--json`) prints one JSON object, the client's result as it is; `-w table` and `-w fields`
 * as etcdctl's (output.ts). Exit 0 on success, 1 when the cluster could not do it (or `get`
 * found no key), 2 on bad usage.
 */
import { Command } from 'commander';
import type { KeyValue, KvTxnResult, ReadConsistency } from '../../client/index.js';
import { UsageError } from '../../errors.js';
import { readAllStdin, stdinIsTty, type CliIo } from '../io.js';
import {
  formatOf, kvLines, outputFormatFlag, OUTPUT_FORMATS, type OutputFormat,
} from '../output.js';
import { integerIn } from '../parse.js';
import { parseTxnText } from '../txn-text.js';
import {
  addClientOptions, revisionFlag, withClient, EXIT_OPERATIONAL, type ClientFlags,
} from './client-options.js';

interface ReadFlags extends ClientFlags {
  readonly serializable?: boolean;
  readonly revision?: number;
  readonly writeOut?: OutputFormat;
}

/** Longest value read from stdin. Why: the store's own value limit is smaller; 8 MiB is a
 * generous bound so a wrong pipe (a disk image) fails here, not after filling memory. */
const STDIN_VALUE_BYTES_MAX = 8 * 1024 * 1024;

export function kvCommand(io: CliIo): Command {
  const kv = new Command('kv').description('read and write the key-value store');
  kv.addCommand(putCommand(io));
  kv.addCommand(getCommand(io));
  kv.addCommand(delCommand(io));
  kv.addCommand(rangeCommand(io));
  kv.addCommand(txnCommand(io));
  // main copies its output and exit settings to `kv` only; pass them on to the subcommand.
  kv.hook('preSubcommand', (parent, sub) => {
    sub.copyInheritedSettings(parent);
  });
  return kv;
}

function putCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('put')
    .description('set KEY to VALUE (VALUE from stdin when left out)')
    .argument('<key>').argument('[value]', 'the value; absent: all of stdin, as it is')
    .option('--lease <id>', 'attach KEY to lease ID (deleted when the lease ends)',
      integerIn(1, Number.MAX_SAFE_INTEGER))
    .option('--prev-kv', 'also print the previous value', false));
  return command.action(async (key: string, value: string | undefined, flags: ClientFlags &
    { prevKv?: boolean; lease?: number }) => {
    const text = value ?? await stdinValue(io);
    io.exitCode = await withClient(io, 'kv put', flags, true, async (client) => {
      const result = await client.kv.put(key, text, { prevKv: flags.prevKv === true,
        ...(flags.lease === undefined ? {} : { lease: flags.lease }) });
      if (flags.json === true) io.out(JSON.stringify(result));
      else {
        io.out(`OK revision ${result.revision}`);
        if (result.prevKv !== undefined) io.out(`previous: ${result.prevKv.value}`);
      }
      return 0;
    });
  });
}

async function stdinValue(io: CliIo): Promise<string> {
  if (stdinIsTty(io)) io.err('conclave kv put: reading the value from stdin (end with Ctrl-D)');
  const text = await readAllStdin(io);
  if (Buffer.byteLength(text) > STDIN_VALUE_BYTES_MAX) {
    throw new UsageError('kv put: the value on stdin is longer than '
      + `${STDIN_VALUE_BYTES_MAX} bytes`);
  }
  return text;
}

function getCommand(io: CliIo): Command {
  const command = addReadOptions(new Command('get')
    .description('print the value of KEY (exit 1 when the key does not exist); with --prefix, '
      + 'every key starting with KEY').argument('<key>')
    .option('--prefix', 'every key starting with KEY, one "key<TAB>value" per line', false)
    .option('--keys-only', 'print keys, not values', false)
    .option('--limit <n>', 'with --prefix: at most N keys', integerIn(1, 1_000_000_000)));
  return command.action(async (key: string, flags: ReadFlags &
    { prefix?: boolean; keysOnly?: boolean; limit?: number }) => {
    if (flags.prefix === true) {
      io.exitCode = await listKeys(io, 'kv get', key, flags);
      return;
    }
    io.exitCode = await withClient(io, 'kv get', flags, false, async (client) => {
      const result = await client.kv.get(key, readOptions(flags));
      const format = formatOf(flags);
      if (format === 'json') io.out(JSON.stringify({ found: result.kv !== undefined, ...result }));
      else if (format === 'simple') {
        if (result.kv !== undefined) {
          io.out(flags.keysOnly === true ? result.kv.key : result.kv.value);
        }
      } else {
        const kvs = result.kv === undefined ? [] : [result.kv];
        const keysOnly = flags.keysOnly === true;
        for (const line of kvLines(kvs, format, keysOnly, result.revision)) io.out(line);
      }
      if (result.kv !== undefined) return 0;
      io.err(`conclave kv get: ${key} not found (revision ${result.revision})`);
      return EXIT_OPERATIONAL;
    });
  });
}

/** `get --prefix` and `range`: every key under `prefix`, in the chosen format. */
function listKeys(io: CliIo, name: string, prefix: string,
  flags: ReadFlags & { keysOnly?: boolean; limit?: number }): Promise<number> {
  return withClient(io, name, flags, false, async (client) => {
    const result = await client.kv.range(prefix, { ...readOptions(flags),
      ...(flags.limit === undefined ? {} : { limit: flags.limit }) });
    const format = formatOf(flags);
    if (format === 'json') {
      io.out(JSON.stringify(flags.keysOnly === true
        ? { ...result, kvs: result.kvs.map((kv) => ({ key: kv.key })) } : result));
      return 0;
    }
    for (const line of kvLines(result.kvs, format, flags.keysOnly === true, result.revision)) {
      io.out(line);
    }
    if (result.more) {
      io.err(`(${result.kvs.length} of ${result.count} keys shown; raise --limit for more)`);
    }
    return 0;
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
      'per line (the same as get PREFIX --prefix)').argument('<prefix>')
    .option('--keys-only', 'print keys, not values', false)
    .option('--limit <n>', 'at most N keys', integerIn(1, 1_000_000_000)));
  return command.action(async (prefix: string, flags: ReadFlags &
    { keysOnly?: boolean; limit?: number }) => {
    io.exitCode = await listKeys(io, 'kv range', prefix, flags);
  });
}

const TXN_HELP = `
The transaction is read from stdin: compares, an empty line, the ops run when every compare
holds, an empty line, the ops run otherwise. A compare is TARGET("KEY") OP "OPERAND" (TARGET:
value, version, create, mod; OP: = != > <); an op is put KEY VALUE [--lease=ID],
get KEY [--prefix] [--limit=N] or del KEY [--prefix]; quote words with spaces ("a b").

Example:
  printf '%s\\n' 'value("mode") = "blue"' '' 'put mode green' '' 'get mode' \\
    | conclave kv txn`;

function txnCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('txn')
    .description('run a transaction read from stdin (etcdctl txn\'s form): if every compare '
      + 'holds, the success ops, else the failure ops')
    .option('-w, --write-out <format>', `output format: ${OUTPUT_FORMATS.join(', ')} ` +
      '(default: simple)', outputFormatFlag))
    .addHelpText('after', TXN_HELP);
  return command.action(async (flags: ClientFlags & { writeOut?: OutputFormat }) => {
    if (stdinIsTty(io)) {
      io.err('compares, an empty line, success ops, an empty line, failure ops; end with Ctrl-D');
    }
    const request = parseTxnText(await readAllStdin(io));
    io.exitCode = await withClient(io, 'kv txn', flags, true, async (client) => {
      const result = await client.kv.txn(request);
      for (const line of txnLines(result, formatOf(flags))) io.out(line);
      return 0;
    });
  });
}

/** SUCCESS or FAILURE, then one block per op's response (etcdctl's txn output). */
function txnLines(result: KvTxnResult, format: OutputFormat): string[] {
  if (format === 'json') return [JSON.stringify(result)];
  const lines = [result.succeeded ? 'SUCCESS' : 'FAILURE', ''];
  for (const response of result.responses) {
    if (response.kind === 'put') lines.push('OK');
    else if (response.kind === 'delete') lines.push(String(response.deleted));
    else lines.push(...kvLines(response.kvs, format, false, result.revision));
    lines.push('');
  }
  lines.push(`revision ${result.revision}`);
  return lines;
}

function addReadOptions(command: Command): Command {
  return addClientOptions(command)
    .option('-w, --write-out <format>', `output format: ${OUTPUT_FORMATS.join(', ')} ` +
      '(default: simple; --json is -w json)', outputFormatFlag)
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
