/**
 * server: data dir, as real processes (the built bin). Goal: a member knows whose data it holds
 * and what its log had. A one-member cluster takes 260 acknowledged writes; then its data dir,
 * damaged as an operator or a faulty disk would (last segment deleted, emptied, zeroed, cut;
 * a record corrupted in the middle), started under another cluster's token, or as another
 * member, or opened to group and others, or out of reach (EACCES), is refused with one line
 * naming the reason, and the process exits 1 (the issue saw 22 of 260 writes dropped
 * silently). The intact copy restarts with all 260. Each refusal's time from its line to the
 * exit is reported (diagnostics); the tests wait on the exit with a deadline, never a sleep.
 */
import assert from 'node:assert/strict';
import {
  chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { nodeId } from '../../src/core/ids.js';
import { deriveClusterId } from '../../src/server/member-identity.js';
import { BUILT } from '../support/real-cluster.js';
import {
  MemberProcess, freePort, put, stopAllMembers, waitForLeader, type MemberExit, type MemberSpec,
} from './member-process.js';

const WRITES = 260;
const SEGMENT = 'wal-0000000001.log';
/** A refusal must end the process long before this. Unit: ms. Generous: a loaded machine. */
const EXIT_DEADLINE_MS = 30_000;
const LEADER_DEADLINE_MS = 30_000;

const scratch = mkdtempSync(join(tmpdir(), 'conclave-data-dir-'));
after(async () => {
  await stopAllMembers();
  rmSync(scratch, { recursive: true, force: true });
});

let copies = 0;
/** A fresh copy of `source` (a data dir), for one probe. */
function copyOf(source: string): string {
  const target = join(scratch, `copy-${++copies}`);
  cpSync(source, target, { recursive: true });
  chmodSync(target, 0o700);
  return target;
}

async function spec(name: string, dataDir: string,
  extra: Partial<MemberSpec> = {}): Promise<MemberSpec> {
  return { name, dataDir, peerPort: await freePort(), clientPort: await freePort(), ...extra };
}

/** Starts a member expected to refuse; returns its exit, checked non-zero with one line. */
async function refused(t: TestContext, what: string, member: MemberSpec): Promise<MemberExit> {
  const exit = await new MemberProcess(member).exited(EXIT_DEADLINE_MS);
  assert.equal(exit.code, 1, `${what}: exit ${exit.code} ${exit.signal}; ${exit.stderr}`);
  assert.ok(exit.line !== undefined, `${what}: no refusal line; ${exit.stderr}`);
  t.diagnostic(`${what}: exit ${exit.code}, ${exit.lineToExitMs?.toFixed(0)} ms from the ` +
    `refusal line to exit (${exit.spawnToExitMs.toFixed(0)} ms from spawn): ${exit.line}`);
  return exit;
}

// The probes are independent processes on their own copies: run a few at once (wall time).
describe('server: data dir (real processes)', { skip: BUILT ? false : 'dist/ not built',
  concurrency: 3 }, () => {
  const token = 'data-dir-test-a';
  let intact = '';

  before(async () => {
    intact = join(scratch, 'n1');
    const member = new MemberProcess(await spec('n1', intact,
      { extraArgs: ['--initial-cluster-token', token] }));
    await waitForLeader(member.clientUrl, LEADER_DEADLINE_MS);
    // 260 writes, 20 in flight at a time, each acknowledged (applied) before it counts.
    let next = 0;
    const writer = async (writerId: number): Promise<void> => {
      for (let sequence = 1; next < WRITES; sequence++) {
        const i = next++;
        const key = `k${String(i).padStart(3, '0')}`;
        const outcome = await put(member.clientUrl, key, `v${i}`, `writer-${writerId}`, sequence);
        assert.ok(outcome.ok, `put ${i}: ${outcome.code}`);
      }
    };
    await Promise.all(Array.from({ length: 20 }, (_, w) => writer(w)));
    await member.kill9();
  });

  test('files are 0600 under 0700 directories, and the identity names member and cluster', () => {
    for (const dir of [intact, join(intact, 'wal')]) {
      assert.equal(statSync(dir).mode & 0o777, 0o700, dir);
    }
    for (const file of ['member.id', 'wal/wal-manifest', `wal/${SEGMENT}`]) {
      assert.equal(statSync(join(intact, file)).mode & 0o777, 0o600, file);
    }
    const identity = JSON.parse(readFileSync(join(intact, 'member.id'), 'utf8')) as
      Record<string, unknown>;
    assert.equal(identity['member'], 'n1');
    assert.equal(identity['clusterId'],
      deriveClusterId({ clusterName: 'conclave', token, members: [nodeId('n1')] }));
  });

  test('the intact data dir restarts with all 260 acknowledged writes', async () => {
    const member = new MemberProcess(await spec('n1', copyOf(intact),
      { extraArgs: ['--initial-cluster-token', token] }));
    await waitForLeader(member.clientUrl, LEADER_DEADLINE_MS);
    const response = await fetch(`${member.clientUrl}/v1/kv/range`, { method: 'POST',
      body: JSON.stringify({ key: 'k', prefix: true, limit: 1 }) });
    const body = (await response.json()) as { count?: number };
    assert.equal(body.count, WRITES);
    assert.equal((await member.stop(EXIT_DEADLINE_MS)).code, 0);
  });

  test('a deleted, emptied, zeroed or cut last segment is refused, naming the file', async (t) => {
    const size = statSync(join(intact, 'wal', SEGMENT)).size;
    const damages: [string, (segment: string) => void][] = [
      ['deleted', (segment) => rmSync(segment)],
      ['emptied', (segment) => truncateSync(segment, 0)],
      ['zeroed', (segment) => writeFileSync(segment, new Uint8Array(size))],
      ['cut by 100 bytes', (segment) => truncateSync(segment, size - 100)],
    ];
    await Promise.all(damages.map(async ([what, damage]) => {
      const dir = copyOf(intact);
      damage(join(dir, 'wal', SEGMENT));
      const exit = await refused(t, `last segment ${what}`, await spec('n1', dir,
        { extraArgs: ['--initial-cluster-token', token] }));
      assert.match(exit.line!, new RegExp(`^conclave: write-ahead log lost synced records: ` +
        `${SEGMENT}: `), what);
    }));
  });

  test('a record corrupted in the middle of the log is refused, naming file and offset',
    async (t) => {
      const dir = copyOf(intact);
      const segment = join(dir, 'wal', SEGMENT);
      const bytes = readFileSync(segment);
      bytes[Math.floor(bytes.length / 2)]! ^= 0x40;
      writeFileSync(segment, bytes);
      const exit = await refused(t, 'corrupt record', await spec('n1', dir,
        { extraArgs: ['--initial-cluster-token', token] }));
      assert.match(exit.line!, new RegExp(`^conclave: write-ahead log damaged: ${SEGMENT} at ` +
        'byte \\d+: '));
    });

  test('a data dir of another cluster is refused, naming both cluster ids', async (t) => {
    const ours = deriveClusterId({ clusterName: 'conclave', token, members: [nodeId('n1')] });
    const theirs = deriveClusterId({ clusterName: 'conclave', token: 'data-dir-test-b',
      members: [nodeId('n1')] });
    const exit = await refused(t, 'foreign cluster', await spec('n1', copyOf(intact),
      { extraArgs: ['--initial-cluster-token', 'data-dir-test-b'] }));
    assert.match(exit.line!, /^conclave: refusing data dir /);
    assert.ok(exit.line!.includes(`cluster ${ours}`) && exit.line!.includes(`cluster ${theirs}`),
      exit.line);
  });

  test('another member\'s data dir is refused, naming both members', async (t) => {
    // A two-member cluster's n1 (no quorum alone, but it writes its identity and votes)...
    const dir = join(scratch, 'two-n1');
    const ports = { n1: await freePort(), n2: await freePort() };
    const cluster = `n1=127.0.0.1:${ports.n1},n2=127.0.0.1:${ports.n2}`;
    const extraArgs = ['--peer-secret-file', join(scratch, 'two-peer-secret')];
    const first = new MemberProcess({ name: 'n1', dataDir: dir, peerPort: ports.n1,
      clientPort: await freePort(), cluster, extraArgs });
    const deadline = performance.now() + LEADER_DEADLINE_MS;
    while (statSafe(join(dir, 'member.id')) === undefined) {
      assert.ok(performance.now() < deadline, 'n1 never wrote its identity');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await first.kill9();
    // ...is n2's no more than anyone else's.
    const exit = await refused(t, 'other member', { name: 'n2', dataDir: dir,
      peerPort: ports.n2, clientPort: await freePort(), cluster, extraArgs });
    assert.match(exit.line!, /it belongs to member n1 of cluster [0-9a-f]{16}, not to n2/);
  });

  test('a data dir open to group or others is refused with the chmod to run; --insecure ' +
    'accepts it', async (t) => {
    const dir = copyOf(intact);
    chmodSync(dir, 0o755);
    const exit = await refused(t, 'mode 0755', await spec('n1', dir,
      { extraArgs: ['--initial-cluster-token', token] }));
    assert.match(exit.line!, new RegExp(`has mode 0755: .*run \`chmod 700 ${dir}\``));
    const member = new MemberProcess(await spec('n1', dir,
      { extraArgs: ['--initial-cluster-token', token, '--insecure'] }));
    await waitForLeader(member.clientUrl, LEADER_DEADLINE_MS);
    assert.equal((await member.stop(EXIT_DEADLINE_MS)).code, 0);
  });

  test('a data dir out of reach (EACCES) is refused', async (t) => {
    const dir = copyOf(intact);
    // As root, permission bits do not stop us: run the member as nobody instead.
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) chmodSync(dir, 0o000);
    const exit = await refused(t, 'EACCES', await spec('n1', dir, {
      extraArgs: ['--initial-cluster-token', token],
      ...(asRoot ? { spawnOptions: { uid: 65534, gid: 65534 } } : {}),
    }));
    assert.match(exit.line!, /^conclave: storage \w+ failed on .*: EACCES/);
    if (!asRoot) chmodSync(dir, 0o700);
  });
});

function statSafe(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
