/**
 * server: lease endpoints — three real servers (startServer: TCP between members, WAL files,
 * HTTP client API) in one process on loopback: grant, keep-alive, time-to-live, list, put with
 * a lease, revoke, expiry deleting the key with a watch event, the pipelined keep-alive stream
 * (with its redirect from a follower), and the answers for bad requests. Method: plain fetch and
 * ws against the HTTP API as docs/api.md describes it; waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { parsePeerAddress, type PeerAddress } from '../../src/adapters/peer-address.js';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import { CLIENT_LIMITS_DEFAULTS } from '../../src/server/client-limits.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { SERVER_DEFAULTS, type ServerConfig } from '../../src/server/server-config.js';
import { waitFor } from '../support/real-cluster.js';
import { freePort } from '../support/ports.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-lease-http-'));
const servers: RunningServer[] = [];
// Election timeout 300 ms (so up to 600): the TTL minimum is 1856 ms. Generous for a test
// machine shared with other work: a stalled event loop must not cost the leader.
const TTL_MS = 2000;

const address = (port: number): PeerAddress => parsePeerAddress(`127.0.0.1:${port}`) as PeerAddress;

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function post(url: string, path: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' } });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

/** The leader, once every member knows it. */
async function leader(): Promise<RunningServer> {
  return await waitFor(async () => {
    const found = servers.find((s) => s.core.status().role === 'leader'
      && s.core.leases.leaderTerm !== undefined);
    const known = servers.every((s) => s.core.status().leaderId === found?.id);
    return known ? found : undefined;
  }, 10_000, 'a leader every member knows');
}

let sequence = 0;
const stamp = (): { clientId: string; sequence: number } => ({ clientId: 'http-test',
  sequence: ++sequence });

describe('server: lease endpoints', () => {
  before(async () => {
    const names = ['n1', 'n2', 'n3'].map(nodeId);
    const peers = new Map<NodeId, PeerAddress>();
    const clients = new Map<NodeId, PeerAddress>();
    for (const name of names) {
      peers.set(name, address(await freePort()));
      clients.set(name, address(await freePort()));
    }
    for (const name of names) {
      const config: ServerConfig = { name, dataDir: join(dir, name),
        peerAddress: peers.get(name) as PeerAddress,
        clientAddress: clients.get(name) as PeerAddress,
        cluster: peers, clientAddresses: clients, heartbeatMs: 30, electionTimeoutMs: 300,
        insecure: false, clusterName: 'lease-http-test', initialClusterToken: '',
        peerSecretFile: join(dir, 'peer-secret'),
        snapshotCount: SERVER_DEFAULTS.snapshotCount,
        snapshotCatchUpEntries: SERVER_DEFAULTS.snapshotCatchUpEntries,
        autoCompaction: SERVER_DEFAULTS.autoCompaction, limits: CLIENT_LIMITS_DEFAULTS };
      servers.push(await startServer(config, SILENT_LOGGER));
    }
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  test('grant, put with the lease, keep-alive, ttl, list, revoke: as docs/api.md says',
    async () => {
    const { clientUrl } = await leader();
    const grant = await post(clientUrl, '/v1/lease/grant', { ttlMs: TTL_MS, ...stamp() });
    assert.equal(grant.status, 200, JSON.stringify(grant.body));
    const leaseId = grant.body['leaseId'] as number;
    assert.deepEqual([grant.body['kind'], grant.body['ttlMs']], ['lease-grant', TTL_MS]);
    const put = await post(clientUrl, '/v1/kv/put', { key: 'svc/x', value: '1', lease: leaseId,
      ...stamp() });
    assert.equal(put.status, 200);
    const kept = await post(clientUrl, '/v1/lease/keepalive', { leaseId });
    assert.equal(kept.status, 200);
    assert.equal(kept.body['leaseId'], leaseId);
    assert.ok((kept.body['remainingMs'] as number) > TTL_MS - 100);
    const ttl = await post(clientUrl, '/v1/lease/ttl', { leaseId, keys: true });
    assert.deepEqual(ttl.body['keys'], ['svc/x']);
    const list = await (await fetch(`${clientUrl}/v1/lease/list`)).json() as
      { leases: { leaseId: number; keyCount: number }[] };
    assert.ok(list.leases.some((l) => l.leaseId === leaseId && l.keyCount === 1));
    const revoke = await post(clientUrl, '/v1/lease/revoke', { leaseId, ...stamp() });
    assert.deepEqual([revoke.status, revoke.body['deleted']], [200, 1]);
    const gone = await post(clientUrl, '/v1/lease/keepalive', { leaseId });
    assert.equal(gone.status, 404);
    assert.equal((gone.body['error'] as { code: string }).code, 'CONCLAVE_LEASE_EXPIRED');
  });

  test('bad requests: a short TTL names the minimum; a put on a missing lease is refused',
    async () => {
    const { clientUrl } = await leader();
    const short = await post(clientUrl, '/v1/lease/grant', { ttlMs: 100, ...stamp() });
    assert.equal(short.status, 400);
    assert.match((short.body['error'] as { message: string }).message, /at least 1856 ms/);
    const orphan = await post(clientUrl, '/v1/kv/put', { key: 'k', value: 'v', lease: 12345,
      ...stamp() });
    assert.equal((orphan.body['error'] as { code: string }).code, 'CONCLAVE_LEASE_EXPIRED');
    const noId = await post(clientUrl, '/v1/lease/keepalive', {});
    assert.equal(noId.status, 400);
  });

  test('a follower redirects lease calls and the keep-alive stream to the leader', async () => {
    const current = await leader();
    const follower = servers.find((s) => s !== current) as RunningServer;
    const redirected = await fetch(`${follower.clientUrl}/v1/lease/keepalive`, { method: 'POST',
      body: JSON.stringify({ leaseId: 1 }), redirect: 'manual' });
    assert.equal(redirected.status, 307);
    assert.equal(redirected.headers.get('location'), `${current.clientUrl}/v1/lease/keepalive`);
    const grant = await post(current.clientUrl, '/v1/lease/grant', { ttlMs: TTL_MS, ...stamp() });
    const leaseId = grant.body['leaseId'] as number;
    const ws = new WebSocket(`${follower.clientUrl}/v1/lease/stream`, { followRedirects: true });
    const answers: Record<string, unknown>[] = [];
    ws.on('message', (data) => answers.push(JSON.parse(String(data)) as Record<string, unknown>));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    for (let id = 1; id <= 50; id++) ws.send(JSON.stringify({ id, leaseId }));
    ws.send(JSON.stringify({ id: 51, leaseId: 999_999 }));
    await waitFor(async () => (answers.length === 51 ? true : undefined), 5000, '51 answers');
    ws.close();
    const ok = answers.filter((a) => a['remainingMs'] !== undefined);
    assert.equal(ok.length, 50);
    assert.deepEqual(new Set(ok.map((a) => a['id'])).size, 50);
    const refused = answers.find((a) => a['id'] === 51) as { error: { code: string } };
    assert.equal(refused.error.code, 'CONCLAVE_LEASE_EXPIRED');
  });

  test('an expired lease takes its key with it, and watchers see the delete', async () => {
    const { clientUrl } = await leader();
    const grantSentAtMs = performance.now();
    const grant = await post(clientUrl, '/v1/lease/grant', { ttlMs: TTL_MS, ...stamp() });
    const grantedAtMs = performance.now();
    const leaseId = grant.body['leaseId'] as number;
    const put = await post(clientUrl, '/v1/kv/put', { key: 'svc/y', value: '1', lease: leaseId,
      ...stamp() });
    const from = (put.body['revision'] as number) + 1;
    const watch = await fetch(`${clientUrl}/v1/watch?key=svc/y&fromRevision=${from}`);
    const reader = watch.body?.getReader();
    let text = '';
    while (!text.includes('"delete"')) {
      const chunk = await reader?.read();
      if (chunk === undefined || chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    await reader?.cancel();
    const endedAtMs = performance.now();
    assert.match(text, /"type":"delete".*"key":"svc\/y"/);
    // Never before TTL / (1 + ρ) after the grant was sent; soon after TTL from its answer.
    assert.ok(endedAtMs - grantSentAtMs >= TTL_MS / 1.01,
      `the key went ${endedAtMs - grantSentAtMs} ms after the grant was sent`);
    assert.ok(endedAtMs - grantedAtMs < TTL_MS + 1000,
      `the key went ${endedAtMs - grantedAtMs} ms after the grant was answered`);
  });
});
