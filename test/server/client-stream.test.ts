/**
 * server: the client stream's bounds per connection. Method: a ClientStreamHub on a real
 * loopback HTTP server in this process, over a fake core whose writes never commit (so
 * requests stay in flight until the request timeout answers them), and a raw WebSocket.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Packr, Unpackr } from 'msgpackr';
import WebSocket from 'ws';
import { KV_STORE_DEFAULTS, KvStore } from '../../src/core/kv/index.js';
import { nodeId } from '../../src/core/ids.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import type { ConsistentCore } from '../../src/runtime/core/consistent-core.js';
import { ClientStreamHub } from '../../src/server/client-stream.js';
import { clientDoor } from '../../src/server/http-api.js';
import { WatchHub } from '../../src/server/watch-hub.js';
import { deadlineMs } from '../support/deadlines.js';

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
const REQUEST_TIMEOUT_MS = 300;

describe('server: client stream bounds', () => {
  let server: Server;
  let hub: ClientStreamHub;
  let url = '';
  before(async () => {
    const store = new KvStore(KV_STORE_DEFAULTS);
    const core = { id: nodeId('n1'), store,
      status: () => ({ role: 'leader', term: 1, leaderId: nodeId('n1') }),
      write: () => undefined } as unknown as ConsistentCore;
    const door = clientDoor(core);
    hub = new ClientStreamHub({ watches: new WatchHub(store, door.limits), guard: door.guard,
      limits: door.limits, logger: SILENT_LOGGER, requestsInflightMax: 2,
      calls: { core, quota: door.quota, clientUrlOf: () => undefined, status: () => ({}),
        requestTimeoutMs: REQUEST_TIMEOUT_MS } });
    server = createServer();
    server.on('upgrade', (req, socket, head) => {
      if (!hub.handleUpgrade(req, socket, head)) socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/stream`;
  });
  after(async () => {
    hub.closeAll('test over');
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('past requestsInflightMax: OVERLOADED at once; a reused id refused; held ones answered',
    async () => {
      const ws = new WebSocket(url);
      const frames: Record<string, unknown>[] = [];
      ws.on('message', (data: Buffer) => unpackr.unpackMultiple(data,
        (value: unknown) => void frames.push(value as Record<string, unknown>)));
      await new Promise((resolve) => ws.once('open', resolve));
      const put = (id: number): Buffer => packr.pack({ id, op: 'put',
        body: { key: `k${id}`, value: 'v' } });
      ws.send(packr.pack({ id: 0, op: 'hello', body: { version: 1 } }));
      ws.send(Buffer.concat([put(1), put(2), put(1), put(3)]));
      const deadline = Date.now() + deadlineMs(2000);
      while (frames.filter((f) => f['id'] === 1 || f['id'] === 2).length < 3) {
        assert.ok(Date.now() < deadline, JSON.stringify(frames));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      ws.terminate();
      const codeOf = (id: number): unknown[] => frames.filter((f) => f['id'] === id)
        .map((f) => (f['error'] as { code?: unknown } | undefined)?.code ?? 'ok');
      assert.equal((frames[0]?.['ok'] as { requestsInflightMax?: number }).requestsInflightMax, 2);
      assert.deepEqual(codeOf(3), ['CONCLAVE_OVERLOADED']);
      // The second frame with id 1 is refused at once; the first is answered by the timeout.
      assert.deepEqual(codeOf(1), ['CONCLAVE_REQUEST_INVALID', 'CONCLAVE_TIMEOUT']);
      assert.deepEqual(codeOf(2), ['CONCLAVE_TIMEOUT']);
      const timeout = frames.find((f) => f['id'] === 2)?.['error'] as { outcome?: unknown };
      assert.equal(timeout.outcome, 'unknown');
    });

  test('a message of more than twice requestsInflightMax frames: OVERLOADED, stream closed',
    async () => {
      const ws = new WebSocket(url);
      const frames: Record<string, unknown>[] = [];
      ws.on('message', (data: Buffer) => unpackr.unpackMultiple(data,
        (value: unknown) => void frames.push(value as Record<string, unknown>)));
      const closed = new Promise<number>((resolve) => ws.once('close', resolve));
      await new Promise((resolve) => ws.once('open', resolve));
      ws.send(packr.pack({ id: 0, op: 'hello', body: { version: 1 } }));
      ws.send(Buffer.concat([1, 2, 3, 4, 5].map((id) => packr.pack({ id, op: 'status' }))));
      assert.equal(await closed, 1008);
      const last = frames.at(-1) as { id?: unknown; error?: { code?: unknown } };
      assert.equal(last.error?.code, 'CONCLAVE_OVERLOADED');
      assert.equal(last.id, undefined);
    });
});
