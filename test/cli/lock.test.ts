/**
 * cli: lock — `conclave lock NAME -- CMD` as users run it: CMD sees the fencing token in
 * $CONCLAVE_FENCING_TOKEN and a second run sees a larger one; CMD's exit code passes through;
 * a lost lock stops CMD and exits 75; bad usage exits 2 naming the problem.
 * Method: real `conclave` processes (from source, cli-process.ts) against the lease fake
 * cluster (real HTTP API, watches, keep-alive stream and LeaseTracker on loopback, in this
 * process); the lock is lost by swallowing keep-alives, so its local deadline passes. Usage
 * errors run in-process through runCli. Waits are conditions with deadlines sized for a
 * loaded machine (test/support/deadlines.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { LeaseFakeCluster } from '../client/lease-fake-cluster.js';
import { cliClientFlags, deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { CliProcess, stopAll } from './cli-process.js';

let cluster: LeaseFakeCluster;

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), exitCode: 0 };
  const code = await runCli(args, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function lock(args: string[]): CliProcess {
  // The flags before `--`: everything after it is CMD.
  return new CliProcess(['lock', '--endpoints', cluster.endpoints.join(','), ...cliClientFlags(),
    ...args]);
}

describe('cli: lock', () => {
  before(async () => {
    cluster = await LeaseFakeCluster.start(3);
  });
  after(async () => {
    await stopAll();
    await cluster.stop();
  });

  test('the demo twice: CMD prints the token, the second one larger; exit codes pass through',
    async () => {
      const tokens: number[] = [];
      for (const exitCode of [0, 7]) {
        const p = lock(['demo', '--ttl', '3', '--',
          'sh', '-c', `echo $CONCLAVE_FENCING_TOKEN; exit ${exitCode}`]);
        assert.equal(await p.exited(deadlineMs(PROCESS_START_MS_IDLE + 1000)), exitCode,
          p.text('stderr'));
        assert.match(p.text('stdout'), /^\d+$/);
        tokens.push(Number(p.text('stdout')));
        assert.match(p.text('stderr'), /^acquired lock=demo fencingToken=\d+ term=\d+ lease=\d+$/m);
        assert.match(p.text('stderr'),
          new RegExp(`^released lock=demo fencingToken=${tokens.at(-1)} term=\\d+ `
            + `exitCode=${exitCode}$`, 'm'));
      }
      const [first, second] = tokens;
      assert.ok(second! > first!, `second token ${second} > first ${first}`);
      assert.equal(cluster.store.leases().length, 0, 'each run revoked its lease');
    });

  test('a lost lock stops CMD (SIGTERM) and exits 75', async () => {
    const p = lock(['lost', '--ttl', '1', '--lease-margin-ms', '100', '--grace-ms', '1000', '--',
      'sh', '-c', 'echo $$; exec sleep 30']);
    const pid = Number((await p.line(/^\d+$/, deadlineMs(PROCESS_START_MS_IDLE))).text);
    cluster.dropKeepAlives = true; // no keep-alive is answered: the local deadline passes
    try {
      assert.equal(await p.exited(deadlineMs(1000 + 1000)), 75, p.text('stderr'));
    } finally {
      cluster.dropKeepAlives = false;
    }
    assert.match(p.text('stderr'),
      /^lost lock=lost fencingToken=\d+ term=\d+ reason=(lease-ended|stalled) /m);
    // (stalled: on a loaded machine the 100 ms stall threshold may trip first; either ends it.)
    assert.throws(() => process.kill(pid, 0), /ESRCH/, 'CMD was stopped');
  });

  test('usage: no CMD, a bad --ttl, an unknown flag exit 2; --help lists the exit codes',
    async () => {
      const endpoints = ['--endpoints', cluster.endpoints.join(',')];
      const noCmd = await run(['lock', 'demo', ...endpoints]);
      assert.equal(noCmd.code, 2);
      assert.match(noCmd.err, /give CMD after "--"/);
      const badTtl = await run(['lock', 'demo', '--ttl', 'soon', ...endpoints, '--', 'true']);
      assert.equal(badTtl.code, 2);
      assert.match(badTtl.err, /--ttl <seconds>.*expected seconds/);
      const unknown = await run(['lock', 'demo', '--frob', ...endpoints, '--', 'true']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.err, /unknown option '--frob'/);
      const help = await run(['lock', '--help']);
      assert.equal(help.code, 0);
      assert.match(help.out, /CONCLAVE_FENCING_TOKEN/);
      assert.match(help.out, /75 +the lock was lost/);
    });
});
