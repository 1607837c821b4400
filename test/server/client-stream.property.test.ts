/**
 * Goal: whatever a client sends on the multiplexed stream (/v1/stream: random bytes, text
 * messages, msgpack values that are not frames, frames with wrong ids, unknown ops, bodies
 * with wrong types and unknown fields, many frames per message, hellos of other versions, no
 * hello at all), the member answers every frame with a success or a documented error code,
 * never throws, and keeps serving. Method: a one-member server in this process (real sockets,
 * real WAL in a temp dir); fast-check builds the messages; each run opens a fresh stream, sends
 * them, then a status request, and reads every frame until the status answer or the close.
 * Every error's code must be in docs/errors.md; every uncaught exception fails the test.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { Packr, Unpackr } from 'msgpackr';
import WebSocket from 'ws';
import { parsePeerAddress, type PeerAddress } from '../../src/adapters/peer-address.js';
import { nodeId } from '../../src/core/ids.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import { CLIENT_LIMITS_DEFAULTS } from '../../src/server/client-limits.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { SERVER_DEFAULTS } from '../../src/server/server-config.js';
import { freePort } from '../adapters/real-net-helpers.js';
import { clusterDeadlines, deadlineMs } from '../support/deadlines.js';
import { waitFor } from '../support/real-cluster.js';

const ERRORS_DOC = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));
const DOCUMENTED = new Set([...readFileSync(ERRORS_DOC, 'utf8')
  .matchAll(/^\| `(CONCLAVE_[A-Z_]+)`/gm)].map((m) => m[1] as string));

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });
const SENTINEL_ID = 9_007_199_254_740_991;

const dir = mkdtempSync(join(tmpdir(), 'conclave-stream-property-'));
let server: RunningServer;
let port = 0;
const uncaught: unknown[] = [];
const onUncaught = (error: unknown): void => {
  uncaught.push(error);
};

const address = (p: number): PeerAddress => parsePeerAddress(`127.0.0.1:${p}`) as PeerAddress;

const OPS = ['hello', 'put', 'delete', 'txn', 'compact', 'range', 'lease-grant', 'lease-revoke',
  'lease-keepalive', 'lease-ttl', 'lease-list', 'status', 'watch', 'watch-cancel',
  'lease-stream', 'nope', '',
  // Authentication (auth off here): its calls and the stream's auth frame.
  'auth', 'auth-authenticate', 'auth-status', 'auth-enable', 'user-add', 'user-get',
  'role-add', 'role-grant-permission'];

const fieldValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(),
  fc.constant(null), fc.array(fc.anything(), { maxLength: 3 }),
  fc.uint8Array({ maxLength: 16 }), fc.constant(2 ** 60));
const body = fc.dictionary(fc.constantFrom('key', 'value', 'prefix', 'lease', 'leaseId',
  'ttlMs', 'revision', 'limit', 'consistency', 'clientId', 'sequence', 'compare', 'success',
  'failure', 'fromRevision', 'watchId', 'keys', 'prevKv', 'version', 'kind', 'nowMs',
  '__proto__', 'x', 'name', 'password', 'role', 'type', 'token', 'principal'), fieldValue,
{ maxKeys: 6 });
const id = fc.oneof(fc.nat({ max: 50 }), fc.constant(-1), fc.double(), fc.string(),
  fc.constant(undefined));
const frame = fc.record({ id, op: fc.oneof(fc.constantFrom(...OPS), fc.anything()),
  body: fc.oneof(body, fc.anything()) }, { requiredKeys: [] });

/** One message: msgpack frames back to back, random bytes, a truncated frame, or text. */
const message = fc.oneof(
  fc.array(frame, { minLength: 1, maxLength: 8 }).map((frames) => ({ kind: 'frames' as const,
    bytes: Buffer.concat(frames.map((f) => packr.pack(f))) })),
  fc.anything().map((value) => ({ kind: 'value' as const, bytes: packr.pack(value) })),
  fc.uint8Array({ minLength: 0, maxLength: 64 }).map((bytes) => ({ kind: 'bytes' as const,
    bytes: Buffer.from(bytes) })),
  frame.map((f) => {
    const bytes = packr.pack(f);
    return { kind: 'torn' as const, bytes: bytes.subarray(0, Math.max(1, bytes.length - 1)) };
  }),
  fc.string().map((text) => ({ kind: 'text' as const, bytes: Buffer.from(text) })),
);

const hello = fc.oneof(fc.constant({ id: 0, op: 'hello', body: { version: 1 } }),
  fc.constant({ id: 0, op: 'hello', body: { version: 2 } }), fc.constant(undefined), frame);

interface RunResult {
  readonly frames: Record<string, unknown>[];
  readonly closed: boolean;
}

/** Sends `messages` on a fresh stream, then `last` (a status); reads until its answer. */
function run(first: unknown, messages: readonly { kind: string; bytes: Buffer }[],
  last: { op: string; body: unknown } = { op: 'status', body: {} }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/stream`);
    const frames: Record<string, unknown>[] = [];
    const timer = setTimeout(() => reject(new Error(`no answer to the status request; got `
      + JSON.stringify(frames).slice(0, 500))), deadlineMs(5000));
    const finish = (closed: boolean): void => {
      clearTimeout(timer);
      ws.terminate();
      resolve({ frames, closed });
    };
    ws.on('message', (data: Buffer) => {
      unpackr.unpackMultiple(data, (value: unknown) => {
        frames.push(value as Record<string, unknown>);
        if ((value as { id?: unknown }).id === SENTINEL_ID) finish(false);
      });
    });
    ws.on('close', () => finish(true));
    ws.on('error', () => finish(true));
    ws.on('open', () => {
      if (first !== undefined) ws.send(packr.pack(first));
      for (const m of messages) ws.send(m.bytes, { binary: m.kind !== 'text' });
      ws.send(packr.pack({ id: SENTINEL_ID, ...last }));
    });
  });
}

describe('server: client stream under random and malformed frames (property)', () => {
  before(async () => {
    process.on('uncaughtException', onUncaught);
    const peer = address(await freePort());
    const client = address(await freePort());
    const n1 = nodeId('n1');
    server = await startServer({ name: n1, dataDir: join(dir, 'n1'), peerAddress: peer,
      clientAddress: client, cluster: new Map([[n1, peer]]),
      clientAddresses: new Map([[n1, client]]),
      heartbeatMs: 20, electionTimeoutMs: 200, insecure: false, clusterName: 'stream-property',
      initialClusterToken: '',
      snapshotCount: SERVER_DEFAULTS.snapshotCount,
      snapshotCatchUpEntries: SERVER_DEFAULTS.snapshotCatchUpEntries,
      autoCompaction: SERVER_DEFAULTS.autoCompaction,
      limits: { ...CLIENT_LIMITS_DEFAULTS, requestBytesMax: 16 * 1024,
        connectionBodyBytesMax: 32 * 1024 } }, SILENT_LOGGER);
    port = client.port;
    await waitFor(async () => (server.core.status().role === 'leader' ? true : undefined),
      clusterDeadlines({ heartbeatMs: 20, electionTimeoutMs: 200 }).leaderMs,
      'the member to lead');
  });
  after(async () => {
    process.off('uncaughtException', onUncaught);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('every frame is answered with a success or a documented error; the member serves',
    async () => {
      let errors = 0;
      let answered = 0;
      await fc.assert(fc.asyncProperty(hello, fc.array(message, { maxLength: 6 }),
        async (first, messages) => {
          const { frames } = await run(first, messages);
          for (const f of frames) {
            const error = f['error'] as { code?: unknown; outcome?: unknown } | undefined;
            if (error !== undefined) {
              errors += 1;
              assert.ok(DOCUMENTED.has(String(error.code)), `undocumented: ${String(error.code)}`);
              assert.ok(error.outcome === 'failed' || error.outcome === 'unknown');
            } else {
              assert.ok('ok' in f || 'watch' in f || f['end'] === true,
                `not an answer: ${JSON.stringify(f).slice(0, 200)}`);
              answered += 1;
            }
          }
        }), { numRuns: 300 });
      assert.ok(errors > 0 && answered > 0, `both kinds seen (${errors}, ${answered})`);
      assert.deepEqual(uncaught, []);
      // Still serving: a valid hello and put are answered.
      const { frames } = await run({ id: 0, op: 'hello', body: { version: 1 } }, [],
        { op: 'put', body: { key: 'after', value: 'ok' } });
      const put = frames.find((f) => f['id'] === SENTINEL_ID)?.['ok'] as { kind?: string };
      assert.equal(put?.kind, 'put', JSON.stringify(frames));
    });

  test('a hello of another version is refused with a clear error, then the stream closes',
    async () => {
      const { frames, closed } = await run({ id: 0, op: 'hello', body: { version: 2 } }, []);
      assert.equal(closed, true);
      const error = frames[0]?.['error'] as { code?: string; message?: string } | undefined;
      assert.equal(error?.code, 'CONCLAVE_PROTOCOL');
      assert.match(error?.message ?? '', /speaks version 1 .*asked for 2/);
    });
});
