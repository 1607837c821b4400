/**
 * Goal: authentication at both doors of one member (HTTP and the multiplexed stream) and the
 * client's token handling: permissions checked alike on both transports, watches refused
 * without read, the lease keep-alive WebSocket refused without a token and for another's lease,
 * the client renewing its token before expiry and re-logging after CONCLAVE_INVALID_TOKEN
 * (a password change revokes tokens), malformed auth requests refused by field, and auth off
 * changing nothing. Method: a one-member server in this process (real sockets, real WAL), a
 * short --auth-token-ttl so a renewal happens within the test; raw HTTP for the wire shapes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { parsePeerAddress, type PeerAddress } from '../../src/adapters/peer-address.js';
import { connect, type ConclaveClient } from '../../src/client/index.js';
import { nodeId } from '../../src/core/ids.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { SERVER_DEFAULTS } from '../../src/server/server-config.js';
import { rejection } from '../support/conditions.js';
import { clusterDeadlines, deadlineMs } from '../support/deadlines.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/real-cluster.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-auth-api-'));
const TOKEN_TTL_MS = 3000;
let server: RunningServer;
let endpoint = '';
const clients: ConclaveClient[] = [];
const address = (p: number): PeerAddress => parsePeerAddress(`127.0.0.1:${p}`) as PeerAddress;

async function post(path: string, body: unknown, token?: string)
  : Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${endpoint}${path}`, { method: 'POST', body: JSON.stringify(body),
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(deadlineMs(3000)) });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

const codeOf = (answer: { body: Record<string, unknown> }): unknown =>
  (answer.body['error'] as { code?: unknown } | undefined)?.code;

function client(user: string | undefined, transport: 'stream' | 'http' = 'stream')
  : ConclaveClient {
  const c = connect({ endpoints: [endpoint], transport,
    ...(user === undefined ? {} : { auth: { user, password: `${user}pw` } }) });
  clients.push(c);
  return c;
}

async function login(user: string): Promise<string> {
  const answer = await post('/v1/auth/authenticate', { name: user, password: `${user}pw` });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body['token'] as string;
}

describe('server: authentication at both doors, and the client\'s tokens', () => {
  before(async () => {
    const peer = address(await freePort());
    const clientAddress = address(await freePort());
    const n1 = nodeId('n1');
    server = await startServer({ name: n1, dataDir: join(dir, 'n1'), peerAddress: peer,
      clientAddress, cluster: new Map([[n1, peer]]), clientAddresses: new Map([[n1, clientAddress]]),
      heartbeatMs: 20, electionTimeoutMs: 200, insecure: false, clusterName: 'auth-api',
      initialClusterToken: '', snapshotCount: SERVER_DEFAULTS.snapshotCount,
      snapshotCatchUpEntries: SERVER_DEFAULTS.snapshotCatchUpEntries,
      autoCompaction: SERVER_DEFAULTS.autoCompaction, authTokenTtlMs: TOKEN_TTL_MS },
    SILENT_LOGGER);
    endpoint = `http://127.0.0.1:${clientAddress.port}`;
    await waitFor(async () => (server.core.status().role === 'leader' ? true : undefined),
      clusterDeadlines({ heartbeatMs: 20, electionTimeoutMs: 200 }).leaderMs, 'a leader');
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('auth off: nothing changes, a login says auth is not enabled, a client with auth works',
    async () => {
      const plain = client(undefined);
      await plain.kv.put('app/x', '0');
      const answer = await post('/v1/auth/authenticate', { name: 'root', password: 'x' });
      assert.equal(codeOf(answer), 'CONCLAVE_REQUEST_INVALID');
      const withAuth = client('nobody');
      assert.equal((await withAuth.kv.get('app/x')).kv?.value, '0');
    });

  test('malformed auth requests are refused naming the field; enable needs root', async () => {
    const bad = await post('/v1/auth/user/add', { name: 3, password: 'x', extra: true });
    assert.equal(bad.status, 400);
    assert.match(String((bad.body['error'] as { message: string }).message),
      /extra: unknown field; name: must be a string/);
    const badName = await post('/v1/auth/role/add', { name: 'a b' });
    assert.match(JSON.stringify(badName.body), /1 to 64 characters/);
    const badType = await post('/v1/auth/role/grant-permission',
      { name: 'r', type: 'all', key: 'a' });
    assert.match(String((badType.body['error'] as { message: string }).message),
      /type: must be "read", "write" or "readwrite"/);
    const early = await post('/v1/auth/enable', {});
    assert.match(String((early.body['error'] as { message: string }).message),
      /without a user "root"/);
  });

  test('set up and enable; permissions hold alike over the stream and over HTTP', async () => {
    const admin = client(undefined);
    for (const [call, body] of [['user-add', { name: 'root', password: 'rootpw' }],
      ['role-add', { name: 'reader' }],
      ['role-grant-permission', { name: 'reader', type: 'read', key: 'app/', prefix: true }],
      ['role-add', { name: 'writer' }],
      ['role-grant-permission', { name: 'writer', type: 'readwrite', key: 'app/', prefix: true }],
      ['user-add', { name: 'alice', password: 'alicepw' }],
      ['user-grant-role', { name: 'alice', role: 'reader' }],
      ['user-add', { name: 'bob', password: 'bobpw' }],
      ['user-grant-role', { name: 'bob', role: 'writer' }],
      ['user-add', { name: 'carol', password: 'carolpw' }],
      ['user-grant-role', { name: 'carol', role: 'writer' }],
      ['auth-enable', {}]] as const) {
      await admin.authCall(call, body);
    }
    assert.equal(codeOf(await post('/v1/kv/range', { key: 'app/x' })), 'CONCLAVE_INVALID_TOKEN');
    for (const transport of ['stream', 'http'] as const) {
      const alice = client('alice', transport);
      assert.equal((await alice.kv.get('app/x')).kv?.value, '0', transport);
      const denied = await rejection(alice.kv.put('app/x', '1'));
      assert.equal(denied.code, 'CONCLAVE_PERMISSION_DENIED', transport);
      const watchDenied = await post('/v1/kv/range', { key: 'other' }, await login('alice'));
      assert.equal(watchDenied.status, 403);
    }
    const status = await fetch(`${endpoint}/v1/status`);
    assert.equal(status.status, 200, 'status needs no token');
  });

  test('a watch needs read on what it covers', async () => {
    const token = await login('alice');
    const refused = await fetch(`${endpoint}/v1/watch?key=other`,
      { headers: { authorization: `Bearer ${token}` } });
    assert.equal(refused.status, 403);
    const allowed = await fetch(`${endpoint}/v1/watch?key=app/&prefix=true`,
      { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) });
    assert.equal(allowed.status, 200);
    await allowed.body?.cancel();
  });

  test('the keep-alive WebSocket needs a token and keeps only the owner\'s leases', async () => {
    const bob = client('bob');
    const lease = await bob.leases.grant({ ttlMs: 30_000, autoKeepAlive: false });
    const url = `${endpoint.replace('http', 'ws')}/v1/lease/stream`;
    const anonymous = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    assert.equal(anonymous, 401);
    const carolToken = await login('carol');
    const answer = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${carolToken}` } });
      ws.on('open', () => ws.send(JSON.stringify({ id: 1, leaseId: lease.id })));
      ws.on('message', (data) => {
        resolve(JSON.parse(data.toString()) as Record<string, unknown>);
        ws.close();
      });
      ws.on('error', reject);
    });
    assert.equal((answer['error'] as { code: string }).code, 'CONCLAVE_PERMISSION_DENIED');
    // Over HTTP's transport the client's own keep-alives go through the same socket kind.
    const bobHttp = client('bob', 'http');
    await bobHttp.kv.get('app/x'); // logged in before the lease's clock starts
    const held = await bobHttp.grantLease({ ttlMs: 3000 });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    // Kept alive (every TTL/3): the leader's deadline was pushed on; without, ~500 ms left.
    const remainingMs = server.core.leases.remainingMs(held.id) ?? 0;
    assert.ok(remainingMs > 1200, `kept alive by its owner: ${remainingMs} ms left; `
      + String(held.signal.reason));
    await held.revoke();
    await bob.leases.revoke(lease.id);
  });

  test('the client renews its token before it expires, and re-logs after a revocation',
    async () => {
      const bob = client('bob');
      await bob.kv.put('app/renew', '1');
      // Past the token's TTL: the client logged in again on its own (at 3/4 of the TTL).
      await new Promise((resolve) => setTimeout(resolve, TOKEN_TTL_MS + 200));
      await bob.kv.put('app/renew', '2');
      const old = await login('bob');
      await client(undefined).authCall('user-passwd', { name: 'bob', password: 'bobpw' })
        .catch((error: { code?: string }) => assert.equal(error.code, 'CONCLAVE_INVALID_TOKEN'));
      const root = client('root');
      await root.authCall('user-passwd', { name: 'bob', password: 'bobpw' });
      assert.equal(codeOf(await post('/v1/kv/range', { key: 'app/renew' }, old)),
        'CONCLAVE_INVALID_TOKEN', 'a new password ends the older tokens');
      // bob's client holds a revoked token: it re-logs on CONCLAVE_INVALID_TOKEN, transparently.
      assert.equal((await bob.kv.get('app/renew')).kv?.value, '2');
      const list = await root.authCall('user-list') as { users: string[] };
      assert.deepEqual(list.users, ['alice', 'bob', 'carol', 'root']);
      const notRoot = await rejection(bob.authCall('user-list'));
      assert.equal(notRoot.code, 'CONCLAVE_PERMISSION_DENIED');
    });
});
