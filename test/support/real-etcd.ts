/**
 * A real etcd cluster for tests (Debian's etcd-server, installed by scripts/install-etcd.sh when
 * missing): members on free loopback ports, data under the system temp dir, stopped by pid.
 * `ensureEtcdInstalled()` says why it cannot run (no etcd and no way to install it) instead of
 * failing, so a test can skip with that reason. Not a test file itself.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.js';

const INSTALL = fileURLToPath(new URL('../../scripts/install-etcd.sh', import.meta.url));

/** undefined when etcd runs here (installing it first if needed), else why it cannot. */
export function ensureEtcdInstalled(): string | undefined {
  if (spawnSync('etcd', ['--version']).status === 0) return undefined;
  const install = spawnSync('bash', [INSTALL], { encoding: 'utf8' });
  if (install.status !== 0) return `etcd is not installed and could not be: ${install.stderr.trim()}`;
  return spawnSync('etcd', ['--version']).status === 0 ? undefined : 'etcd does not run';
}

export interface EtcdMemberProcess {
  readonly name: string;
  readonly clientHostPort: string;
  readonly peerHostPort: string;
  process: ChildProcess | undefined;
  log: string;
}

export interface RealEtcdOptions {
  readonly members?: number;
  readonly heartbeatMs?: number;
  readonly electionTimeoutMs?: number;
  /** Extra flags for every member (e.g. `--auth-token-ttl 2`). */
  readonly extraArgs?: readonly string[];
  /** HTTPS on the client port, requiring client certificates from `caFile`'s CA. */
  readonly clientTls?: { readonly certFile: string; readonly keyFile: string;
    readonly caFile: string };
}

export class RealEtcd {
  readonly members: EtcdMemberProcess[] = [];
  private readonly dataDir = mkdtempSync(join(tmpdir(), 'conclave-etcd-'));
  private readonly token = `conclave-test-${process.pid}-${Date.now()}`;

  private constructor(private readonly options: RealEtcdOptions) {}

  static async start(options: RealEtcdOptions = {}): Promise<RealEtcd> {
    const etcd = new RealEtcd(options);
    for (let i = 1; i <= (options.members ?? 1); i++) {
      etcd.members.push({ name: `e${i}`, clientHostPort: `127.0.0.1:${await freePort()}`,
        peerHostPort: `127.0.0.1:${await freePort()}`, process: undefined, log: '' });
    }
    for (const member of etcd.members) etcd.startMember(member);
    return etcd;
  }

  get endpoints(): string[] {
    return this.members.map((m) => m.clientHostPort);
  }

  startMember(member: EtcdMemberProcess): void {
    const initialCluster = this.members.map((m) => `${m.name}=http://${m.peerHostPort}`).join(',');
    const tls = this.options.clientTls;
    const scheme = tls === undefined ? 'http' : 'https';
    const tlsArgs = tls === undefined ? [] : ['--cert-file', tls.certFile, '--key-file', tls.keyFile,
      '--trusted-ca-file', tls.caFile, '--client-cert-auth'];
    const child = spawn('etcd', ['--name', member.name, '--data-dir', join(this.dataDir, member.name),
      '--listen-peer-urls', `http://${member.peerHostPort}`,
      '--initial-advertise-peer-urls', `http://${member.peerHostPort}`,
      '--listen-client-urls', `${scheme}://${member.clientHostPort}`,
      '--advertise-client-urls', `${scheme}://${member.clientHostPort}`, ...tlsArgs,
      '--initial-cluster', initialCluster, '--initial-cluster-state', 'new',
      '--initial-cluster-token', this.token,
      '--heartbeat-interval', String(this.options.heartbeatMs ?? 50),
      '--election-timeout', String(this.options.electionTimeoutMs ?? 500),
      '--logger', 'zap', '--log-level', 'warn', ...(this.options.extraArgs ?? [])],
    { stdio: ['ignore', 'ignore', 'pipe'] });
    member.process = child;
    member.log = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      member.log = (member.log + chunk.toString()).slice(-20_000);
    });
  }

  /** SIGKILL one member (by the pid we started). */
  kill(member: EtcdMemberProcess): void {
    member.process?.kill('SIGKILL');
    member.process = undefined;
  }

  stop(): void {
    for (const member of this.members) this.kill(member);
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** The last lines each member logged, for a failing test's message. */
  logs(): string {
    return this.members.map((m) => `--- ${m.name}\n${m.log.slice(-3000)}`).join('\n');
  }
}

