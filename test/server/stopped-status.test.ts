/**
 * server: a stopped member reports no role. Goal: `/v1/status` of a member whose Raft stopped
 * (as after a fatal storage error, before its listeners close) answers 503 CONCLAVE_UNAVAILABLE
 * without a role, never the role it had; and `startServer` on a refused data dir throws with
 * nothing left listening. Method: one startServer in this process (one-member cluster), its
 * Raft stopped by hand; plain fetch; waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parsePeerAddress, type PeerAddress } from '../../src/adapters/peer-address.js';
import { nodeId } from '../../src/core/ids.js';
import { CoordError } from '../../src/errors.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import { startServer } from '../../src/server/server.js';
import { SERVER_DEFAULTS, type ServerConfig } from '../../src/server/server-config.js';
import { waitFor } from '../support/real-cluster.js';
import { freePort } from './member-process.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-stopped-status-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const address = (port: number): PeerAddress =>
  parsePeerAddress(`127.0.0.1:${port}`) as PeerAddress;

async function configFor(dataDir: string, token: string): Promise<ServerConfig> {
  const peer = address(await freePort());
  return { ...SERVER_DEFAULTS, name: nodeId('n1'), dataDir, peerAddress: peer,
    clientAddress: address(await freePort()), cluster: new Map([[nodeId('n1'), peer]]),
    clientAddresses: new Map(), heartbeatMs: 20, electionTimeoutMs: 200,
    initialClusterToken: token };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('server: a member whose Raft stopped answers /v1/status with 503 and no role', async () => {
  const server = await startServer(await configFor(join(dir, 'a'), 't'), SILENT_LOGGER);
  const url = server.clientUrl;
  await waitFor(async () => (await (await fetch(`${url}/v1/status`)).json() as
    { role?: string }).role === 'leader' ? true : undefined, 10_000, 'a leader');
  server.core.runtime.stop('storage failed (simulated)');
  const response = await fetch(`${url}/v1/status`);
  const body = await response.json() as Record<string, unknown>;
  assert.equal(response.status, 503);
  assert.equal(body['role'], undefined);
  assert.equal((body['error'] as { code?: string }).code, 'CONCLAVE_UNAVAILABLE');
  await server.stop();
});

test('server: startServer on another cluster\'s data dir throws, nothing listening', async () => {
  const first = await startServer(await configFor(join(dir, 'b'), 'one'), SILENT_LOGGER);
  await first.stop();
  const config = await configFor(join(dir, 'b'), 'two');
  const error = await startServer(config, SILENT_LOGGER).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof CoordError, String(error));
  assert.equal(error.code, 'CONCLAVE_DATA_DIR_FOREIGN');
  assert.equal(await listening(config.peerAddress.port), false);
  assert.equal(await listening(config.clientAddress.port), false);
});
