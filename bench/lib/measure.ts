/**
 * One measured window: a client process (lib/load-client.ts or lib/lease-stream-client.ts)
 * runs its warm-up and window against a cluster, and the CPU each server and the client used
 * between the client's `window-start` and `done` messages is read from /proc. Also the same
 * CPU reading over a window with no client at all (the idle baseline).
 */
import { fileURLToPath } from 'node:url';
import type { BenchCluster } from './cluster.js';
import type { BenchContext } from './context.js';
import type { LoadClientMessage, LoadClientResult } from './load-client.js';
import { cpuMsOf, sleep } from './processes.js';
import { fmt, type LatencySummary } from './stats.js';

export const LOAD_CLIENT = fileURLToPath(new URL('./load-client.ts', import.meta.url));
export const LEASE_STREAM_CLIENT =
  fileURLToPath(new URL('./lease-stream-client.ts', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ProcessCpu {
  readonly name: string;
  readonly role: 'leader' | 'follower' | 'client';
  /** CPU used inside the window. Unit: ms. */
  readonly cpuMs: number;
  /** cpuMs over the window's length: 100 is one core busy all the time. Unit: %. */
  readonly cpuPercent: number;
}

export interface MeasuredWindow {
  readonly result: LoadClientResult;
  readonly processes: readonly ProcessCpu[];
  /** All servers together. Unit: ms. */
  readonly serverCpuMs: number;
  /** Unit: ms (NaN when the client's CPU could not be read). */
  readonly clientCpuMs: number;
}

/** What every closed-loop window reports, whatever its requests. */
export interface WindowFigures {
  readonly opsPerS: number;
  readonly errors: number;
  readonly firstError: string | undefined;
  readonly windowMs: number;
  readonly latency: LatencySummary;
  readonly processes: readonly ProcessCpu[];
  /** CPU of all servers together per request answered. Unit: µs. */
  readonly serverCpuUsPerOp: number;
  /** CPU of the client process per request answered. Unit: µs. */
  readonly clientCpuUsPerOp: number;
}

export function windowFigures(measured: MeasuredWindow): WindowFigures {
  const { result } = measured;
  return {
    opsPerS: (result.ops * 1000) / result.windowMs, errors: result.errors,
    firstError: result.firstError, windowMs: result.windowMs, latency: result.latency,
    processes: measured.processes,
    serverCpuUsPerOp: (measured.serverCpuMs * 1000) / result.ops,
    clientCpuUsPerOp: (measured.clientCpuMs * 1000) / result.ops,
  };
}

/** One progress line: rate, latency, CPU per `op` (put, read, op), errors. */
export function describeWindow(f: WindowFigures, op: string): string {
  return `${fmt(f.opsPerS)} ops/s, p50 ${fmt(f.latency.p50Ms)} ms, ` +
    `p99 ${fmt(f.latency.p99Ms)} ms, p99.9 ${fmt(f.latency.p999Ms)} ms, ` +
    `server CPU ${fmt(f.serverCpuUsPerOp)} µs/${op}, ` +
    `client CPU ${fmt(f.clientCpuUsPerOp)} µs/${op}, errors ${f.errors}` +
    (f.firstError === undefined ? '' : ` (first: ${f.firstError})`);
}

/** Runs `script` with `options` (JSON) against `cluster`, whose leader is `leaderName`. */
export async function measureClient(context: BenchContext, cluster: BenchCluster,
  leaderName: string, label: string, script: string, options: object): Promise<MeasuredWindow> {
  const client = context.processes.spawn(`${label} ${cluster.system}`, process.execPath,
    ['--import', 'tsx', script, JSON.stringify(options)],
    { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let before = new Map<string, number>();
  let after = new Map<string, number>();
  const result = await new Promise<LoadClientResult>((resolve, reject) => {
    client.child.on('message', (message: LoadClientMessage) => {
      if (message.kind === 'window-start') {
        before = cpuSnapshot(cluster, client.pid);
      } else {
        after = cpuSnapshot(cluster, client.pid);
        resolve(message.result);
      }
    });
    void client.exited.then(() => {
      reject(new Error(`the ${label} client exited early (${cluster.system})`));
    });
  });
  await client.exited;
  const processes = cpuUsed(before, after, leaderName, result.windowMs);
  const serverCpuMs = sum(processes.filter((p) => p.role !== 'client').map((p) => p.cpuMs));
  const clientCpuMs = processes.find((p) => p.role === 'client')?.cpuMs ?? Number.NaN;
  return { result, processes, serverCpuMs, clientCpuMs };
}

/** The servers' CPU over `windowMs` with no client. */
export async function measureIdle(cluster: BenchCluster, leaderName: string,
  windowMs: number): Promise<readonly ProcessCpu[]> {
  const before = cluster.cpuMsByMember();
  const startMs = performance.now();
  await sleep(windowMs);
  const after = cluster.cpuMsByMember();
  return cpuUsed(before, after, leaderName, performance.now() - startMs);
}

function cpuSnapshot(cluster: BenchCluster, clientPid: number): Map<string, number> {
  const snapshot = cluster.cpuMsByMember();
  const clientMs = cpuMsOf(clientPid);
  if (clientMs !== undefined) snapshot.set('client', clientMs);
  return snapshot;
}

function cpuUsed(before: Map<string, number>, after: Map<string, number>, leaderName: string,
  windowMs: number): ProcessCpu[] {
  const used: ProcessCpu[] = [];
  for (const [name, afterMs] of after) {
    const beforeMs = before.get(name);
    if (beforeMs === undefined) continue;
    const role = name === 'client' ? 'client' : name === leaderName ? 'leader' : 'follower';
    const cpuMs = afterMs - beforeMs;
    used.push({ name, role, cpuMs, cpuPercent: (100 * cpuMs) / windowMs });
  }
  return used;
}

export function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** CPU of all servers together over the window, as a share of one core. Unit: %. */
export function serverCpuPercent(processes: readonly ProcessCpu[]): number {
  return sum(processes.filter((p) => p.role !== 'client').map((p) => p.cpuPercent));
}
