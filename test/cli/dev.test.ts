/**
 * cli: dev — what a newcomer does first: `npm start` (conclave dev) brings up three server
 * processes and prints a ready line; `conclave kv put` then `kv get` round-trips; `conclave
 * status --json` names one leader; Ctrl-C (SIGINT) stops every process it started. And dev as
 * a supervisor (issue 18 item 7): a member killed with kill -9 is restarted and serves again;
 * a kill -9 of dev's parent, or of dev itself, leaves no member running; without --data-dir
 * nothing is written into the working directory (data goes under the system temp dir).
 * Method: the built CLI as real child processes, checked by pid (kill(pid, 0)); waits are
 * conditions with deadlines derived from the cluster's timings (test/support/deadlines.ts).
 * How long Ctrl-C took is printed as a diagnostic, never asserted (speed lives in bench/).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  cliClientFlags, clusterDeadlines, deadlineMs, PROCESS_START_MS_IDLE,
} from '../support/deadlines.js';
import { BIN, BUILT, waitFor } from '../support/real-cluster.js';
import { until } from '../support/conditions.js';

const TIMING = { heartbeatMs: 50, electionTimeoutMs: 300 };
const DEADLINES = clusterDeadlines(TIMING);

const dataDir = mkdtempSync(join(tmpdir(), 'conclave-dev-'));
let dev: ChildProcess | undefined;
/** Every pid a test saw (dev, its members, a parent), SIGKILLed at the end if still alive. */
const seenPids = new Set<number>();
const cleanups: (() => void)[] = [];
after(() => {
  dev?.kill('SIGKILL');
  for (const pid of seenPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  for (const cleanup of cleanups) cleanup();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Ready {
  readonly ready: boolean;
  readonly endpoints: string[];
  readonly dataDir: string;
  readonly pids: Record<string, number>;
  readonly devPid: number;
}

/** Starts `conclave dev --json` (through `parent` when given) and waits for its ready line. */
async function startDev(basePort: number, extra: readonly string[], options:
  { cwd?: string; viaParent?: boolean } = {}): Promise<{ proc: ChildProcess; ready: Ready;
    stderr: () => string }> {
  const args = [BIN, 'dev', '--base-port', String(basePort),
    '--heartbeat-ms', String(TIMING.heartbeatMs),
    '--election-timeout-ms', String(TIMING.electionTimeoutMs),
    '--ready-deadline-ms', String(DEADLINES.leaderMs), '--json', ...extra];
  // The parent: a node process that starts dev (its output passed through) and waits.
  const parentScript = 'const c = require("node:child_process").spawn(process.execPath, '
    + `${JSON.stringify(args)}, { stdio: ["ignore", "inherit", "inherit"] });`
    + 'setInterval(() => {}, 1000);';
  const proc = options.viaParent === true
    ? spawn(process.execPath, ['-e', parentScript], { stdio: ['ignore', 'pipe', 'pipe'],
      cwd: options.cwd })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd });
  seenPids.add(proc.pid!);
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ready = await waitFor(async () => {
    const line = stdout.split('\n').find((l) => l.includes('"ready"'));
    return line === undefined ? undefined : JSON.parse(line) as Ready;
  }, DEADLINES.leaderMs + deadlineMs(PROCESS_START_MS_IDLE), `the ready line (${stderr})`);
  seenPids.add(ready.devPid);
  for (const pid of Object.values(ready.pids)) seenPids.add(pid);
  return { proc, ready, stderr: () => stderr };
}

async function allGone(pids: readonly number[], what: string): Promise<void> {
  await until(() => pids.every((pid) => !alive(pid)), deadlineMs(5000)).catch(() => {
    throw new Error(`${what}: still running: ${pids.filter(alive).join(', ')}`);
  });
}

function conclave(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args],
    { encoding: 'utf8', timeout: deadlineMs(PROCESS_START_MS_IDLE + 2000) });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('cli: dev', { skip: BUILT ? false : 'dist/ not built (npm ci builds it)' }, () => {
  test('a local cluster comes up, serves the CLI, and stops on Ctrl-C', async () => {
    const basePort = 20_000 + (process.pid % 20_000);
    dev = spawn(process.execPath, [BIN, 'dev', '--base-port', String(basePort), '--data-dir', dataDir,
      '--heartbeat-ms', String(TIMING.heartbeatMs), '--election-timeout-ms', String(TIMING.electionTimeoutMs),
      '--ready-deadline-ms', String(DEADLINES.leaderMs), '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    dev.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const ready = await waitFor(async () => {
      const line = stdout.split('\n').find((l) => l.includes('"ready"'));
      return line === undefined ? undefined : JSON.parse(line) as { ready: boolean; endpoints: string[] };
    }, DEADLINES.leaderMs + deadlineMs(PROCESS_START_MS_IDLE), 'the ready line');
    assert.equal(ready.ready, true);
    assert.equal(ready.endpoints.length, 3);
    const endpoints = ready.endpoints.join(',');
    const put = conclave('kv', 'put', 'a', '1', '--endpoints', endpoints, ...cliClientFlags());
    assert.equal(put.status, 0, put.stderr);
    const got = conclave('kv', 'get', 'a', '--endpoints', endpoints, ...cliClientFlags());
    assert.equal(got.status, 0, got.stderr);
    assert.match(got.stdout, /1/);
    const status = conclave('status', '--json', '--endpoints', endpoints, ...cliClientFlags());
    assert.equal(status.status, 0, status.stderr);
    const parsed = JSON.parse(status.stdout) as { leaderId?: string; members: { role?: string }[] };
    assert.ok(parsed.leaderId !== undefined);
    assert.equal(parsed.members.filter((m) => m.role === 'leader').length, 1);
    const exited = new Promise<number | null>((resolve) => dev!.once('exit', (code) => resolve(code)));
    dev.kill('SIGINT');
    assert.equal(await exited, 0);
    const afterStop = conclave('status', '--endpoints', endpoints, '--deadline-ms', '500');
    assert.notEqual(afterStop.status, 0, 'members still answer after Ctrl-C');
  });

  test('a member killed with kill -9 comes back; nothing is written into the working dir',
    async (t) => {
      const cwd = mkdtempSync(join(tmpdir(), 'conclave-dev-cwd-'));
      const basePort = 20_000 + ((process.pid + 20) % 20_000);
      const { proc, ready, stderr } = await startDev(basePort, [], { cwd });
      cleanups.push(() => rmSync(ready.dataDir, { recursive: true, force: true }));
      cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
      assert.ok(ready.dataDir.startsWith(tmpdir()), ready.dataDir);
      const victim = ready.pids['n2']!;
      process.kill(victim, 'SIGKILL');
      const restarted = await waitFor(async () => {
        const m = /member n2 restarted \(pid (\d+)\)/.exec(stderr());
        return m === null ? undefined : Number(m[1]);
      }, deadlineMs(5000), 'the restart line');
      seenPids.add(restarted);
      assert.notEqual(restarted, victim);
      assert.ok(alive(restarted));
      assert.match(stderr(), /member n2 exited \(SIGKILL\) after [\d.]+ s; restarting in/);
      const n2 = ready.endpoints[1]!;
      await waitFor(async () => {
        const r = conclave('kv', 'get', 'missing', '--serializable', '--endpoints', n2,
          ...cliClientFlags());
        return r.status === 1 && /not found/.test(r.stderr) ? true : undefined;
      }, DEADLINES.leaderMs, 'the restarted member answering');
      const status = conclave('status', '--json', '--endpoints', ready.endpoints.join(','),
        ...cliClientFlags());
      const parsed = JSON.parse(status.stdout) as { members: { id: string; version?: string;
        uptimeMs?: number; dataSizeBytes?: number }[] };
      const member = parsed.members.find((m) => m.id === 'n2');
      assert.equal(typeof member?.version, 'string');
      assert.ok((member?.dataSizeBytes ?? 0) > 0 && (member?.uptimeMs ?? -1) >= 0);
      const startedMs = performance.now();
      const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
      proc.kill('SIGINT');
      assert.equal(await exited, 0);
      const stopMs = performance.now() - startedMs;
      await allGone([...Object.values(ready.pids), restarted], 'after Ctrl-C');
      t.diagnostic(`dev: Ctrl-C to exit took ${stopMs.toFixed(0)} ms`);
      assert.deepEqual(readdirSync(cwd), []);
    });

  test('kill -9 of dev\'s parent: dev and every member exit', async () => {
    const basePort = 20_000 + ((process.pid + 40) % 20_000);
    const { proc, ready } = await startDev(basePort,
      ['--data-dir', join(dataDir, 'parent')], { viaParent: true });
    proc.kill('SIGKILL');
    await allGone([ready.devPid, ...Object.values(ready.pids)], 'after the parent died');
  });

  test('kill -9 of dev itself: every member exits (their stdin closes)', async () => {
    const basePort = 20_000 + ((process.pid + 60) % 20_000);
    const { ready } = await startDev(basePort, ['--data-dir', join(dataDir, 'self')]);
    process.kill(ready.devPid, 'SIGKILL');
    await allGone(Object.values(ready.pids), 'after dev was killed');
  });
});
