/**
 * Core mode's consistent core: three `conclave server` processes on loopback, started from the
 * package's own `conclave` command (what `npm install conclave` gives a user), with their data
 * in a temporary directory. Nothing else to install or run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CoreTiming } from './config.js';
import type { ProcessGroup, TrackedProcess } from './processes.js';

/** The `conclave` command of the installed package: bin/conclave.js beside dist/. */
export const CONCLAVE_BIN = fileURLToPath(
  new URL('../../bin/conclave.js', import.meta.resolve('conclave')));

/** How often the members' status is asked while waiting for a leader. Unit: ms. */
const STATUS_POLL_MS = 50;

export interface CoreCluster {
  /** Client endpoints, host:port. */
  readonly endpoints: readonly string[];
  readonly members: readonly TrackedProcess[];
  /** Removes the data directory (call after the processes are stopped). */
  readonly removeData: () => void;
}

/** Starts three members and resolves once one leads and a majority follows it. */
export async function startCoreCluster(group: ProcessGroup, timing: CoreTiming,
  deadlineMs: number, signal?: AbortSignal): Promise<CoreCluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'eshop-core-'));
  const names = ['n1', 'n2', 'n3'];
  const ports = await freePorts(2 * names.length);
  const peer = (i: number): string => `127.0.0.1:${ports[2 * i]}`;
  const client = (i: number): string => `127.0.0.1:${ports[2 * i + 1]}`;
  const cluster = names.map((n, i) => `${n}=${peer(i)}`).join(',');
  const clientUrls = names.map((n, i) => `${n}=${client(i)}`).join(',');
  const members = names.map((name, i) => group.spawn(`core ${name}`, process.execPath, [
    CONCLAVE_BIN, 'server', '--name', name, '--data-dir', join(dataDir, name),
    '--peer-addr', peer(i), '--client-addr', client(i), '--cluster', cluster,
    '--client-urls', clientUrls, '--heartbeat-ms', String(timing.heartbeatMs),
    '--election-timeout-ms', String(timing.electionTimeoutMs), '--log-level', 'warn',
    // Peers authenticate with one cluster secret (the first member to start creates it).
    '--peer-secret-file', join(dataDir, 'peer-secret')]));
  const endpoints = names.map((_, i) => client(i));
  const removeData = (): void => rmSync(dataDir, { recursive: true, force: true });
  try {
    await waitForLeader(endpoints, deadlineMs, signal);
  } catch (error) {
    const tails = members.map((m) => `${m.label}: ${m.stderrTail().slice(-400)}`).join('\n');
    throw new Error(`${String(error)}\n${tails}`);
  }
  return { endpoints, members, removeData };
}

async function waitForLeader(endpoints: readonly string[], deadlineMs: number,
  signal: AbortSignal | undefined): Promise<void> {
  const endMs = performance.now() + deadlineMs;
  while (performance.now() < endMs) {
    if (signal?.aborted === true) throw new Error('stopped while waiting for the core');
    const statuses = await Promise.all(endpoints.map(statusOf));
    const leaders = statuses.filter((s) => s?.role === 'leader');
    const leaderId = leaders[0]?.id;
    const followers = statuses.filter((s) => s !== undefined && s.leaderId === leaderId);
    if (leaders.length === 1 && followers.length > endpoints.length / 2) return;
    await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
  }
  throw new Error(`the consistent core elected no leader within ${deadlineMs} ms`);
}

interface MemberStatus {
  readonly id?: string;
  readonly role?: string;
  readonly leaderId?: string | null;
}

async function statusOf(endpoint: string): Promise<MemberStatus | undefined> {
  try {
    const response = await fetch(`http://${endpoint}/v1/status`,
      { signal: AbortSignal.timeout(500) });
    return (await response.json()) as MemberStatus;
  } catch {
    return undefined; // not up yet
  }
}

/** `count` distinct TCP ports free on 127.0.0.1 right now. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    ports.add((server.address() as net.AddressInfo).port);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return [...ports];
}
