/**
 * The `conclave` command. Every subcommand has `--help`; bad flags print one clear line naming
 * the flag and the accepted values and exit with code 2; nothing prints a stack trace unless
 * CONCLAVE_DEBUG is set.
 */
import { Command, CommanderError } from 'commander';
import { certsCommand } from './commands/certs.js';
import { compactCommand } from './commands/compact.js';
import { devCommand } from './commands/dev.js';
import { electCommand } from './commands/elect.js';
import { endpointCommand } from './commands/endpoint.js';
import { kvCommand } from './commands/kv.js';
import { leaseCommand } from './commands/lease.js';
import { lockCommand } from './commands/lock.js';
import { memberCommand, moveLeaderCommand } from './commands/member.js';
import { gossipCommand, keygenCommand } from './commands/gossip.js';
import { replayCommand } from './commands/replay.js';
import { serverCommand } from './commands/server.js';
import { simCommand } from './commands/sim.js';
import { snapshotCommand } from './commands/snapshot.js';
import { statusCommand } from './commands/status.js';
import { watchCommand } from './commands/watch.js';
import { CoordError } from '../errors.js';
import type { CliIo } from './io.js';

export const EXIT_USAGE = 2;

export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const program = new Command('conclave')
    .description('Conclave: cluster coordination for TypeScript — failure detectors, Raft, ' +
      'gossip membership, leases and fencing tokens')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, '')),
      writeErr: (s) => io.err(s.replace(/\n$/, '')),
    })
    .exitOverride();
  for (const command of [simCommand(io), serverCommand(io), devCommand(io), statusCommand(io),
    kvCommand(io), watchCommand(io), compactCommand(io), leaseCommand(io), electCommand(io),
    lockCommand(io), gossipCommand(io), keygenCommand(io), certsCommand(io), replayCommand(io),
    endpointCommand(io), snapshotCommand(io), memberCommand(io), moveLeaderCommand(io)]) {
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
