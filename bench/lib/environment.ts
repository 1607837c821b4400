/**
 * The machine a run measured on, stored beside its figures (numbers from a shared 2-core
 * machine mean little without its load), and the build check: the harness runs the built
 * `conclave` bin, so dist/ must be at least as new as src/.
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync, existsSync, fdatasyncSync, openSync, readdirSync, statSync, unlinkSync, writeSync,
} from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { percentile } from './stats.js';

/** Builds dist/ (tsc -p tsconfig.build.json) when it is missing or older than any file in src/. */
export function ensureBuilt(repoRoot: string, say: (line: string) => void): void {
  const built = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  const builtMs = existsSync(built) ? statSync(built).mtimeMs : 0;
  const sourceMs = newestMtimeMs(join(repoRoot, 'src'));
  if (builtMs >= sourceMs) return;
  say(builtMs === 0 ? 'dist/ is missing: building (tsc -p tsconfig.build.json)'
    : 'src/ changed since the last build: rebuilding (tsc -p tsconfig.build.json)');
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'],
    { cwd: repoRoot, encoding: 'utf8' });
  // tsc emits despite type errors; only a missing output stops the run.
  if (!existsSync(built)) throw new Error(`build failed:\n${result.stdout}${result.stderr}`);
  if (result.status !== 0) {
    say('tsc reported type errors (it still emitted dist/); measuring what it built');
  }
}

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export interface Environment {
  readonly date: string;
  readonly node: string;
  readonly etcd: string | undefined;
  readonly commit: string | undefined;
  readonly cpuModel: string | undefined;
  readonly cores: number;
  readonly memoryBytes: number;
  /** The 1, 5 and 15 minute load averages when the suite started (other work on the machine). */
  readonly loadAverage: readonly number[];
  /** Median and p99 of 4 KiB write + fdatasync in the data directory: what fsync costs here. */
  readonly fdatasyncMsP50: number;
  readonly fdatasyncMsP99: number;
}

export function environment(repoRoot: string, workDir: string,
  etcdVersion: string | undefined): Environment {
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'],
    { cwd: repoRoot, encoding: 'utf8' });
  const sync = fdatasyncMs(workDir, 50);
  return {
    date: new Date().toISOString(), node: process.version, etcd: etcdVersion,
    commit: git.status === 0 ? git.stdout.trim() : undefined, cpuModel: cpus()[0]?.model,
    cores: cpus().length, memoryBytes: totalmem(),
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    fdatasyncMsP50: percentile(sync, 50), fdatasyncMsP99: percentile(sync, 99),
  };
}

/** `count` timed 4 KiB appends, each followed by fdatasync, ascending. Unit: ms. */
function fdatasyncMs(dir: string, count: number): number[] {
  const path = join(dir, 'fdatasync-probe');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(4096, 7);
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const startMs = performance.now();
      writeSync(fd, block);
      fdatasyncSync(fd);
      samples.push(performance.now() - startMs);
    }
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
  return samples.sort((a, b) => a - b);
}
