/**
 * cli: the operator commands of issue 15 — every one answers `--help` (exit 0, its usage line,
 * `--json` among its options), and with `--json` against a real one-member cluster every line
 * it prints is one JSON object: member list|add|promote|remove, move-leader, endpoint
 * health|status, compact, snapshot save|status|restore. A refusal with `--json` is a JSON
 * `{error}` too (member promote of a learner that never started); `member add` refuses an
 * address the log would refuse (exit 2) before it calls anyone. Method: the CLI run
 * in-process against a real `conclave server` process; waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cliClientFlags } from '../support/deadlines.js';
import { freePort } from '../support/ports.js';
import { BUILT, RealCluster } from '../support/real-cluster.js';
import { runCliInProcess, type CliRun } from './run-in-process.js';

const run = runCliInProcess;

const COMMANDS = [['member', 'list'], ['member', 'add'], ['member', 'promote'],
  ['member', 'remove'], ['move-leader'], ['endpoint', 'health'], ['endpoint', 'status'],
  ['snapshot', 'save'], ['snapshot', 'status'], ['snapshot', 'restore'], ['compact']];

const clusters: RealCluster[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every stdout line parsed as a JSON object; at least one line. */
function jsonLines(r: CliRun, what: string): Record<string, unknown>[] {
  assert.ok(r.out.length > 0, `${what}: no output (stderr: ${r.err.join('; ')})`);
  return r.out.map((line) => {
    const value = JSON.parse(line) as unknown;
    assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value),
      `${what}: ${line}`);
    return value as Record<string, unknown>;
  });
}

describe('cli: operator commands', () => {
  test('each has --help with --json among its options', async () => {
    for (const command of COMMANDS) {
      const help = await run([...command, '--help']);
      const text = help.out.join('\n');
      assert.equal(help.code, 0, command.join(' '));
      assert.match(text, new RegExp(`Usage: conclave ${command.join(' ')} `), command.join(' '));
      assert.match(text, /--json/, command.join(' '));
    }
  });

  test('member add refuses, before any call, an address the log would not record', async () => {
    // parsePeerAddress takes `bad_host`; the log's stricter rule (DNS names) does not.
    for (const addr of ['bad_host:7000', `${'h'.repeat(300)}:1`]) {
      const r = await run(['member', 'add', 'n2', '--peer-addr', addr, '--endpoints',
        '127.0.0.1:1']);
      assert.deepEqual([r.code, r.err.length], [2, 1], addr);
      assert.match(r.err[0] ?? '', /--peer-addr: (not a host:port|a peer address is longer)/);
    }
  });

  test('with --json, each prints JSON objects only', { skip: !BUILT && 'run npm run build first' },
    async () => {
    const cluster = await RealCluster.start({ nodes: 1, heartbeatMs: 50, electionTimeoutMs: 500 });
    clusters.push(cluster);
    await cluster.waitForLeader();
    const dir = mkdtempSync(join(tmpdir(), 'conclave-ops-json-'));
    dirs.push(dir);
    const flags = ['--json', '--endpoints', cluster.endpoints.join(','), ...cliClientFlags()];
    const ok = async (args: string[]): Promise<Record<string, unknown>[]> => {
      const r = await run([...args, ...flags]);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.err.join('; ')}`);
      return jsonLines(r, args.join(' '));
    };
    const [list] = await ok(['member', 'list']);
    assert.equal((list!['members'] as unknown[]).length, 1);
    const [added] = await ok(['member', 'add', 'n2', '--peer-addr', `127.0.0.1:${await freePort()}`]);
    assert.equal(added!['added'], 'n2');
    // n2 never starts: it cannot have caught up, so the promotion is refused, as JSON too.
    const refused = await run(['member', 'promote', 'n2', ...flags]);
    assert.equal(refused.code, 1);
    assert.ok('error' in jsonLines(refused, 'member promote')[0]!);
    const [removed] = await ok(['member', 'remove', 'n2']);
    assert.equal(removed!['removed'], 'n2');
    assert.equal((await ok(['move-leader', 'n1']))[0]!['leaderId'], 'n1');
    assert.equal((await ok(['endpoint', 'health']))[0]!['health'], true);
    assert.equal((await ok(['endpoint', 'status']))[0]!['id'], 'n1');
    const [put] = await ok(['kv', 'put', 'k', 'v']);
    const [compacted] = await ok(['compact', String(put!['revision'])]);
    assert.equal(compacted!['compactRevision'], put!['revision']);
    const file = join(dir, 'backup.cbak');
    await ok(['snapshot', 'save', file]);
    const status = jsonLines(await run(['snapshot', 'status', file, '--json']), 'status');
    assert.equal(status[0]!['checksumOk'], true);
    const restore = await run(['snapshot', 'restore', file, '--json', '--data-dir',
      join(dir, 'r1'), '--name', 'r1', '--initial-cluster', 'r1=127.0.0.1:2380',
      '--initial-cluster-token', 'ops-json']);
    assert.equal(restore.code, 0, restore.err.join('; '));
    jsonLines(restore, 'snapshot restore');
  });
});
