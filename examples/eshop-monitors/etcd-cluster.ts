/**
 * etcd mode's cluster: three `etcd` processes on loopback (Debian's etcd-server; the project's
 * scripts/install-etcd.sh installs it when missing), with the core mode's heartbeat and
 * election timeout, data in a temporary directory. The monitors reach it through the same
 * Conclave client (`connect({ backend: 'etcd' })`) and elect their leader with the same recipe.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'conclave';
import type { CoreTiming } from './config.js';
import type { CoreCluster } from './core-cluster.js';
import { freePorts } from './core-cluster.js';
import type { ProcessGroup } from './processes.js';

const INSTALL_SCRIPT = fileURLToPath(new URL('../../scripts/install-etcd.sh', import.meta.url));

/** How often the cluster is asked for its leader while it starts. Unit: ms. */
const STATUS_POLL_MS = 50;

/** Installs etcd with the project's script when `etcd` is not on PATH; throws if it cannot. */
export function ensureEtcd(): void {
  if (spawnSync('etcd', ['--version']).status === 0) return;
  const install = spawnSync('bash', [INSTALL_SCRIPT], { stdio: 'inherit' });
  if (install.status !== 0 || spawnSync('etcd', ['--version']).status !== 0) {
    throw new Error('etcd is not installed and scripts/install-etcd.sh could not install it');
  }
}

/** Starts three etcd members and resolves once the cluster has a leader. */
export async function startEtcdCluster(group: ProcessGroup, timing: CoreTiming,
  deadlineMs: number, signal?: AbortSignal): Promise<CoreCluster> {
  ensureEtcd();
  const dataDir = mkdtempSync(join(tmpdir(), 'eshop-etcd-'));
  const names = ['e1', 'e2', 'e3'];
  const ports = await freePorts(2 * names.length);
  const peer = (i: number): string => `http://127.0.0.1:${ports[2 * i]}`;
  const client = (i: number): string => `127.0.0.1:${ports[2 * i + 1]}`;
  const initial = names.map((n, i) => `${n}=${peer(i)}`).join(',');
  // One token for all three: members started with different tokens form different clusters.
  const token = `eshop-${process.pid}-${Date.now()}`;
  const members = names.map((name, i) => group.spawn(`etcd ${name}`, 'etcd', [
    '--name', name, '--data-dir', join(dataDir, name),
    '--listen-peer-urls', peer(i), '--initial-advertise-peer-urls', peer(i),
    '--listen-client-urls', `http://${client(i)}`, '--advertise-client-urls', `http://${client(i)}`,
    '--initial-cluster', initial, '--initial-cluster-state', 'new',
    '--initial-cluster-token', token,
    '--heartbeat-interval', String(timing.heartbeatMs),
    '--election-timeout', String(timing.electionTimeoutMs),
    '--logger', 'zap', '--log-level', 'warn']));
  const endpoints = names.map((_, i) => client(i));
  const removeData = (): void => rmSync(dataDir, { recursive: true, force: true });
  const probe = connect({ backend: 'etcd', endpoints, requestTimeoutMs: 500 });
  try {
    const endMs = performance.now() + deadlineMs;
    for (;;) {
      if (signal?.aborted === true) throw new Error('stopped while waiting for etcd');
      const status = await probe.status().catch(() => undefined);
      if (status?.leaderId !== undefined && status.leaderId !== '0') break;
      if (performance.now() > endMs) {
        throw new Error(`etcd elected no leader within ${deadlineMs} ms\n${members.map((m) =>
          `${m.label}: ${m.stderrTail().slice(-400)}`).join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
    }
  } finally {
    probe.close();
  }
  return { endpoints, members, removeData };
}
