/** `conclave version`: this CLI's version and the Node.js that runs it (etcdctl's `version`). */
import { Command } from 'commander';
import { CONCLAVE_VERSION } from '../../core/version.js';
import type { CliIo } from '../io.js';

export function versionCommand(io: CliIo): Command {
  return new Command('version').description('print the versions of conclave and Node.js')
    .option('--json', 'as one JSON object', false)
    .action((flags: { json?: boolean }) => {
      if (flags.json === true) {
        io.out(JSON.stringify({ conclave: CONCLAVE_VERSION, node: process.versions.node }));
      } else {
        io.out(`conclave version: ${CONCLAVE_VERSION}`);
        io.out(`node version: ${process.versions.node}`);
      }
    });
}
