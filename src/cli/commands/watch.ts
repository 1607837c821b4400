/**
 * `conclave watch KEY | --prefix P`: prints each change as it happens, until Ctrl-C (or
 * `--count N` events). Text lines read `REVISION PUT KEY VALUE` or `REVISION DELETE KEY`;
 * `--json` prints each event as one JSON object per line. The watch survives member failures
 * and resumes exactly where it stopped; a compacted history ends it with exit 1.
 */
import { Command } from 'commander';
import type { KvEvent, WatchSelector } from '../../client/index.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';
import {
  addClientOptions, revisionFlag, withClient, EXIT_USAGE, type ClientFlags,
} from './client-options.js';

interface WatchFlags extends ClientFlags {
  readonly prefix?: string;
  readonly fromRevision?: number;
  readonly count?: number;
}

export function watchCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('watch')
    .description('print changes to KEY (or to every key under --prefix) until Ctrl-C')
    .argument('[key]', 'the key to watch')
    .option('--prefix <prefix>', 'watch every key starting with PREFIX ("" for all keys)')
    .option('--from-revision <n>', 'start at revision N, replaying history (default: changes ' +
      'from now on)', revisionFlag)
    .option('--count <n>', 'exit after N events', integerIn(1, Number.MAX_SAFE_INTEGER)));
  return command.action(async (key: string | undefined, flags: WatchFlags) => {
    if ((key === undefined) === (flags.prefix === undefined)) {
      io.err('conclave watch: give exactly one of KEY or --prefix PREFIX ' +
        '(run with --help for usage)');
      io.exitCode = EXIT_USAGE;
      return;
    }
    const selector: WatchSelector = key !== undefined ? { key } : { prefix: flags.prefix ?? '' };
    io.exitCode = await withClient(io, 'watch', flags, false, async (client) => {
      const from = flags.fromRevision ?? 0;
      const watch = client.watch(selector, from === 0 ? {} : { fromRevision: from });
      const stop = (): void => watch.close();
      process.once('SIGINT', stop);
      try {
        let seen = 0;
        for await (const event of watch) {
          io.out(flags.json === true ? JSON.stringify(eventJson(event)) : eventLine(event));
          seen += 1;
          if (flags.count !== undefined && seen >= flags.count) break;
        }
        return 0;
      } finally {
        process.removeListener('SIGINT', stop);
      }
    });
  });
}

function eventLine(event: KvEvent): string {
  const revision = event.kv.modRevision;
  return event.type === 'put'
    ? `${revision} PUT ${event.kv.key} ${event.kv.value}`
    : `${revision} DELETE ${event.kv.key}`;
}

function eventJson(event: KvEvent): Record<string, unknown> {
  return { revision: event.kv.modRevision, ...event };
}
