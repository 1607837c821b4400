/**
 * `conclave dev` (`npm start`): a local consistent core of N members, each its own `conclave
 * server` process on loopback, with data under one directory. Prints one line with `ready` and
 * the client endpoints once a leader is elected; Ctrl-C stops every member it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';

interface Member {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  child?: ChildProcess;
}

/** How long the cluster may take to elect a leader before `dev` gives up. Unit: ms. */
const READY_DEADLINE_MS = 30_000;

export function devCommand(io: CliIo): Command {
  return new Command('dev')
    .description('start a local N-member cluster on loopback (child processes); Ctrl-C stops it')
    .option('--nodes <n>', 'number of members', integerIn(1, 9), 3)
    .option('--base-port <port>', 'first port: member i listens for clients on base+2i, peers on base+2i+1', integerIn(1024, 65_000), 2379)
    .option('--data-dir <dir>', 'where members keep their write-ahead logs and logs', '.conclave-dev')
    .option('--heartbeat-ms <ms>', 'leader heartbeat interval', integerIn(1, 60_000), 100)
    .option('--election-timeout-ms <ms>', 'election timeout', integerIn(2, 600_000), 1000)
    .option('--json', 'print the ready line as JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      io.exitCode = await runDev(io, opts);
    });
}

async function runDev(io: CliIo, opts: Record<string, unknown>): Promise<number> {
  const nodes = opts['nodes'] as number;
  const base = opts['basePort'] as number;
  const dataDir = resolve(String(opts['dataDir']));
  const members: Member[] = Array.from({ length: nodes }, (_, i) => ({
    name: `n${i + 1}`, clientPort: base + 2 * i, peerPort: base + 2 * i + 1,
  }));
  const cluster = members.map((m) => `${m.name}=127.0.0.1:${m.peerPort}`).join(',');
  const clientUrls = members.map((m) => `${m.name}=127.0.0.1:${m.clientPort}`).join(',');
  mkdirSync(dataDir, { recursive: true });
  let stopping = false;
  for (const member of members) {
    const log = createWriteStream(join(dataDir, `${member.name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [binPath(), 'server', '--name', member.name,
      '--data-dir', join(dataDir, member.name), '--peer-addr', `127.0.0.1:${member.peerPort}`,
      '--client-addr', `127.0.0.1:${member.clientPort}`, '--cluster', cluster, '--client-urls', clientUrls,
      '--heartbeat-ms', String(opts['heartbeatMs']), '--election-timeout-ms', String(opts['electionTimeoutMs'])],
    { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.pipe(log);
    child.on('exit', (code, signal) => {
      if (!stopping) io.err(`conclave dev: member ${member.name} exited (${signal ?? `code ${code}`}); see ${join(dataDir, `${member.name}.log`)}`);
    });
    member.child = child;
  }
  const endpoints = members.map((m) => `127.0.0.1:${m.clientPort}`);
  const stopAll = async (): Promise<void> => {
    stopping = true;
    await Promise.all(members.map((m) => stopChild(m.child)));
  };
  process.once('SIGINT', () => void stopAll());
  process.once('SIGTERM', () => void stopAll());
  const leader = await waitForLeader(endpoints, () => stopping);
  if (leader === undefined) {
    if (!stopping) io.err(`conclave dev: no leader within ${READY_DEADLINE_MS / 1000} s; logs in ${dataDir}`);
    await stopAll();
    return 1;
  }
  io.out(opts['json'] === true
    ? JSON.stringify({ ready: true, endpoints, leader, dataDir })
    : `ready: ${nodes} members, leader ${leader}, endpoints ${endpoints.join(',')} (data in ${dataDir}; Ctrl-C stops)`);
  await Promise.all(members.map((m) => new Promise<void>((done) => {
    if (m.child === undefined || m.child.exitCode !== null || m.child.signalCode !== null) return done();
    m.child.once('exit', () => done());
  })));
  return 0;
}

/** Polls every member's /v1/status until one is leader and a majority agree on it. */
async function waitForLeader(endpoints: readonly string[], cancelled: () => boolean): Promise<string | undefined> {
  const deadline = performance.now() + READY_DEADLINE_MS;
  while (performance.now() < deadline && !cancelled()) {
    const statuses = await Promise.all(endpoints.map(fetchStatus));
    const leaders = statuses.filter((s) => s?.role === 'leader').map((s) => s!.id);
    const agreeing = statuses.filter((s) => s?.leaderId !== undefined && s.leaderId === leaders[0]).length;
    if (leaders.length === 1 && agreeing > endpoints.length / 2) return leaders[0];
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

async function fetchStatus(endpoint: string): Promise<{ id: string; role: string; leaderId?: string } | undefined> {
  try {
    const response = await fetch(`http://${endpoint}/v1/status`, { signal: AbortSignal.timeout(1000) });
    return (await response.json()) as { id: string; role: string; leaderId?: string };
  } catch {
    return undefined;
  }
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** bin/conclave.js, found by walking up from this file to the package root. */
function binPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'bin', 'conclave.js');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error('cannot find bin/conclave.js above ' + fileURLToPath(import.meta.url));
}
