/**
 * The reference: an etcd cluster started on this machine for this run, with the same heartbeat
 * and election timeout as Conclave's, data on the same disk (etcd fsyncs its WAL by default),
 * pre-vote on (Conclave's default and etcd's own since 3.5; check-quorum is always on in etcd).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { memberCertFiles } from './bench-certs.js';
import { BenchCluster, type BenchMember } from './cluster.js';
import type { HttpAnswer } from './http.js';
import { etcdLeaderView, type LeaderView } from './wire.js';

const INSTALL_SCRIPT = fileURLToPath(new URL('../../scripts/install-etcd.sh', import.meta.url));

export class EtcdCluster extends BenchCluster {
  readonly system = 'etcd' as const;
  protected readonly statusPath = { method: 'POST', path: '/v3/maintenance/status' } as const;
  private readonly token = `conclave-bench-${process.pid}-${Math.floor(performance.now())}`;

  protected commandFor(member: BenchMember): { command: string; args: string[] } {
    const peerScheme = this.c.peerCertsDir === undefined ? 'http' : 'https';
    const initialCluster = this.members.map((m) => `${m.name}=${peerScheme}://${m.peerHostPort}`)
      .join(',');
    // etcd's peer TLS: its certificate, key and trusted CA, and client-certificate checks on.
    const tls = this.c.peerCertsDir === undefined ? [] : ((files) => ['--peer-cert-file',
      files.cert, '--peer-key-file', files.key, '--peer-trusted-ca-file', files.ca,
      '--peer-client-cert-auth'])(memberCertFiles(this.c.peerCertsDir, member.name));
    return {
      command: 'etcd',
      // On a restart the data directory exists, and etcd ignores the --initial-* flags.
      args: ['--name', member.name, '--data-dir', member.dataDir,
        '--listen-peer-urls', `${peerScheme}://${member.peerHostPort}`,
        '--initial-advertise-peer-urls', `${peerScheme}://${member.peerHostPort}`, ...tls,
        '--listen-client-urls', `http://${member.clientHostPort}`,
        '--advertise-client-urls', `http://${member.clientHostPort}`,
        '--initial-cluster', initialCluster, '--initial-cluster-state', 'new',
        '--initial-cluster-token', this.token,
        '--heartbeat-interval', String(this.timing.heartbeatMs),
        '--election-timeout', String(this.timing.electionTimeoutMs),
        '--pre-vote', '--logger', 'zap', '--log-level', 'warn'],
    };
  }

  protected parseStatus(answer: HttpAnswer): LeaderView | undefined {
    return etcdLeaderView(answer.body);
  }
}

/** etcd's version line, installing Debian's etcd-server first when `etcd` is missing. */
export function ensureEtcd(say: (line: string) => void): string {
  const probe = spawnSync('etcd', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    say('etcd is not installed: running scripts/install-etcd.sh (apt-get install etcd-server)');
    const install = spawnSync('bash', [INSTALL_SCRIPT], { stdio: 'inherit' });
    if (install.status !== 0) throw new Error('installing etcd failed; see the output above');
  }
  const version = spawnSync('etcd', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) throw new Error('etcd still does not run after installing it');
  return version.stdout.split('\n')[0]?.trim() ?? 'etcd';
}
