/**
 * `conclave lease grant|keepalive|revoke|ttl|list`: leases from the command line
 * (docs/leases.md). `grant` prints the lease id alone, so `ID=$(conclave lease grant --ttl 10)`
 * works; with `--keep-alive` it then keeps the lease alive until Ctrl-C. `--json` prints the
 * client's result as one JSON object. Exit 0 on success, 1 when the cluster could not do it
 * (a lease that does not exist: CONCLAVE_LEASE_EXPIRED), 2 on bad usage.
 */
import { Command } from 'commander';
import type { LeaseListing } from '../../client/index.js';
import { CoordError } from '../../errors.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';
import {
  addClientOptions, withClient, EXIT_OPERATIONAL, type ClientFlags,
} from './client-options.js';
import { firstAbort, StopSignals, ttlSecondsFlag } from './recipe-options.js';

const leaseIdArgument = integerIn(1, Number.MAX_SAFE_INTEGER);

export function leaseCommand(io: CliIo): Command {
  const lease = new Command('lease').description('grant, keep alive, inspect and revoke leases');
  for (const sub of [grantCommand(io), keepAliveCommand(io), revokeCommand(io), ttlCommand(io),
    listCommand(io)]) {
    lease.addCommand(sub);
  }
  // main copies its output and exit settings to `lease` only; pass them on to the subcommand.
  lease.hook('preSubcommand', (parent, sub) => {
    sub.copyInheritedSettings(parent);
  });
  return lease;
}

function grantCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('grant')
    .description('grant a lease and print its id; with --keep-alive, keep it alive until Ctrl-C ' +
      '(it then runs out on its own unless revoked)')
    .requiredOption('--ttl <seconds>', 'time-to-live (at least the servers\' minimum: about ' +
      '3.1 × their longest election timeout, 6.2 s on the LAN defaults)', ttlSecondsFlag)
    .option('--keep-alive', 'keep the lease alive every TTL/3 until Ctrl-C or SIGTERM', false));
  return command.action(async (flags: ClientFlags & { ttl: number; keepAlive?: boolean }) => {
    io.exitCode = await withClient(io, 'lease grant', flags, true, async (client) => {
      const keepAlive = flags.keepAlive === true;
      const lease = await client.leases.grant({ ttlMs: flags.ttl, autoKeepAlive: keepAlive });
      io.out(flags.json === true ? JSON.stringify({ leaseId: lease.id, ttlMs: lease.ttlMs })
        : String(lease.id));
      if (!keepAlive) return 0;
      return await holdLease(io, lease.id, lease.signal, () => lease.stopKeepAlive());
    });
  });
}

/** Waits for Ctrl-C or SIGTERM (exit 0) or the lease's end (exit 1). */
async function holdLease(io: CliIo, leaseId: number, leaseSignal: AbortSignal,
  stop: () => void): Promise<number> {
  const signals = new StopSignals();
  try {
    await firstAbort([signals.signal, leaseSignal]);
  } finally {
    signals.remove();
  }
  stop();
  if (signals.which !== undefined) return 0;
  const reason = leaseSignal.reason as unknown;
  const detail = reason instanceof CoordError ? `${reason.code}: ${reason.message}`
    : String(reason);
  io.err(`conclave lease grant: lease ${leaseId} lost: ${detail}`);
  return EXIT_OPERATIONAL;
}

function keepAliveCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('keepalive')
    .description('keep lease ID alive once (its TTL starts again)')
    .argument('<id>', 'the lease id', leaseIdArgument));
  return command.action(async (leaseId: number, flags: ClientFlags) => {
    io.exitCode = await withClient(io, 'lease keepalive', flags, false, async (client) => {
      const result = await client.leases.keepAliveOnce(leaseId);
      io.out(flags.json === true ? JSON.stringify(result)
        : `lease ${result.leaseId} kept alive: ttl ${result.ttlMs} ms, ` +
          `remaining ${result.remainingMs} ms`);
      return 0;
    });
  });
}

function revokeCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('revoke')
    .description('end lease ID now, deleting the keys attached to it')
    .argument('<id>', 'the lease id', leaseIdArgument));
  return command.action(async (leaseId: number, flags: ClientFlags) => {
    io.exitCode = await withClient(io, 'lease revoke', flags, true, async (client) => {
      const result = await client.leases.revoke(leaseId);
      io.out(flags.json === true ? JSON.stringify({ leaseId, ...result })
        : `revoked lease ${leaseId}: deleted ${result.deleted} keys, revision ${result.revision}`);
      return 0;
    });
  });
}

function ttlCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('ttl')
    .description('print lease ID\'s TTL and the time it has left (as the leader counts it)')
    .argument('<id>', 'the lease id', leaseIdArgument)
    .option('--keys', 'also print the keys attached, one per line', false));
  return command.action(async (leaseId: number, flags: ClientFlags & { keys?: boolean }) => {
    io.exitCode = await withClient(io, 'lease ttl', flags, false, async (client) => {
      const result = await client.leases.timeToLive(leaseId, { keys: flags.keys === true });
      if (flags.json === true) {
        io.out(JSON.stringify(result));
        return 0;
      }
      io.out(`lease ${result.leaseId}: ttl ${result.ttlMs} ms, remaining ` +
        `${result.remainingMs} ms`);
      for (const key of result.keys ?? []) io.out(key);
      return 0;
    });
  });
}

function listCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('list')
    .description('list every lease: id, TTL, time left and number of keys'));
  return command.action(async (flags: ClientFlags) => {
    io.exitCode = await withClient(io, 'lease list', flags, false, async (client) => {
      const leases = await client.leases.list();
      if (flags.json === true) io.out(JSON.stringify({ leases }));
      else for (const line of leaseTable(leases)) io.out(line);
      return 0;
    });
  });
}

function leaseTable(leases: readonly LeaseListing[]): string[] {
  const rows = [['LEASE', 'TTL_MS', 'REMAINING_MS', 'KEYS'], ...leases.map((l) => [
    String(l.leaseId), String(l.ttlMs), l.remainingMs === undefined ? '-' : String(l.remainingMs),
    String(l.keyCount)])];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}
