/**
 * cli: dev — what a newcomer does first: `npm start` (conclave dev) brings up three server
 * processes and prints a ready line; `conclave kv put` then `kv get` round-trips; `conclave
 * status --json` names one leader; Ctrl-C (SIGINT) stops every process it started.
 * Method: the built CLI as real child processes; waits are conditions with deadlines derived
 * from the cluster's timings (test/support/deadlines.ts).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  cliClientFlags, clusterDeadlines, deadlineMs, PROCESS_START_MS_IDLE,
} from '../support/deadlines.js';
import { BIN, BUILT, waitFor } from '../support/real-cluster.js';

const TIMING = { heartbeatMs: 50, electionTimeoutMs: 300 };
const DEADLINES = clusterDeadlines(TIMING);

const dataDir = mkdtempSync(join(tmpdir(), 'conclave-dev-'));
let dev: ChildProcess | undefined;
after(() => {
  dev?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

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
});
