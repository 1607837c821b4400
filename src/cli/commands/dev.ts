/**
 * `conclave dev` (`npm start`): a local consistent core of N members, each its own `conclave
 * server` process on loopback, with data under one directory. Prints one line with `ready` and
 * the client endpoints once a leader is elected; Ctrl-C stops every member it started.
 * dev-supervisor.ts keeps them running: a member that dies is restarted (with a back-off), and
 * every member ends with dev, when dev's parent dies or its stdin closes. Data lives under the
 * system temp dir (defaultDataDir) unless --data-dir says otherwise.
 *
 * Peers authenticate even here: `dev` creates one cluster secret in its data directory
 * (`peer-secret`, mode 0600) and gives it to every member, so another local user cannot join.
 * With `--tls`, it makes a CA and member certificates under `DATA/certs` instead (once; kept
 * for the next run): mutual TLS between members, and HTTPS on the client ports.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { PEER_SECRET_FILE_NAME } from '../../server/server-config.js';
import { readOrCreatePeerSecret } from '../../server/peer-credentials.js';
import {
  caFiles, createCa, createClientCert, createMemberCert, leafFiles,
} from '../certs-openssl.js';
import { DevSupervisor } from '../dev-supervisor.js';
import type { CliIo } from '../io.js';
import { integerIn } from '../parse.js';

interface Member {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
}

/**
 * How long the cluster may take to elect a leader before `dev` gives up, unless
 * --ready-deadline-ms says otherwise. Unit: ms.
 */
const READY_DEADLINE_MS = 30_000;

export function devCommand(io: CliIo): Command {
  return new Command('dev')
    .description('start a local N-member cluster on loopback (child processes); Ctrl-C stops it')
    .option('--nodes <n>', 'number of members', integerIn(1, 9), 3)
    .option('--base-port <port>',
      'first port: member i listens for clients on base+2i, peers on base+2i+1',
      integerIn(1024, 65_000), 2379)
    .option('--data-dir <dir>', 'where members keep their write-ahead logs and logs '
      + '(default: TMPDIR/conclave-dev-UID-BASEPORT, kept for the next run)')
    .option('--heartbeat-ms <ms>', 'leader heartbeat interval', integerIn(1, 60_000), 100)
    .option('--election-timeout-ms <ms>', 'election timeout', integerIn(2, 600_000), 1000)
    .option('--tls', 'mutual TLS between members and HTTPS for clients, with certificates made ' +
      'under DATA_DIR/certs (needs the openssl command)', false)
    .option('--ready-deadline-ms <ms>', 'how long the members may take to elect a leader '
      + 'before dev gives up (raise it on a busy machine)', integerIn(1000, 3_600_000),
    READY_DEADLINE_MS)
    .option('--json', 'print the ready line as JSON', false)
    .action(async (opts: Record<string, unknown>) => {
      io.exitCode = await runDev(io, opts);
    });
}

async function runDev(io: CliIo, opts: Record<string, unknown>): Promise<number> {
  const nodes = opts['nodes'] as number;
  const base = opts['basePort'] as number;
  const dataDir = resolve(opts['dataDir'] === undefined ? defaultDataDir(base)
    : String(opts['dataDir']));
  const members: Member[] = Array.from({ length: nodes }, (_, i) => ({
    name: `n${i + 1}`, clientPort: base + 2 * i, peerPort: base + 2 * i + 1,
  }));
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const security = opts['tls'] === true ? devCertificates(dataDir, members) : devSecret(dataDir);
  const supervisor = new DevSupervisor(io, binPath(), dataDir);
  const token = clusterToken(dataDir);
  for (const member of members) {
    supervisor.start({ name: member.name,
      args: serverArgs(member, members, dataDir, opts, token, security) });
  }
  const stopFor = (why: string) => (): void => {
    if (!supervisor.stopping) io.err(`conclave dev: stopping: ${why}`);
    void supervisor.stopAll();
  };
  process.once('SIGINT', stopFor('SIGINT'));
  process.once('SIGTERM', stopFor('SIGTERM'));
  process.once('SIGHUP', stopFor('SIGHUP'));
  supervisor.watchParentAndStdin((why) => stopFor(why)());
  const scheme = security.caFile === undefined ? '' : 'https://';
  const endpoints = members.map((m) => `${scheme}127.0.0.1:${m.clientPort}`);
  const readyDeadlineMs = opts['readyDeadlineMs'] as number;
  const leader = await waitForLeader(endpoints, security.caFile, readyDeadlineMs,
    () => supervisor.stopping);
  if (leader === undefined) {
    if (!supervisor.stopping) {
      io.err(`conclave dev: no leader within ${readyDeadlineMs / 1000} s; logs in ${dataDir}`);
    }
    await supervisor.stopAll();
    return 1;
  }
  printReady(io, opts, { nodes, base, leader, endpoints, dataDir, caFile: security.caFile,
    pids: supervisor.pids() });
  await supervisor.untilStopped;
  return 0;
}

/**
 * Where members keep their data without --data-dir: under the system temp dir, one directory
 * per user and base port, so a second `npm start` finds the same cluster and the working tree
 * stays clean.
 */
export function defaultDataDir(basePort: number): string {
  const user = typeof process.getuid === 'function' ? String(process.getuid()) : 'user';
  return join(tmpdir(), `conclave-dev-${user}-${basePort}`);
}

function serverArgs(member: Member, members: readonly Member[], dataDir: string,
  opts: Record<string, unknown>, token: string, security: DevSecurity): string[] {
  const cluster = members.map((m) => `${m.name}=127.0.0.1:${m.peerPort}`).join(',');
  const clientUrls = members.map((m) => `${m.name}=127.0.0.1:${m.clientPort}`).join(',');
  return ['server', '--name', member.name, '--data-dir', join(dataDir, member.name),
    '--peer-addr', `127.0.0.1:${member.peerPort}`,
    '--client-addr', `127.0.0.1:${member.clientPort}`,
    '--cluster', cluster, '--client-urls', clientUrls, '--initial-cluster-token', token,
    '--heartbeat-ms', String(opts['heartbeatMs']),
    '--election-timeout-ms', String(opts['electionTimeoutMs']),
    ...security.serverArgs(member.name)];
}

interface ReadyFacts {
  readonly nodes: number;
  readonly base: number;
  readonly leader: string;
  readonly endpoints: readonly string[];
  readonly dataDir: string;
  readonly caFile: string | undefined;
  readonly pids: Record<string, number | null>;
}

function printReady(io: CliIo, opts: Record<string, unknown>, f: ReadyFacts): void {
  const tls = f.caFile === undefined ? {} : { tls: true, caFile: f.caFile };
  const dashboard = `${f.caFile === undefined ? 'http' : 'https'}://127.0.0.1:${f.base}/ui/`;
  io.out(opts['json'] === true
    ? JSON.stringify({ ready: true, endpoints: f.endpoints, leader: f.leader, dataDir: f.dataDir,
      dashboard, ...tls, pids: f.pids, devPid: process.pid })
    : `ready: ${f.nodes} members, leader ${f.leader}, endpoints ${f.endpoints.join(',')}, ` +
      `dashboard ${dashboard} (` +
      `${f.caFile === undefined ? '' : `TLS, CA ${f.caFile}; `}` +
      `data in ${f.dataDir}; Ctrl-C stops)`);
}

interface DevSecurity {
  /** The flags that give member `name` its credentials. */
  serverArgs(name: string): string[];
  /** The CA clients must trust (TLS only). */
  readonly caFile?: string;
}

/** One cluster secret for every member, made at the first start. */
function devSecret(dataDir: string): DevSecurity {
  const file = join(dataDir, PEER_SECRET_FILE_NAME);
  readOrCreatePeerSecret(file);
  return { serverArgs: () => ['--peer-secret-file', file] };
}

/** A CA and a certificate per member (and one client certificate), made once, then reused. */
function devCertificates(dataDir: string, members: readonly Member[]): DevSecurity {
  const dir = join(dataDir, 'certs');
  const ca = caFiles(dir);
  if (!existsSync(ca.certFile)) createCa(dir, { name: 'conclave dev' });
  for (const member of members) {
    if (!existsSync(leafFiles(dir, member.name).certFile)) createMemberCert(dir, member.name);
  }
  if (!existsSync(leafFiles(dir, 'dev-client').certFile)) createClientCert(dir, 'dev-client');
  return {
    caFile: ca.certFile,
    serverArgs: (name) => {
      const files = leafFiles(dir, name);
      return ['--peer-cert', files.certFile, '--peer-key', files.keyFile, '--peer-ca', ca.certFile,
        '--client-cert', files.certFile, '--client-key', files.keyFile];
    },
  };
}

/**
 * This dev cluster's `--initial-cluster-token`: drawn at random when its data dir is new and
 * kept in `cluster-token` beside the members' dirs, so a restart finds the same cluster id and
 * a member's dir copied from another dev cluster is refused.
 */
function clusterToken(dataDir: string): string {
  const file = join(dataDir, 'cluster-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = `dev-${randomBytes(8).toString('hex')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}

/** Polls every member's /v1/status until one is leader and a majority agree on it. */
async function waitForLeader(endpoints: readonly string[], caFile: string | undefined,
  deadlineMs: number, cancelled: () => boolean): Promise<string | undefined> {
  const deadline = performance.now() + deadlineMs;
  const ca = caFile === undefined ? undefined : readFileSync(caFile);
  while (performance.now() < deadline && !cancelled()) {
    const statuses = await Promise.all(endpoints.map((e) => fetchStatus(e, ca)));
    const leaders = statuses.filter((s) => s?.role === 'leader').map((s) => s!.id);
    const agreeing = statuses
      .filter((s) => s?.leaderId !== undefined && s.leaderId === leaders[0]).length;
    if (leaders.length === 1 && agreeing > endpoints.length / 2) return leaders[0];
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

interface DevStatus { id: string; role: string; leaderId?: string }

/** GET /v1/status over HTTP, or HTTPS trusting `ca`; undefined on any failure. */
function fetchStatus(endpoint: string, ca: Buffer | undefined): Promise<DevStatus | undefined> {
  return new Promise((done) => {
    const url = ca === undefined ? `http://${endpoint}/v1/status` : `${endpoint}/v1/status`;
    const onResponse = (response: import('node:http').IncomingMessage): void => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        try {
          done(JSON.parse(body) as DevStatus);
        } catch {
          done(undefined);
        }
      });
      response.on('error', () => done(undefined));
    };
    const request = ca === undefined ? httpGet(url, { timeout: 1000 }, onResponse)
      : httpsGet(url, { ca, timeout: 1000 }, onResponse);
    request.on('timeout', () => request.destroy());
    request.on('error', () => done(undefined));
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
