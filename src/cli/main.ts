/**
 * The `conclave` command. Every subcommand has `--help`; bad flags print one clear line naming
 * the flag and the accepted values and exit with code 2; nothing prints a stack trace unless
 * CONCLAVE_DEBUG is set.
 */
import { Command, CommanderError } from 'commander';
import { COMMANDS, entryFor } from './command-table.js';
import { CoordError } from '../errors.js';
import type { CliIo } from './io.js';
import { CONCLAVE_VERSION } from '../core/version.js';

export const EXIT_USAGE = 2;

export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const program = new Command('conclave')
    .description('Conclave: cluster coordination for TypeScript — failure detectors, Raft, ' +
      'gossip membership, leases and fencing tokens')
    .version(CONCLAVE_VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, '')),
      writeErr: (s) => io.err(s.replace(/\n$/, '')),
    })
    .exitOverride();
  // Only the command that runs is loaded (command-table.ts); the others are listed for --help.
  const entry = entryFor(argv);
  for (const listed of COMMANDS) {
    const command = listed === entry ? await entry.load(io)
      : new Command(listed.name).description(listed.summary);
    // addCommand() does not pass the output and exit settings down; copy them explicitly.
    command.copyInheritedSettings(program);
    program.addCommand(command);
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return io.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.err(`conclave: ${message}`);
    if (error instanceof CoordError && (error.code === 'CONCLAVE_CONFIG_INVALID' || error.code === 'CONCLAVE_USAGE')) {
      return EXIT_USAGE;
    }
    if (process.env['CONCLAVE_DEBUG'] !== undefined && error instanceof Error) io.err(error.stack ?? '');
    return 1;
  }
}

function processIo(): CliIo {
  // `conclave ... | head` closes the pipe early: that is the reader's choice, not an error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(0);
      throw error;
    });
  }
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    exitCode: 0,
  };
}
