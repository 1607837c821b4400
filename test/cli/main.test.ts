/**
 * cli — the `conclave` command's surface: help, errors, exit codes.
 * Method: run the CLI in-process with captured output; one spawn proves the bin entry works.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), exitCode: 0 };
  const code = await runCli(args, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('cli', () => {
  test('--help lists the commands and exits 0', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /sim/);
  });

  test('sim --help lists scenarios and their flags', async () => {
    const r = await run(['sim', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.out, /heartbeat: /);
    assert.match(r.out, /--loss/);
  });

  test('a bad flag value names the flag and the accepted values, exit 2', async () => {
    const r = await run(['sim', '--scenario', 'heartbeat', '--nodes', 'many']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--nodes/);
    assert.match(r.err, /integer from \d+ to \d+/);
  });

  test('an unknown scenario lists the choices, exit 2', async () => {
    const r = await run(['sim', '--scenario', 'nope']);
    assert.equal(r.code, 2);
    assert.match(r.err, /heartbeat/);
  });

  test('an unknown flag and an unknown command exit 2 with a clear line', async () => {
    assert.equal((await run(['sim', '--scenario', 'heartbeat', '--bogus'])).code, 2);
    const r = await run(['frobnicate']);
    assert.equal(r.code, 2);
    assert.match(r.err, /unknown command/);
  });

  test('sim prints a trace hash per seed and a summary, exit 0', async () => {
    const r = await run(['sim', '--scenario', 'heartbeat', '--seed', '3', '--seeds', '2', '--duration-s', '20']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /seed 3 trace [0-9a-f]{16} ok/);
    assert.match(r.out, /seed 4 trace [0-9a-f]{16} ok/);
    assert.match(r.out, /phi-accrual +detection p50/);
    assert.match(r.out, /ok: 2 seeds, zero violations/);
  });

  test('sim --json prints one parsable object', async () => {
    const r = await run(['sim', '--scenario', 'heartbeat', '--seed', '3', '--duration-s', '10', '--json']);
    const parsed = JSON.parse(r.out) as { ok: boolean; results: { traceHash: string }[] };
    assert.equal(parsed.ok, true);
    assert.equal(parsed.results.length, 1);
  });

  test('the bin entry runs (after the build that npm ci does)', (t) => {
    const bin = fileURLToPath(new URL('../../bin/conclave.js', import.meta.url));
    const built = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
    if (!existsSync(built)) {
      t.skip('dist/ not built (npm ci builds it)');
      return;
    }
    const r = spawnSync(process.execPath, [bin, 'sim', '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /--scenario/);
  });

  test('a mutant no seed exposed: exit 0, and the note names the scenario that catches it',
    async () => {
      const r = await run(['sim', '--scenario', 'raft', '--seed', '7', '--seeds', '1',
        '--mutant', 'voteNotPersisted', '--safety-s', '10', '--liveness-s', '5']);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /note: mutant voteNotPersisted .*--scenario raft-vote-restart/);
    });
});
