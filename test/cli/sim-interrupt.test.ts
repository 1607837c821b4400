/**
 * `conclave sim` on Ctrl-C: the built CLI (seeds on worker threads) stops at SIGINT, prints
 * the partial summary and the replay command of each seed in progress, and exits 130; and
 * `--record` writes a recording (raft-figure8, heartbeat) that `conclave replay` accepts while a
 * bad file exits 2.
 * Method: real processes of the built CLI; waits on output, with deadlines.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, BUILT, waitFor } from '../support/real-cluster.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-sim-cli-'));

describe('conclave sim: Ctrl-C and --record', { skip: !BUILT && 'dist/ not built' }, () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('SIGINT prints the partial summary and the seeds in progress, exit 130', async () => {
    const sim = spawn(process.execPath, [BIN, 'sim', '--scenario', 'heartbeat', '--seed', '5',
      '--seeds', '100000', '--duration-s', '30', '--jobs', '2'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    sim.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => sim.on('exit', (code) => resolve(code)));
    await waitFor(async () => /^seed \d+ trace/m.test(out) || undefined, 60_000, 'a seed done');
    sim.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<'hung'>((resolve) =>
      setTimeout(() => resolve('hung'), 60_000))]);
    if (code === 'hung') sim.kill('SIGKILL');
    assert.equal(code, 130, out);
    assert.match(out, new RegExp('^interrupted: \\d+ of 100000 seeds done; in progress: ' +
      'npx conclave sim --scenario heartbeat --seed \\d+ --seeds 1', 'm'));
    assert.match(out, /^partial \(interrupted\), ok: \d+ seeds, zero violations$/m);
  });

  test('--record writes a recording; replay refuses a file that is not one', () => {
    const file = join(dir, 'run.json');
    const sim = spawnSync(process.execPath, [BIN, 'sim', '--scenario', 'raft-figure8',
      '--seed', '1', '--record', file], { encoding: 'utf8' });
    assert.match(sim.stdout, /recorded seed 1 \(\d+ messages, \d+ events\)/, sim.stderr);
    const recording = JSON.parse(readFileSync(file, 'utf8')) as { seed: number; nodes: string[] };
    assert.equal(recording.seed, 1);
    assert.ok(recording.nodes.length >= 3);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"scenario":"raft"}');
    const replay = spawnSync(process.execPath, [BIN, 'replay', bad], { encoding: 'utf8' });
    assert.equal(replay.status, 2);
    assert.match(replay.stderr, /is not a recording/);
    // Every scenario records now (test/dashboard/replay-recordings.test.ts: what each holds).
    const heartbeat = spawnSync(process.execPath, [BIN, 'sim', '--scenario', 'heartbeat',
      '--nodes', '3', '--duration-s', '10', '--seed', '1', '--record', file],
    { encoding: 'utf8' });
    assert.equal(heartbeat.status, 0, heartbeat.stderr);
    assert.match(heartbeat.stdout, /recorded seed 1 \(\d+ messages, \d+ events\)/);
  });
});
