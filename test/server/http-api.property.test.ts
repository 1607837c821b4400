/**
 * Goal: whatever a client sends to the HTTP port (any method, path, headers, body bytes,
 * framing and chunking), the member answers with a documented error code or a success, never
 * throws, and keeps serving. Method: a one-member server in this process (real sockets, real
 * WAL in a temp dir, short header and body timeouts); fast-check builds raw requests (valid-ish
 * bodies with wrong types and unknown fields, random JSON, random bytes and invalid UTF-8,
 * lying Content-Length, chunked bodies, random header lines, Expect: 100-continue), writes them
 * over a fresh connection in random pieces, and parses the answer. Every error's code must be
 * in docs/errors.md; every uncaught exception in the process fails the test.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { parsePeerAddress, type PeerAddress } from '../../src/adapters/peer-address.js';
import { nodeId } from '../../src/core/ids.js';
import { SILENT_LOGGER } from '../../src/ports/logger.js';
import { CLIENT_LIMITS_DEFAULTS } from '../../src/server/client-limits.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { SERVER_DEFAULTS } from '../../src/server/server-config.js';
import { clusterDeadlines } from '../support/deadlines.js';
import { waitFor } from '../support/real-cluster.js';
import { freePort } from '../support/ports.js';

const ERRORS_DOC = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));
/** The codes docs/errors.md documents (its table's first column). */
const DOCUMENTED = new Set([...readFileSync(ERRORS_DOC, 'utf8')
  .matchAll(/^\| `(CONCLAVE_[A-Z_]+)`/gm)].map((m) => m[1] as string));

const dir = mkdtempSync(join(tmpdir(), 'conclave-http-property-'));
let server: RunningServer;
let port = 0;
const uncaught: unknown[] = [];
const onUncaught = (error: unknown): void => {
  uncaught.push(error);
};

const address = (p: number): PeerAddress => parsePeerAddress(`127.0.0.1:${p}`) as PeerAddress;

interface Answer {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: string;
}

/** Writes `pieces` over a new connection and reads one answer (the first after any 1xx). */
function exchange(pieces: readonly Uint8Array[], head: boolean): Promise<Answer | 'closed'> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (answer: Answer | 'closed'): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(answer);
    };
    socket.on('error', () => finish(parse(data, head, true) ?? 'closed'));
    socket.on('close', () => finish(parse(data, head, true) ?? 'closed'));
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const answer = parse(data, head, false);
      if (answer !== undefined) finish(answer);
    });
    socket.on('connect', () => {
      void (async () => {
        for (const piece of pieces) {
          if (socket.destroyed) return;
          socket.write(piece);
          await new Promise((r) => setImmediate(r));
        }
      })();
    });
  });
}

/** One complete answer in `data`, skipping 100 Continue; undefined while incomplete. */
function parse(data: Buffer, head: boolean, closed: boolean): Answer | undefined {
  let rest = data;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const lines = rest.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(lines[0] ?? '')?.[1] ?? NaN);
    assert.ok(Number.isInteger(status), `a status line: ${lines[0]}`);
    const headers = new Map(lines.slice(1).map((l) => {
      const at = l.indexOf(':');
      return [l.slice(0, at).toLowerCase(), l.slice(at + 1).trim()] as const;
    }));
    const body = rest.subarray(end + 4);
    if (status === 100) {
      rest = body;
      continue;
    }
    if (head || status === 204 || status === 304) return { status, headers, body: '' };
    const length = headers.get('content-length');
    if (length !== undefined) {
      if (body.length < Number(length)) return undefined;
      return { status, headers, body: body.subarray(0, Number(length)).toString('utf8') };
    }
    if (headers.get('transfer-encoding') === 'chunked') {
      // A stream (a watch): its first line is enough.
      const text = body.toString('utf8');
      const firstLine = /^[0-9a-f]+\r\n([^\n]*\n)/.exec(text)?.[1];
      if (firstLine !== undefined) return { status, headers, body: firstLine };
      return closed ? { status, headers, body: '' } : undefined;
    }
    return closed ? { status, headers, body: body.toString('utf8') } : undefined;
  }
}

const POST_PATHS = ['/v1/kv/put', '/v1/kv/delete', '/v1/kv/txn', '/v1/kv/range',
  '/v1/kv/compact', '/v1/lease/grant', '/v1/lease/revoke', '/v1/lease/keepalive', '/v1/lease/ttl',
  // Authentication (auth off here: a random sequence may still add root and enable it).
  '/v1/auth/authenticate', '/v1/auth/status', '/v1/auth/enable', '/v1/auth/user/add',
  '/v1/auth/user/get', '/v1/auth/user/grant-role', '/v1/auth/role/add',
  '/v1/auth/role/grant-permission', '/v1/auth/role/revoke-permission'];
const GET_PATHS = ['/v1/lease/list', '/v1/status', '/metrics', '/v1/watch?key=a',
  '/v1/watch?key=a&prefix=maybe', '/v1/watch?key=p&prefix=1', '/v1/watch?fromRevision=-1&key=b',
  '/v1/watch?key=a&key=b', '/v1/watch', '/v1/watch?key=a&fromRevision=99999999999999999'];
const ODD_PATHS = ['/v1/kv/put?x=1', '/v1/../etc/passwd', '//v1/kv/put', '/%zz',
  '/v1/watch?key=%ff', '*', '/v1/status?x'];

/** Mostly a route with its own method (so bodies reach validation), sometimes anything. */
const route: fc.Arbitrary<{ method: string; path: string }> = fc.oneof(
  { weight: 6,
    arbitrary: fc.constantFrom(...POST_PATHS).map((path) => ({ method: 'POST', path })) },
  { weight: 2, arbitrary: fc.constantFrom(...GET_PATHS).map((path) => ({ method: 'GET', path })) },
  { weight: 2, arbitrary: fc.record({
    method: fc.constantFrom('POST', 'GET', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'BREW', 'G ET', ''),
    path: fc.oneof(fc.constantFrom(...POST_PATHS, ...GET_PATHS, ...ODD_PATHS),
      fc.stringMatching(/^\/[\x21-\x7e]{0,40}$/)) }) },
);

const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean(),
  fc.constant(null), fc.constant('serializable'), fc.constant(0), fc.constant(1));
const op = fc.record({ kind: fc.constantFrom('put', 'delete', 'range', 'nope'), key: scalar,
  value: scalar, prefix: scalar, limit: scalar, prevKv: scalar, lease: scalar, extra: scalar },
{ requiredKeys: ['kind'] });
const fieldsBody = fc.record({
  key: scalar, value: scalar, clientId: scalar, sequence: scalar, prevKv: scalar, lease: scalar,
  prefix: scalar, limit: scalar, revision: scalar, consistency: scalar, ttlMs: scalar,
  leaseId: scalar, keys: scalar, kind: scalar, nowMs: scalar, bogus: scalar,
  name: scalar, password: scalar, role: scalar, type: scalar, principal: scalar,
  compare: fc.oneof(fc.array(fc.record({ key: scalar, target: scalar, result: scalar,
    value: scalar, version: scalar }), { maxLength: 3 }), scalar),
  success: fc.oneof(fc.array(op, { maxLength: 3 }), scalar),
  failure: fc.oneof(fc.array(op, { maxLength: 3 }), scalar),
  ['__proto__']: scalar,
}, { requiredKeys: [] });

const utf8 = new TextEncoder();
const body = fc.oneof(
  { weight: 5, arbitrary: fieldsBody.map((b) => utf8.encode(JSON.stringify(b))) },
  { weight: 2,
    arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => utf8.encode(JSON.stringify(v))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constant(Uint8Array.of(...utf8.encode('{"key":"a","value":"'),
    0xff, 0xfe, ...utf8.encode('"}'))) },
  { weight: 1, arbitrary: fc.constant(new Uint8Array(0)) },
);

type Framing = 'length' | 'chunked' | 'none' | 'short' | 'long';
const framing: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('length' as const) },
  { weight: 3, arbitrary: fc.constant('chunked' as const) },
  { weight: 1, arbitrary: fc.constantFrom('none' as const, 'short' as const, 'long' as const) });

const headerLine = fc.oneof(
  fc.constantFrom('Content-Type: application/json', 'Expect: 100-continue',
    'Connection: keep-alive', 'X: \u00ff', 'Content-Length: abc', 'Transfer-Encoding: gzip',
    `X-Big: ${'b'.repeat(17 * 1024)}`, 'Bad Header', ': empty'),
  fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), fc.stringMatching(/^[\x20-\x7e]{0,20}$/))
    .map(([k, v]) => `${k}: ${v}`));
/** Usually no extra header: most requests should get past the HTTP parser. */
const headerLines = fc.oneof({ weight: 3, arbitrary: fc.constant([] as string[]) },
  { weight: 1, arbitrary: fc.array(headerLine, { minLength: 1, maxLength: 2 }) });

interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly body: Uint8Array;
  readonly framing: Framing;
  readonly headers: readonly string[];
  readonly cuts: readonly number[];
}

const rawRequest: fc.Arbitrary<RawRequest> = fc.record({ route, body, framing,
  headers: headerLines, cuts: fc.array(fc.nat(), { maxLength: 4 }) })
  .map(({ route: { method, path }, ...rest }) => ({ method, path, ...rest }));

/** One chunk of a chunked body: size line, data, line end. */
function chunkOf(data: Uint8Array): Uint8Array[] {
  return [utf8.encode(`${data.length.toString(16)}\r\n`), data, utf8.encode('\r\n')];
}

function bytesOf(r: RawRequest): Uint8Array[] {
  const lines = [`${r.method} ${r.path} HTTP/1.1`, 'Host: test', 'Connection: close', ...r.headers];
  let payload: Uint8Array = r.body;
  if (r.framing === 'length') lines.push(`Content-Length: ${r.body.length}`);
  if (r.framing === 'short') lines.push(`Content-Length: ${Math.max(0, r.body.length - 3)}`);
  if (r.framing === 'long') lines.push(`Content-Length: ${r.body.length + 10}`);
  if (r.framing === 'chunked') {
    lines.push('Transfer-Encoding: chunked');
    const parts: Uint8Array[] = [];
    let at = 0;
    for (const cut of [...r.cuts, r.body.length]) {
      const end = Math.min(r.body.length, at + (cut % 64) + 1);
      if (end > at) parts.push(...chunkOf(r.body.subarray(at, end)));
      at = end;
    }
    if (at < r.body.length) parts.push(...chunkOf(r.body.subarray(at)));
    parts.push(utf8.encode('0\r\n\r\n'));
    payload = Buffer.concat(parts);
  }
  const whole = Buffer.concat([utf8.encode(`${lines.join('\r\n')}\r\n\r\n`), payload]);
  // Written in pieces at the cut points: the parser must cope with any split.
  const points = [...new Set(r.cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const p of points) {
    if (p > from) pieces.push(whole.subarray(from, p));
    from = Math.max(from, p);
  }
  pieces.push(whole.subarray(from));
  return pieces;
}

function checkAnswer(answer: Answer, request: RawRequest): void {
  const where = `${request.method} ${request.path} (${request.framing}) → ${answer.status}`;
  if (answer.status === 200) return;
  assert.notEqual(answer.status, 500, where);
  if (request.method === 'HEAD') return; // no body to check
  let parsed: { error?: { code?: unknown; outcome?: unknown; message?: unknown } };
  try {
    parsed = JSON.parse(answer.body) as typeof parsed;
  } catch {
    return assert.fail(`${where}: the error body is not JSON: ${answer.body.slice(0, 200)}`);
  }
  const code = parsed.error?.code;
  assert.ok(typeof code === 'string' && DOCUMENTED.has(code),
    `${where}: undocumented ${String(code)}`);
  assert.ok(parsed.error?.outcome === 'failed' || parsed.error?.outcome === 'unknown', where);
  assert.equal(typeof parsed.error?.message, 'string', where);
}

describe('server: HTTP API under random and malformed requests (property)', () => {
  before(async () => {
    process.on('uncaughtException', onUncaught);
    const peer = address(await freePort());
    const client = address(await freePort());
    const n1 = nodeId('n1');
    server = await startServer({ name: n1, dataDir: join(dir, 'n1'), peerAddress: peer,
      clientAddress: client, cluster: new Map([[n1, peer]]),
      clientAddresses: new Map([[n1, client]]),
      heartbeatMs: 20, electionTimeoutMs: 200, insecure: false, clusterName: 'http-property',
      initialClusterToken: '',
      snapshotCount: SERVER_DEFAULTS.snapshotCount,
      snapshotCatchUpEntries: SERVER_DEFAULTS.snapshotCatchUpEntries,
      autoCompaction: SERVER_DEFAULTS.autoCompaction,
      limits: { ...CLIENT_LIMITS_DEFAULTS, headerTimeoutMs: 400, bodyTimeoutMs: 400,
        requestBytesMax: 16 * 1024, connectionBodyBytesMax: 32 * 1024 } }, SILENT_LOGGER);
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

  test('docs/errors.md lists the codes the API answers with', () => {
    for (const code of ['CONCLAVE_REQUEST_INVALID', 'CONCLAVE_LIMIT_EXCEEDED',
      'CONCLAVE_IDEMPOTENCY_MISMATCH', 'CONCLAVE_QUOTA_EXCEEDED', 'CONCLAVE_PROTOCOL']) {
      assert.ok(DOCUMENTED.has(code), code);
    }
  });

  test('every answer is a success or a documented error; nothing throws; the member serves',
    async () => {
      let answered = 0;
      let errors = 0;
      await fc.assert(fc.asyncProperty(rawRequest, async (request) => {
        const answer = await exchange(bytesOf(request), request.method === 'HEAD');
        // A request the server cannot even frame may end with a close after its answer.
        if (answer === 'closed') return;
        answered += 1;
        if (answer.status !== 200) errors += 1;
        checkAnswer(answer, request);
      }), { numRuns: 400 });
      assert.deepEqual(uncaught, []);
      assert.ok(answered > 300 && errors > 100 && answered - errors > 20,
        `${answered} answered, ${errors} errors`);
      // Still serving: a plain put is applied.
      const put = await exchange([utf8.encode('POST /v1/kv/put HTTP/1.1\r\nHost: t\r\n'
        + 'Connection: close\r\nContent-Length: 25\r\n\r\n{"key":"ok","value":"1"}\n')], false);
      assert.ok(put !== 'closed' && put.status === 200, JSON.stringify(put));
    });
});
