/**
 * `conclave snapshot save|status|restore` (etcdctl's three): a backup streamed from the
 * leader and checked as it arrives (written to FILE.part, synced, renamed to FILE only once
 * whole), a backup file's summary, and a new member's data dir seeded from one (a new cluster,
 * docs/operations.md). Exit 0 on success, 1 when the cluster or the file failed, 2 on usage.
 */
import {
  closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync,
} from 'node:fs';
import { Command } from 'commander';
import { httpOpen } from '../../adapters/http-get.js';
import type { ConfigProblem } from '../../core/config.js';
import { formatConfigProblems } from '../../core/config.js';
import { nodeId } from '../../core/ids.js';
import { CoordError, UsageError } from '../../errors.js';
import { BackupReader, type BackupSummary } from '../../server/backup-file.js';
import { checkBackup, restoreBackup } from '../../server/backup-restore.js';
import { parseMemberList, SERVER_DEFAULTS } from '../../server/server-config.js';
import type { CliIo } from '../io.js';
import {
  addClientOptions, bearerHeaders, reportError, resolveEndpoints, tlsFromFlags,
  type ClientFlags,
} from './client-options.js';

/**
 * Default wait for a member to start streaming. Unit: ms. Why 60 000: the leader encodes the
 * whole store before the first byte (a few seconds per million keys on a loaded machine).
 */
const SAVE_TIMEOUT_MS = 60_000;
/** Progress on stderr every this many bytes, for stores that take a while. Unit: bytes. */
const PROGRESS_BYTES = 16 * 1024 * 1024;

export function snapshotCommand(io: CliIo): Command {
  const snapshot = new Command('snapshot')
    .description('back up the store, inspect a backup, restore one into a new cluster');
  snapshot.addCommand(saveCommand(io));
  snapshot.addCommand(statusCommand(io));
  snapshot.addCommand(restoreCommand(io));
  // main copies its output and exit settings to `snapshot` only; pass them on.
  snapshot.hook('preSubcommand', (parent, sub) => {
    sub.copyInheritedSettings(parent);
  });
  return snapshot;
}

function saveCommand(io: CliIo): Command {
  return addClientOptions(new Command('save')
    .description('stream a consistent point-in-time backup from the leader into FILE')
    .argument('<file>', 'where to write it (FILE.part until it is whole)'))
    .action(async (file: string, flags: ClientFlags) => {
      io.exitCode = await guarded(io, 'snapshot save', flags, async () => {
        const summary = await save(io, file, flags);
        io.out(flags.json === true ? JSON.stringify({ file, ...summary })
          : `saved ${file}: ${describe(summary)}`);
        return 0;
      });
    });
}

function statusCommand(io: CliIo): Command {
  return new Command('status')
    .description('check a backup file and show its revision, keys, size and checksum')
    .argument('<file>')
    .option('--json', 'machine-readable output', false)
    .action((file: string, flags: { json?: boolean }) => {
      io.exitCode = guardedSync(io, 'snapshot status', flags, () => {
        const { summary } = checkBackup(file, readBackup(file));
        io.out(flags.json === true ? JSON.stringify({ file, ...summary, checksumOk: true })
          : `${file}: ${describe(summary)}, checksum ok`);
        return 0;
      });
    });
}

function restoreCommand(io: CliIo): Command {
  return new Command('restore')
    .description('seed a new member\'s (empty) data dir from a backup: the restored members '
      + 'form a new cluster (run it once per member, then start each with conclave server)')
    .argument('<file>')
    .requiredOption('--data-dir <dir>', 'the new member\'s data dir (must be empty or missing)')
    .requiredOption('--name <name>', 'the new member\'s name, one of --initial-cluster')
    .option('--initial-cluster <list>', 'the new cluster\'s members: '
      + 'n1=HOST:PORT,n2=HOST:PORT,... (its --cluster; etcdctl\'s name)')
    .option('--cluster <list>', 'the same as --initial-cluster (conclave server\'s name); '
      + 'the members reach each other at these addresses, whatever the backed-up cluster used')
    .requiredOption('--initial-cluster-token <token>', 'the new cluster\'s token (its '
      + '--initial-cluster-token): a new one, so that the cluster id is new')
    .option('--cluster-name <name>', 'the new cluster\'s --cluster-name',
      SERVER_DEFAULTS.clusterName)
    .option('--json', 'machine-readable output', false)
    .action(async (file: string, flags: RestoreFlags) => {
      io.exitCode = await guarded(io, 'snapshot restore', flags, async () => {
        const problems: ConfigProblem[] = [];
        const [flag, list] = flags.initialCluster !== undefined
          ? ['--initial-cluster', flags.initialCluster] : ['--cluster', flags.cluster];
        if (list === undefined || (flags.initialCluster !== undefined
          && flags.cluster !== undefined && flags.cluster !== flags.initialCluster)) {
          throw new UsageError('give the new cluster\'s members once: --cluster (or '
            + '--initial-cluster) n1=HOST:PORT,...');
        }
        const members = [...parseMemberList(list, flag, problems).keys()];
        if (problems.length > 0) throw new UsageError(formatConfigProblems(problems));
        const backup = checkBackup(file, readBackup(file));
        const result = await restoreBackup(backup, { dataDir: flags.dataDir,
          name: nodeId(flags.name), members, clusterName: flags.clusterName,
          initialClusterToken: flags.initialClusterToken });
        io.out(flags.json === true ? JSON.stringify({ file, ...result,
          revision: backup.summary.revision, keys: backup.summary.keys })
          : `restored ${file} into ${result.dataDir}: member ${flags.name} of new cluster `
            + `${result.clusterId}, ${describe(backup.summary)}`);
        return 0;
      });
    });
}

interface RestoreFlags {
  readonly dataDir: string;
  readonly name: string;
  readonly initialCluster?: string;
  readonly cluster?: string;
  readonly initialClusterToken: string;
  readonly clusterName: string;
  readonly json?: boolean;
}

/** Streams the backup from the first endpoint that answers into FILE.part, then renames it. */
async function save(io: CliIo, file: string, flags: ClientFlags): Promise<BackupSummary> {
  const tls = tlsFromFlags(flags);
  const urls = resolveEndpoints(flags, process.env, tls !== undefined);
  const options = { timeoutMs: flags.timeoutMs ?? SAVE_TIMEOUT_MS,
    ...(tls === undefined ? {} : { tls }), headers: await bearerHeaders(flags) };
  let lastError: unknown;
  for (const url of urls) {
    const response = await httpOpen(`${url}/v1/snapshot`, options, 3).catch((error: unknown) => {
      lastError = error;
      return undefined;
    });
    if (response === undefined) continue;
    if (response.statusCode !== 200) throw await answerError(response);
    return receive(io, file, response);
  }
  throw lastError;
}

async function receive(io: CliIo, file: string,
  response: AsyncIterable<Buffer> & { destroy(): void }): Promise<BackupSummary> {
  const part = `${file}.part`;
  const fd = openSync(part, 'w', 0o600);
  const reader = new BackupReader(false);
  let received = 0;
  try {
    for await (const chunk of response) {
      const problem = reader.feed(chunk);
      if (problem !== undefined) {
        response.destroy();
        throw new CoordError('CONCLAVE_PROTOCOL', `the member sent a bad backup: ${problem}`);
      }
      writeSync(fd, chunk);
      if (Math.floor((received + chunk.length) / PROGRESS_BYTES) > Math.floor(received
        / PROGRESS_BYTES)) io.err(`snapshot save: ${mib(received + chunk.length)} received`);
      received += chunk.length;
    }
    const summary = reader.finish();
    if (typeof summary === 'string') {
      throw new CoordError('CONCLAVE_UNAVAILABLE', `the stream ended early: ${summary}`);
    }
    fsyncSync(fd);
    closeSync(fd);
    renameSync(part, file);
    return summary;
  } catch (error) {
    closeSync(fd);
    rmSync(part, { force: true });
    throw error instanceof CoordError ? error : new CoordError('CONCLAVE_UNAVAILABLE',
      `the backup stream failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function answerError(response: AsyncIterable<Buffer>): Promise<CoordError> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk);
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as
      { error?: { code?: string; message?: string } };
    const code = body.error?.code;
    return new CoordError(typeof code === 'string' && code.startsWith('CONCLAVE_')
      ? code as never : 'CONCLAVE_UNAVAILABLE', body.error?.message ?? 'no message');
  } catch {
    return new CoordError('CONCLAVE_UNAVAILABLE', 'the member refused the backup');
  }
}

function readBackup(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(`cannot read ${file}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
}

function describe(s: BackupSummary): string {
  return `revision ${s.revision}, ${s.keys} keys, index ${s.index}, ${s.fileBytes} bytes, `
    + `crc32c ${s.checksum}, from cluster ${s.clusterId}`;
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

async function guarded(io: CliIo, name: string, flags: { json?: boolean },
  body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    return reportError(io, name, flags, false, error);
  }
}

function guardedSync(io: CliIo, name: string, flags: { json?: boolean },
  body: () => number): number {
  try {
    return body();
  } catch (error) {
    return reportError(io, name, flags, false, error);
  }
}
