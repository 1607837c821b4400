/**
 * Every `conclave` subcommand by name, with the one line `conclave --help` prints for it and
 * a loader that imports its module only when it runs. Loading every command up front pulled
 * in the server, the simulator and the client (0.5 s for `--version`, 2 s on a loaded
 * machine); with this table `--help` and `--version` load commander and nothing else.
 */
import type { Command } from 'commander';
import type { CliIo } from './io.js';

export interface CommandEntry {
  readonly name: string;
  /** What `conclave --help` lists; the command's own `.description()` is what its help shows. */
  readonly summary: string;
  readonly aliases?: readonly string[];
  readonly load: (io: CliIo) => Promise<Command>;
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'sim', summary: 'run a deterministic simulation scenario under faults, over many seeds',
    load: async (io) => (await import('./commands/sim.js')).simCommand(io) },
  { name: 'server', summary: 'run one member of a Conclave consistent core (Raft + key-value '
    + 'store + HTTP API)',
  load: async (io) => (await import('./commands/server.js')).serverCommand(io) },
  { name: 'dev', summary: 'start a local N-member cluster on loopback (child processes); Ctrl-C '
    + 'stops it', load: async (io) => (await import('./commands/dev.js')).devCommand(io) },
  { name: 'status', summary: 'show the leader, term, commit index, and each member\'s role and '
    + 'health', load: async (io) => (await import('./commands/status.js')).statusCommand(io) },
  { name: 'kv', summary: 'read and write the key-value store (put, get, del, range, txn)',
    load: async (io) => (await import('./commands/kv.js')).kvCommand(io) },
  { name: 'watch', summary: 'print changes to KEY (or to every key under --prefix) until Ctrl-C',
    load: async (io) => (await import('./commands/watch.js')).watchCommand(io) },
  { name: 'compact', summary: 'compact the history up to REVISION',
    load: async (io) => (await import('./commands/compact.js')).compactCommand(io) },
  { name: 'lease', summary: 'grant, keep alive, inspect and revoke leases',
    load: async (io) => (await import('./commands/lease.js')).leaseCommand(io) },
  { name: 'elect', summary: 'campaign in an election and hold the leadership; --listen follows '
    + 'its leader', load: async (io) => (await import('./commands/elect.js')).electCommand(io) },
  { name: 'lock', summary: 'run a command holding a lock (fencing token in '
    + '$CONCLAVE_FENCING_TOKEN); --list shows holder and queue',
  load: async (io) => (await import('./commands/lock.js')).lockCommand(io) },
  { name: 'locks', summary: 'list every lock with its holder and its queue',
    load: async (io) => (await import('./commands/locks.js')).locksCommand(io) },
  { name: 'gossip', summary: 'run one gossip member (SWIM + Lifeguard, oldest member leads)',
    load: async (io) => (await import('./commands/gossip.js')).gossipCommand(io) },
  { name: 'keygen', summary: 'print a fresh gossip encryption key (AES-256, base64)',
    load: async (io) => (await import('./commands/gossip.js')).keygenCommand(io) },
  { name: 'member', summary: 'list, add, promote and remove the members of a running cluster',
    load: async (io) => (await import('./commands/member.js')).memberCommand(io) },
  { name: 'move-leader', summary: 'hand the leadership to another voting member',
    load: async (io) => (await import('./commands/member.js')).moveLeaderCommand(io) },
  { name: 'endpoint', summary: 'check the health and status of each endpoint',
    load: async (io) => (await import('./commands/endpoint.js')).endpointCommand(io) },
  { name: 'snapshot', summary: 'save a backup of the store, check one, or restore one into a new '
    + 'cluster', load: async (io) => (await import('./commands/snapshot.js')).snapshotCommand(io) },
  { name: 'auth', summary: 'turn authentication on or off, or show its status',
    load: async (io) => (await import('./commands/auth.js')).authCommand(io) },
  { name: 'user', summary: 'add, delete, list and inspect users; passwords and roles',
    load: async (io) => (await import('./commands/auth.js')).userCommand(io) },
  { name: 'role', summary: 'add, delete, list and inspect roles; grant and revoke permissions',
    load: async (io) => (await import('./commands/auth.js')).roleCommand(io) },
  { name: 'certs', summary: 'make a cluster CA and member/client certificates (with openssl)',
    load: async (io) => (await import('./commands/certs.js')).certsCommand(io) },
  { name: 'replay', summary: 'open a recorded simulation (conclave sim --record FILE) in the '
    + 'dashboard', load: async (io) => (await import('./commands/replay.js')).replayCommand(io) },
  { name: 'version', summary: 'print the versions of conclave and Node.js',
    load: async (io) => (await import('./commands/version.js')).versionCommand(io) },
];

/**
 * The entry `argv` runs: its first word that is not a flag (`help X` runs X's help), or
 * undefined for `conclave`, `conclave --help`, `--version` or an unknown command.
 */
export function entryFor(argv: readonly string[]): CommandEntry | undefined {
  const words = argv.filter((a) => !a.startsWith('-'));
  const word = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((c) => c.name === word || (c.aliases ?? []).includes(word ?? ''));
}
