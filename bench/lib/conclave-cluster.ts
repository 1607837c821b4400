/**
 * A Conclave consistent core under test: `conclave server` processes (the built bin, as users
 * run it) on loopback, fsync on (the write-ahead log's default), logs at warn level (info
 * when a suite asks, `logLevel`).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memberCertFiles } from './bench-certs.js';
import { BenchCluster, type BenchMember } from './cluster.js';
import type { HttpAnswer } from './http.js';
import { conclaveLeaderView, type LeaderView } from './wire.js';

export const CONCLAVE_BIN = fileURLToPath(new URL('../../bin/conclave.js', import.meta.url));

export class ConclaveCluster extends BenchCluster {
  readonly system = 'conclave' as const;
  protected readonly statusPath = { method: 'GET', path: '/v1/status' } as const;
  /** The members' --log-level from their next launch (soak's restart reads info lines). */
  logLevel: 'warn' | 'info' = 'warn';

  protected commandFor(member: BenchMember): { command: string; args: string[] } {
    const cluster = this.members.map((m) => `${m.name}=${m.peerHostPort}`).join(',');
    const clientUrls = this.members.map((m) => `${m.name}=${m.clientHostPort}`).join(',');
    // A profile is written when the process exits cleanly (the harness stops members with SIGTERM).
    const profile = this.c.cpuProfileDir === undefined ? []
      : ['--cpu-prof', '--cpu-prof-dir', join(this.c.cpuProfileDir, member.name)];
    return {
      command: process.execPath,
      args: [...profile, CONCLAVE_BIN, 'server',
        '--name', member.name, '--data-dir', member.dataDir,
        '--peer-addr', member.peerHostPort, '--client-addr', member.clientHostPort,
        '--cluster', cluster, '--client-urls', clientUrls,
        '--heartbeat-ms', String(this.timing.heartbeatMs),
        '--election-timeout-ms', String(this.timing.electionTimeoutMs), '--log-level', this.logLevel,
        ...this.peerAuthArgs(member)],
    };
  }

  /** Mutual TLS with the bench's CA, or one cluster secret for all (made by the first member). */
  private peerAuthArgs(member: BenchMember): string[] {
    if (this.c.peerCertsDir === undefined) {
      return ['--peer-secret-file', join(this.c.workDir, 'peer-secret')];
    }
    const files = memberCertFiles(this.c.peerCertsDir, member.name);
    return ['--peer-cert', files.cert, '--peer-key', files.key, '--peer-ca', files.ca];
  }

  protected parseStatus(answer: HttpAnswer): LeaderView | undefined {
    return conclaveLeaderView(answer.body);
  }
}
