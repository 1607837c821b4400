/**
 * server: fatal means exit, as real processes (the built bin). Goal: every refusal at start
 * (client or peer port in use, ENOSPC) and a fatal disk error while running (ENOSPC) end the
 * process with exit 1 and one line, nothing left listening, and `/v1/status` never reports a
 * role for a member that stopped; a peer of another cluster is refused in the handshake.
 * ENOSPC is real: the member runs in its own user and mount namespace (`unshare -rm`, no root
 * needed) on a tiny tmpfs, which disappears with it. Times from the line to the exit are
 * reported (diagnostics); every wait has a deadline.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test, type TestContext } from 'node:test';
import { BUILT } from '../support/real-cluster.js';
import {
  MemberProcess, freePort, put, statusOf, stopAllMembers, waitForLeader, type MemberExit,
  type MemberSpec,
} from './member-process.js';

const EXIT_DEADLINE_MS = 30_000;
const LEADER_DEADLINE_MS = 30_000;

const scratch = mkdtempSync(join(tmpdir(), 'conclave-fatal-exit-'));
const holders: net.Server[] = [];
after(async () => {
  await stopAllMembers();
  for (const holder of holders) holder.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Whether this machine lets us mount a private tmpfs without root (or as root). */
const UNSHARE = spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=64k tmpfs ` +
  `${JSON.stringify(scratch)}`]).status === 0;

/**
 * Runs the member in a private mount namespace with a tmpfs of `sizeBytes` at `mountPoint`;
 * `fill` first fills it up (so the very first write fails).
 */
function onTinyDisk(mountPoint: string, sizeBytes: number, fill: boolean): string[] {
  const script = `mkdir -p "$0" && mount -t tmpfs -o size=${sizeBytes} tmpfs "$0" || exit 97; ` +
    (fill ? 'cat /dev/zero > "$0/fill" 2>/dev/null; ' : '') + 'exec "$@"';
  return ['unshare', '-rm', 'sh', '-c', script, mountPoint];
}

async function memberSpec(name: string, extra: Partial<MemberSpec> = {}): Promise<MemberSpec> {
  return { name, dataDir: join(scratch, `${name}-${Math.random().toString(36).slice(2)}`),
    peerPort: await freePort(), clientPort: await freePort(), ...extra };
}

async function holdPort(port: number): Promise<void> {
  const holder = net.createServer();
  holders.push(holder);
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', () => resolve()));
}

function refusedConnection(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

function report(t: TestContext, what: string, exit: MemberExit): void {
  t.diagnostic(`${what}: exit ${exit.code}, ${exit.lineToExitMs?.toFixed(0)} ms from the line ` +
    `to exit (${exit.spawnToExitMs.toFixed(0)} ms from spawn): ${exit.line}`);
}

// Independent processes, ports and dirs: a few at once (wall time).
describe('server: fatal means exit (real processes)',
  { skip: BUILT ? false : 'dist/ not built', concurrency: 3 }, () => {
    test('a peer port in use: exit 1 naming it, the client port never opened', async (t) => {
      const spec = await memberSpec('n1');
      await holdPort(spec.peerPort);
      const exit = await new MemberProcess(spec).exited(EXIT_DEADLINE_MS);
      report(t, 'peer port in use', exit);
      assert.equal(exit.code, 1, exit.stderr);
      assert.match(exit.line ?? '', new RegExp(`^conclave: cannot listen for peers on ` +
        `127\\.0\\.0\\.1:${spec.peerPort}: EADDRINUSE`));
      assert.ok(await refusedConnection(spec.clientPort));
    });

    test('a client port in use: exit 1 naming it, the peer port closed', async (t) => {
      const spec = await memberSpec('n1');
      await holdPort(spec.clientPort);
      const exit = await new MemberProcess(spec).exited(EXIT_DEADLINE_MS);
      report(t, 'client port in use', exit);
      assert.equal(exit.code, 1, exit.stderr);
      assert.match(exit.line ?? '', new RegExp(`^conclave: cannot listen for clients on ` +
        `127\\.0\\.0\\.1:${spec.clientPort}: EADDRINUSE`));
      assert.ok(await refusedConnection(spec.peerPort));
    });

    test('ENOSPC at start (a full tmpfs): exit 1 naming the file', { skip: UNSHARE ? false :
      'unshare -rm (user and mount namespaces) is not available here' }, async (t) => {
      const mount = join(scratch, 'full');
      const spec = await memberSpec('n1', { dataDir: join(mount, 'n1') });
      const exit = await new MemberProcess({ ...spec,
        wrapper: onTinyDisk(mount, 64 * 1024, true) }).exited(EXIT_DEADLINE_MS);
      report(t, 'ENOSPC at start', exit);
      assert.equal(exit.code, 1, exit.stderr);
      assert.match(exit.line ?? '', /^conclave: storage \w+ failed on .*n1.*: ENOSPC/);
    });

    test('ENOSPC while running: the member exits 1 and never reports a role after the ' +
      'failure', { skip: UNSHARE ? false : 'unshare -rm is not available here' }, async (t) => {
      const mount = join(scratch, 'small');
      const spec = await memberSpec('n1', { dataDir: join(mount, 'n1') });
      const member = new MemberProcess({ ...spec, wrapper: onTinyDisk(mount, 1024 * 1024, false) });
      await waitForLeader(member.clientUrl, LEADER_DEADLINE_MS);
      const value = 'x'.repeat(64 * 1024);
      let failedAtMs: number | undefined;
      for (let i = 1; failedAtMs === undefined; i++) {
        assert.ok(i < 100, 'a 1 MiB disk took 100 puts of 64 KiB');
        const outcome = await put(member.clientUrl, `k${i}`, value, 'enospc-test', i);
        if (!outcome.ok) failedAtMs = performance.now();
      }
      // From the first failed write on, the member answers no role, then is gone.
      let answers = 0;
      for (;; answers++) {
        const status = await statusOf(member.clientUrl);
        if (status === undefined) break;
        assert.equal(status.body['role'], undefined, `a stopped member said role ` +
          `${String(status.body['role'])}`);
        assert.equal(status.httpStatus, 503);
      }
      const exit = await member.exited(EXIT_DEADLINE_MS);
      report(t, 'ENOSPC while running', exit);
      t.diagnostic(`ENOSPC while running: ${(performance.now() - failedAtMs).toFixed(0)} ms ` +
        `from the failed put to the exit; ${answers} status answers (503) meanwhile`);
      assert.equal(exit.code, 1, exit.stderr);
      assert.match(exit.line ?? '', /^conclave server n1: stopped: storage \w+ failed on .*ENOSPC/);
    });

    test('a peer of another cluster (another token) is refused in the handshake', async () => {
      const [a, b] = [await memberSpec('n1'), await memberSpec('n2')];
      const cluster = `n1=127.0.0.1:${a.peerPort},n2=127.0.0.1:${b.peerPort}`;
      // One cluster secret for both, so the handshake gets as far as the cluster id.
      const secret = ['--peer-secret-file', join(scratch, 'two-peer-secret')];
      const first = new MemberProcess({ ...a, cluster,
        extraArgs: ['--initial-cluster-token', 'cluster-a', ...secret] });
      const second = new MemberProcess({ ...b, cluster,
        extraArgs: ['--initial-cluster-token', 'cluster-b', ...secret] });
      const deadline = performance.now() + LEADER_DEADLINE_MS;
      // In pino's JSON the quotes around each name are escaped.
      const quoted = String.raw`\\"conclave/[0-9a-f]{16}\\"`;
      const refusal = new RegExp(`refused: cluster name mismatch: node n[12] is in ` +
        `cluster ${quoted}, node n[12] in ${quoted}`);
      while (!refusal.test(first.stderr + second.stderr)) {
        assert.ok(performance.now() < deadline,
          `no refusal logged: ${first.stderr} ${second.stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await Promise.all([first.kill9(), second.kill9()]);
    });
  });
