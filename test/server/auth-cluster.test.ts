/**
 * Goal: token authentication on a real 3-member cluster, as issue 14 asks: `conclave auth
 * enable` with a root user; a user with read on `app/` reads `app/x` and is refused
 * CONCLAVE_PERMISSION_DENIED writing it; a wrong password is CONCLAVE_AUTH_FAILED and no token
 * CONCLAVE_INVALID_TOKEN; a lease granted by one user cannot be revoked or kept alive by
 * another (nor listed); `conclave lock` and `conclave elect` work with `--user`; a token
 * signed before a leader is killed -9 is accepted by the members after it, and a client logged
 * in carries on.
 * Method: three `conclave server` processes (the built bin), the CLI run in this process
 * (runCliInProcess) and, for `elect` (which holds until Ctrl-C), as a process from source;
 * the client library with `auth: { user, password }`. Waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect, type ConclaveClient } from '../../src/client/index.js';
import { CliProcess, stopAll } from '../cli/cli-process.js';
import { runCliInProcess } from '../cli/run-in-process.js';
import { rejection } from '../support/conditions.js';
import { cliClientFlags, deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { BUILT, RealCluster } from '../support/real-cluster.js';

let cluster: RealCluster;
const clients: ConclaveClient[] = [];

async function cli(args: string[], user?: string): Promise<{ code: number; out: string;
  err: string }> {
  // The client flags go before `--` (what follows it is a lock's command).
  const dashes = args.indexOf('--');
  const [own, command] = dashes < 0 ? [args, []] : [args.slice(0, dashes), args.slice(dashes)];
  const run = await runCliInProcess([...own, '--endpoints', cluster.endpoints.join(','),
    ...cliClientFlags(), ...(user === undefined ? [] : ['--user', user]), ...command]);
  return { code: run.code, out: run.out.join('\n'), err: run.err.join('\n') };
}

async function ok(args: string[], user?: string): Promise<string> {
  const run = await cli(args, user);
  assert.equal(run.code, 0, `conclave ${args.join(' ')}: ${run.err}`);
  return run.out;
}

function client(user: string, password: string): ConclaveClient {
  const c = connect({ endpoints: cluster.endpoints, auth: { user, password },
    retryDeadlineMs: cluster.deadlines.leaderMs });
  clients.push(c);
  return c;
}

async function post(endpoint: string, path: string, body: unknown, token?: string)
  : Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://${endpoint}${path}`, { method: 'POST',
    body: JSON.stringify(body), headers: token === undefined ? {}
      : { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(deadlineMs(2000)) });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

describe('server: authentication on a 3-member cluster', { skip: !BUILT && 'npm run build' },
  () => {
    before(async () => {
      cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 50, electionTimeoutMs: 500 });
      await cluster.waitForLeader();
      await ok(['user', 'add', 'root:rootpw']);
      await ok(['role', 'add', 'app-reader']);
      await ok(['role', 'grant-permission', 'app-reader', 'read', 'app/', '--prefix']);
      await ok(['role', 'add', 'worker']);
      for (const prefix of ['app/', 'conclave/lock/', 'conclave/election/']) {
        await ok(['role', 'grant-permission', 'worker', 'readwrite', prefix, '--prefix']);
      }
      for (const [user, role] of [['alice', 'app-reader'], ['bob', 'worker'],
        ['carol', 'worker']] as const) {
        await ok(['user', 'add', `${user}:${user}pw`]);
        await ok(['user', 'grant-role', user, role]);
      }
      assert.equal(await ok(['auth', 'enable']), 'Authentication Enabled');
    });
    after(async () => {
      for (const c of clients) c.close();
      await stopAll();
      await cluster?.stop();
    });

    test('auth status is on; without a token calls are refused, a bad password too', async () => {
      assert.equal(JSON.parse(await ok(['auth', 'status', '--json'])).enabled, true);
      const anonymous = await cli(['kv', 'get', 'app/x']);
      assert.equal(anonymous.code, 1);
      assert.match(anonymous.err, /CONCLAVE_INVALID_TOKEN/);
      const wrong = await cli(['kv', 'get', 'app/x'], 'alice:nope');
      assert.equal(wrong.code, 1);
      assert.match(wrong.err, /CONCLAVE_AUTH_FAILED/);
      // User and role changes need root now.
      const notRoot = await cli(['role', 'add', 'x'], 'bob:bobpw');
      assert.match(notRoot.err, /CONCLAVE_PERMISSION_DENIED/);
      assert.deepEqual(JSON.parse(await ok(['user', 'get', 'alice', '--json'], 'root:rootpw')),
        { name: 'alice', roles: ['app-reader'] });
      // A backup holds every password hash: root only.
      const backup = join(cluster.dataDir, 'backup.snap');
      const anonymousSave = await cli(['snapshot', 'save', backup]);
      assert.match(anonymousSave.err, /CONCLAVE_INVALID_TOKEN/);
      const aliceSave = await cli(['snapshot', 'save', backup], 'alice:alicepw');
      assert.match(aliceSave.err, /CONCLAVE_PERMISSION_DENIED/);
      await ok(['snapshot', 'save', backup], 'root:rootpw');
    });

    test('read on app/ reads app/x and is refused writing it', async () => {
      await ok(['kv', 'put', 'app/x', '1'], 'root:rootpw');
      assert.equal(await ok(['kv', 'get', 'app/x'], 'alice:alicepw'),
        '1');
      const write = await cli(['kv', 'put', 'app/x', '2'], 'alice:alicepw');
      assert.equal(write.code, 1);
      assert.match(write.err, /CONCLAVE_PERMISSION_DENIED: user alice may not write the key "app\/x"/);
      const elsewhere = await cli(['kv', 'get', 'other'], 'alice:alicepw');
      assert.match(elsewhere.err, /CONCLAVE_PERMISSION_DENIED/);
      // The client library, over the stream: the same verdicts.
      const alice = client('alice', 'alicepw');
      assert.equal((await alice.kv.get('app/x')).kv?.value, '1');
      const refused = await rejection(alice.kv.put('app/x', '3'));
      assert.equal(refused.code, 'CONCLAVE_PERMISSION_DENIED');
      assert.equal(refused.outcome, 'failed');
    });

    test('a lease granted by one user cannot be revoked, kept alive or listed by another',
      async () => {
        const bob = client('bob', 'bobpw');
        const carol = client('carol', 'carolpw');
        const lease = await bob.leases.grant({ ttlMs: 30_000, autoKeepAlive: false });
        for (const call of [() => carol.leases.revoke(lease.id),
          () => carol.leases.keepAliveOnce(lease.id)]) {
          const error = await rejection(call());
          assert.equal(error.code, 'CONCLAVE_PERMISSION_DENIED', error.message);
        }
        const cliRevoke = await cli(['lease', 'revoke', String(lease.id)], 'carol:carolpw');
        assert.match(cliRevoke.err, /CONCLAVE_PERMISSION_DENIED/);
        const listed = (await carol.leases.list()).map((l) => l.leaseId);
        assert.equal(listed.includes(lease.id), false);
        assert.ok((await bob.leases.list()).some((l) => l.leaseId === lease.id));
        await bob.leases.keepAliveOnce(lease.id);
        await bob.leases.revoke(lease.id);
      });

    test('conclave lock and conclave elect work with --user', async () => {
      const lock = new CliProcess(['lock', 'jobs', '--ttl', '5', '--endpoints',
        cluster.endpoints.join(','), ...cliClientFlags(), '--user', 'bob:bobpw', '--', 'sh',
        '-c', 'echo token=$CONCLAVE_FENCING_TOKEN']);
      assert.equal(await lock.exited(deadlineMs(PROCESS_START_MS_IDLE + 3000)), 0,
        lock.text('stderr'));
      assert.match(lock.text('stdout'), /^token=\d+$/);
      const refused = await cli(['lock', 'jobs', '--ttl', '5', '--', 'true'], 'alice:alicepw');
      assert.equal(refused.code, 1, refused.err);
      assert.match(refused.err, /CONCLAVE_PERMISSION_DENIED/);
      const elect = new CliProcess(['elect', 'primary', '--id', 'e1', '--endpoints',
        cluster.endpoints.join(','), ...cliClientFlags(), '--user', 'carol:carolpw']);
      try {
        await elect.line(/^elected name=primary id=e1 fencingToken=\d+/,
          deadlineMs(PROCESS_START_MS_IDLE + 3000));
      } finally {
        elect.child.kill('SIGINT');
        await elect.exited(deadlineMs(3000)).catch(() => elect.child.kill('SIGKILL'));
      }
    });

    test('a token survives a leader killed -9; a logged-in client carries on', async () => {
      const login = await post(cluster.endpoints[0]!, '/v1/auth/authenticate',
        { name: 'alice', password: 'alicepw' });
      assert.equal(login.status, 200, JSON.stringify(login.body));
      const token = login.body['token'] as string;
      const alice = client('alice', 'alicepw');
      assert.equal((await alice.kv.get('app/x')).kv?.value, '1');
      const leader = await cluster.waitForLeader();
      await cluster.kill9(leader);
      const survivors = cluster.members.filter((m) => m !== leader);
      await cluster.waitForLeader(undefined, survivors);
      for (const member of survivors) {
        const read = await post(cluster.endpoint(member), '/v1/kv/range',
          { key: 'app/x', consistency: 'serializable' }, token);
        assert.equal(read.status, 200, JSON.stringify(read.body));
      }
      assert.equal((await alice.kv.get('app/x')).kv?.value, '1');
      const forged = await post(cluster.endpoint(survivors[0]!), '/v1/kv/range',
        { key: 'app/x', consistency: 'serializable' }, `${token.slice(0, -2)}xx`);
      assert.equal(forged.status, 401);
      assert.equal((forged.body['error'] as { code: string }).code, 'CONCLAVE_INVALID_TOKEN');
    });
  });
