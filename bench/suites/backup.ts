/**
 * backup: what a backup of a 100 k-key store costs (etcd's benchmark shape: 100 k keys of
 * 256-byte values). A 3-member Conclave cluster is filled with one put per key; then the real
 * CLI (the built bin, a child process, as an operator runs it) saves a backup from the leader
 * (`conclave snapshot save`), checks it (`snapshot status`), restores it into a new member's
 * data dir (`snapshot restore`), and that member is started as a new one-member cluster: its
 * time to serve runs from its launch until a linearizable read of the last key written
 * answers with that key's value. No etcd: the figures are what a runbook needs (how long, how
 * big), not a race.
 */
import * as http from 'node:http';
import { mkdtempSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { barPanelsSvg } from '../lib/bar-panels.js';
import { SYSTEM_COLOURS } from '../lib/chart.js';
import { CONCLAVE_BIN } from '../lib/conclave-cluster.js';
import type { ClusterTiming } from '../lib/cluster.js';
import { newCluster, type BenchContext, type Suite, type SuiteOutcome } from '../lib/context.js';
import { post } from '../lib/http.js';
import { freePorts, sleep, waitFor } from '../lib/processes.js';
import { fmt } from '../lib/stats.js';
import { PUT_WORKLOAD, putEncoder, rangeEncoder, valueOf } from '../lib/wire.js';

const TIMING: ClusterTiming = Object.freeze({ heartbeatMs: 100, electionTimeoutMs: 1000 });
const KEYS = PUT_WORKLOAD.keySpaceSize;
/** Closed-loop writers while filling, each with one put outstanding. */
const INFLIGHT = 64;
const CLI_DEADLINE_MS = 300_000;
const SERVE_DEADLINE_MS = 120_000;
const MIB = 2 ** 20;

export interface BackupFigures {
  readonly suite: 'backup';
  readonly keys: number;
  readonly valueBytes: number;
  readonly fillMs: number;
  /** `conclave snapshot save`, from spawn to exit. Unit: ms. */
  readonly saveMs: number;
  readonly fileBytes: number;
  readonly statusMs: number;
  readonly restoreMs: number;
  /** From launching the restored member until it served the last key. Unit: ms. */
  readonly restoredServingMs: number;
}

export const backupSuite: Suite = {
  name: 'backup',
  summary: 'snapshot save / status / restore of a 100 k-key store: time and size',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const figures = await measure(context);
    return { finalLine: finalLine(figures), figures, chartSvg: chart(figures) };
  },
};

async function measure(context: BenchContext): Promise<BackupFigures> {
  const cluster = newCluster('conclave', TIMING, context, 'backup');
  const dir = mkdtempSync(join(context.workDir, 'backup-files-'));
  const file = join(dir, 'backup.cbak');
  try {
    context.say(`backup: starting a 3-member cluster, then ${KEYS} puts (one per key)`);
    const leader = await cluster.start(3);
    const fillStartMs = performance.now();
    await fill(leader.clientHostPort);
    const fillMs = performance.now() - fillStartMs;
    context.say(`backup: filled in ${fmt(fillMs / 1000)} s`);
    const saveMs = await cli(context, ['snapshot', 'save', file, '--endpoints',
      (await cluster.waitHealthy()).clientHostPort, '--timeout-ms', String(CLI_DEADLINE_MS)]);
    const fileBytes = statSync(file).size;
    context.say(`backup: saved ${fmt(fileBytes / MIB)} MiB in ${fmt(saveMs)} ms`);
    const statusMs = await cli(context, ['snapshot', 'status', file]);
    const [peerPort, clientPort] = await freePorts(2);
    const restored = join(dir, 'r1');
    const restoreMs = await cli(context, ['snapshot', 'restore', file, '--data-dir', restored,
      '--name', 'r1', '--initial-cluster', `r1=127.0.0.1:${peerPort}`,
      '--initial-cluster-token', 'bench-backup']);
    context.say(`backup: status ${fmt(statusMs)} ms, restore ${fmt(restoreMs)} ms`);
    const restoredServingMs = await serveRestored(context, restored, peerPort!, clientPort!);
    context.say(`backup: the restored member served the last key ${fmt(restoredServingMs)} ms `
      + 'after its launch');
    return { suite: 'backup', keys: KEYS, valueBytes: PUT_WORKLOAD.valueBytes, fillMs, saveMs,
      fileBytes, statusMs, restoreMs, restoredServingMs };
  } finally {
    await cluster.stop();
  }
}

/** One put per key, INFLIGHT closed-loop writers; a failed put is retried. */
async function fill(endpoint: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: INFLIGHT });
  const encoder = putEncoder('conclave', KEYS, PUT_WORKLOAD.keyBytes,
    valueOf(PUT_WORKLOAD.valueBytes));
  let next = 0;
  await Promise.all(Array.from({ length: INFLIGHT }, async (_, lane) => {
    let sequence = 0;
    while (next < KEYS) {
      const key = next++;
      for (;;) {
        const answer = await post(endpoint, encoder.path, encoder.body(key, `fill-${lane}`,
          ++sequence), { agent, timeoutMs: 10_000, keepBody: false }).catch(() => undefined);
        if (answer?.status === 200) break;
        await sleep(10);
      }
    }
  }));
  agent.destroy();
}

/** Runs the CLI to its exit; fails on a non-zero exit, naming its stderr. Unit: ms. */
async function cli(context: BenchContext, args: string[]): Promise<number> {
  const startMs = performance.now();
  const child = context.processes.spawn(`conclave ${args[0]} ${args[1]}`, process.execPath,
    [CONCLAVE_BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk).slice(-2000)));
  const code = await new Promise<number | null>((resolve) => child.child.once('exit', resolve));
  if (code !== 0) throw new Error(`conclave ${args.join(' ')} exited ${code}: ${stderr}`);
  return performance.now() - startMs;
}

/** Starts the restored member alone; the time until it serves the last key's value. */
async function serveRestored(context: BenchContext, dataDir: string, peerPort: number,
  clientPort: number): Promise<number> {
  const startMs = performance.now();
  const member = context.processes.spawn('conclave r1', process.execPath, [CONCLAVE_BIN,
    'server', '--name', 'r1', '--data-dir', dataDir, '--peer-addr', `127.0.0.1:${peerPort}`,
    '--client-addr', `127.0.0.1:${clientPort}`, '--cluster', `r1=127.0.0.1:${peerPort}`,
    '--initial-cluster-token', 'bench-backup', '--log-level', 'warn'], { stdio: 'ignore' });
  try {
    const read = rangeEncoder('conclave', KEYS, PUT_WORKLOAD.keyBytes, 'linearizable');
    const agent = new http.Agent({ keepAlive: true });
    await waitFor(async () => {
      const answer = await post(`127.0.0.1:${clientPort}`, read.path, read.body(KEYS - 1),
        { agent, timeoutMs: 2_000, keepBody: true }).catch(() => undefined);
      return answer?.status === 200 && answer.body.includes('"value"') ? true : undefined;
    }, SERVE_DEADLINE_MS, 'the restored member serving the last key', 20);
    agent.destroy();
    return performance.now() - startMs;
  } finally {
    await context.processes.stop(member, 3_000);
  }
}

function finalLine(f: BackupFigures): string {
  return `backup (${f.keys / 1000} k keys of ${f.valueBytes} B, from a 3-member cluster): `
    + `snapshot save ${fmt(f.saveMs / 1000)} s, ${fmt(f.fileBytes / MIB)} MiB `
    + `(${fmt(f.fileBytes / MIB / (f.saveMs / 1000))} MiB/s); status ${fmt(f.statusMs / 1000)} s; `
    + `restore ${fmt(f.restoreMs / 1000)} s; the restored member served the last key `
    + `${fmt(f.restoredServingMs / 1000)} s after its launch`;
}

function chart(f: BackupFigures): string {
  return barPanelsSvg({
    title: `backup: ${f.keys / 1000} k keys of ${f.valueBytes} B (${fmt(f.fileBytes / MIB)} MiB file)`,
    subtitle: 'the CLI as operators run it, each command from spawn to exit',
    series: [{ name: 'conclave', colour: SYSTEM_COLOURS.conclave }],
    panels: [{ title: 'seconds (lower is better)',
      categories: ['save', 'status', 'restore', 'restored serving'],
      values: { conclave: [f.saveMs, f.statusMs, f.restoreMs, f.restoredServingMs]
        .map((ms) => ms / 1000) } }],
    width: 900,
  });
}
