/**
 * Election hand-over after kill -9 of the holder, on both backends with the same timings and
 * TTL (docs/backends.md): a 3-member cluster of each (built `conclave server` processes; etcd
 * from Debian's etcd-server, installed by the project's script when missing); a holder process
 * (handover-holder.ts) leads an election, a successor in this process campaigns behind it, the
 * holder is killed with SIGKILL, and the time from the kill to the successor's election is
 * measured. The holder's lease is not revoked (it died), so the successor waits for the
 * servers to expire it: about the TTL less the time since its last keep-alive.
 *
 *   node --import tsx bench/tools/handover.ts [--runs 5] [--ttl-ms 10000]
 *
 * Writes bench/results/handover.json and prints one line per run. Not part of npm test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type ConclaveClient } from '../../src/client/index.js';
import { recipeKeys } from '../../src/core/election/index.js';
import type { BenchCluster, ClusterTiming } from '../lib/cluster.js';
import { ConclaveCluster } from '../lib/conclave-cluster.js';
import { ensureEtcd, EtcdCluster } from '../lib/etcd-cluster.js';
import { ProcessGroup } from '../lib/processes.js';

const HOLDER = fileURLToPath(new URL('./handover-holder.ts', import.meta.url));
const RESULTS = fileURLToPath(new URL('../results/handover.json', import.meta.url));
/** Both systems: etcd's defaults (100 ms heartbeat, 1000 ms election timeout). */
const TIMING: ClusterTiming = { heartbeatMs: 100, electionTimeoutMs: 1000 };

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

const RUNS = option('runs', 5);
const TTL_MS = option('ttl-ms', 10_000);

interface Run {
  readonly handoverMs: number;
  readonly holderToken: number;
  readonly successorToken: number;
}

async function oneRun(system: 'conclave' | 'etcd', endpoints: string[], processes: ProcessGroup,
  client: ConclaveClient, index: number): Promise<Run> {
  const name = `handover-${index}`;
  const holder = processes.spawn('holder', process.execPath, ['--import', 'tsx', HOLDER,
    system, endpoints.join(','), name, String(TTL_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const elected = await new Promise<string>((resolve, reject) => {
    let text = '';
    holder.child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = /^elected .*$/m.exec(text);
      if (line !== null) resolve(line[0]);
    });
    holder.child.once('exit', () => reject(new Error(`the holder exited: ${text}`)));
  });
  const holderToken = Number(elected.split(' ')[1]);
  const successor = client.election(name).campaign('successor', { ttlMs: TTL_MS });
  const prefix = recipeKeys('election', name).candidatePrefix;
  while ((await client.kv.range(prefix)).count < 2) await new Promise((r) => setTimeout(r, 20));
  // Let the holder's keep-alives run a while, so the kill lands anywhere in their cycle.
  await new Promise((r) => setTimeout(r, TTL_MS / 3 + Math.random() * TTL_MS / 3));
  const killedAtMs = performance.now();
  await processes.kill9(holder);
  const leadership = await successor;
  const handoverMs = performance.now() - killedAtMs;
  await leadership.resign();
  return { handoverMs, holderToken, successorToken: leadership.fencingToken };
}

/** Every process this run starts, stopped by pid on any exit path. */
const processes = new ProcessGroup();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    processes.killAllNow();
    process.exit(1);
  });
}

async function measure(system: 'conclave' | 'etcd'): Promise<Run[]> {
  const workDir = mkdtempSync(join(tmpdir(), `handover-${system}-`));
  const cluster: BenchCluster = system === 'etcd'
    ? new EtcdCluster(TIMING, { processes, workDir })
    : new ConclaveCluster(TIMING, { processes, workDir });
  try {
    await cluster.start(3);
    const endpoints = cluster.members.map((m) => `http://${m.clientHostPort}`);
    const client = system === 'etcd' ? connect({ backend: 'etcd', endpoints })
      : connect({ endpoints });
    const runs: Run[] = [];
    try {
      for (let i = 0; i < RUNS; i++) {
        const run = await oneRun(system, endpoints, processes, client, i);
        console.log(`${system} run ${i + 1}: hand-over ${Math.round(run.handoverMs)} ms `
          + `(tokens ${run.holderToken} -> ${run.successorToken})`);
        runs.push(run);
      }
    } finally {
      client.close();
    }
    return runs;
  } finally {
    await processes.stopAll(3000);
    rmSync(workDir, { recursive: true, force: true });
  }
}

function summary(runs: readonly Run[]): Record<string, number> {
  const ms = runs.map((r) => r.handoverMs).sort((a, b) => a - b);
  return { runs: ms.length, minMs: Math.round(ms[0]!), medianMs: Math.round(ms[ms.length >> 1]!),
    maxMs: Math.round(ms[ms.length - 1]!) };
}

console.log(`etcd: ${ensureEtcd((line) => console.log(line))}`);
const results: Record<string, unknown> = { ttlMs: TTL_MS, timing: TIMING, at: new Date().toISOString() };
for (const system of ['conclave', 'etcd'] as const) {
  const runs = await measure(system);
  results[system] = { ...summary(runs), handoverMs: runs.map((r) => Math.round(r.handoverMs)) };
  console.log(`${system}: ${JSON.stringify(results[system])}`);
}
writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
