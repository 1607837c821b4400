/**
 * client: the HTTP transport (src/adapters/http-client-transport.ts) — no port blocklist (a
 * member on a port fetch refuses, such as 6000, is reached), and TLS: HTTPS requests, watches
 * and the keep-alive stream over wss with `connect({ endpoints, tls: { ca } })`, a client
 * certificate for members that require one, an untrusted certificate refused with outcome
 * `failed` (nothing was sent), and the CLI's --cacert/--cert/--key.
 * Method: node:http and node:https servers in the test (the lease fake cluster: the real HTTP
 * API, watch hub and keep-alive stream); certificates made in the test with openssl.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { connect, type ConclaveClient, type ConnectOptions } from '../../src/client/index.js';
import { LeaseFakeCluster } from './lease-fake-cluster.js';
import { rejection, until } from '../support/conditions.js';
import { makeTestCerts, type TestCerts } from '../support/tls-certs.js';
import { runCliInProcess } from '../cli/run-in-process.js';

const FAST: Omit<ConnectOptions, 'endpoints'> = {
  requestTimeoutMs: 2000, retryDeadlineMs: 3000, backoffMsMin: 1, backoffMsMax: 20,
};

/** Ports fetch refuses ("bad port"): the first free one is used. */
const FETCH_BLOCKED_PORTS = [6000, 6566, 6665, 6666, 6667, 6668, 6669, 6697, 10080];

const clients: ConclaveClient[] = [];

function client(options: ConnectOptions): ConclaveClient {
  const c = connect({ ...FAST, transport: 'http', ...options });
  clients.push(c);
  return c;
}

async function freePort(candidates: readonly number[]): Promise<number | undefined> {
  for (const port of candidates) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createNetServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  return undefined;
}

const run = runCliInProcess;

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

describe('client: http transport', () => {
  test('a member on a port fetch refuses (6000, 10080, ...) is reached', async (t) => {
    const port = await freePort(FETCH_BLOCKED_PORTS);
    if (port === undefined) return t.skip(`none of ${FETCH_BLOCKED_PORTS.join(', ')} is free`);
    const server: Server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url === '/v1/kv/put'
        ? '{"kind":"put","revision":7}' : '{"id":"n1","role":"leader","term":3}');
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      const c = client({ endpoints: [`127.0.0.1:${port}`] });
      assert.equal((await c.kv.put('k', 'v')).revision, 7);
      assert.equal((await c.status()).leaderId, 'n1');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('client: http transport: TLS', () => {
  let certs: TestCerts;
  let cluster: LeaseFakeCluster;
  before(async () => {
    certs = makeTestCerts();
    cluster = await LeaseFakeCluster.start(3, { cert: certs.serverCert, key: certs.serverKey });
  });
  after(async () => {
    await cluster.stop();
    certs.remove();
  });

  test('HTTPS requests, a watch and keep-alives over wss, with the CA given', async () => {
    const c = client({ endpoints: cluster.endpoints, tls: { ca: certs.ca } });
    assert.ok(c.endpoints.every((e) => e.startsWith('https://127.0.0.1:')), c.endpoints.join());
    const put = await c.kv.put('tls/a', '1');
    const watch = c.watch({ prefix: 'tls/' }, { fromRevision: put.revision });
    await c.kv.put('tls/a', '2');
    const seen: string[] = [];
    for await (const event of watch) {
      seen.push(event.kv.value);
      if (seen.length === 2) break;
    }
    assert.deepEqual(seen, ['1', '2']);
    const lease = await c.grantLease({ ttlMs: 3000 });
    const seenBefore = cluster.keepAlivesSeen;
    await until(() => cluster.keepAlivesSeen >= seenBefore + 3, 15_000); // TTL/3, over wss
    assert.equal(lease.signal.aborted, false, String(lease.signal.reason));
    await lease.revoke();
  });

  test('a certificate the client does not trust: UNAVAILABLE, outcome failed', async () => {
    const c = client({ endpoints: cluster.endpoints.slice(0, 1), retryDeadlineMs: 300 });
    const plain = await rejection(c.kv.put('tls/b', 'v')); // http:// to an https server
    assert.equal(plain.code, 'CONCLAVE_UNAVAILABLE');
    const untrusted = client({ endpoints: cluster.endpoints.slice(0, 1), retryDeadlineMs: 300,
      tls: {} });
    const error = await rejection(untrusted.kv.put('tls/b', 'v'));
    assert.equal(error.code, 'CONCLAVE_UNAVAILABLE');
    assert.equal(error.outcome, 'failed', error.message);
    assert.match(error.message, /UNABLE_TO_VERIFY|certificate/i);
  });

  test('connect refuses an http:// endpoint with tls set, and a cert without its key', () => {
    assert.throws(() => connect({ endpoints: ['http://127.0.0.1:1'], tls: { ca: certs.ca } }),
      /endpoints\[0\].*http:\/\/ but TLS is configured/);
    assert.throws(() => connect({ endpoints: ['127.0.0.1:1'], tls: { cert: certs.clientCert } }),
      /tls\.cert,tls\.key/);
  });

  test('the CLI: --cacert turns TLS on; a bad file is a usage error naming the flag',
    async () => {
      const endpoints = ['--endpoints', cluster.endpoints.join(',')];
      const put = await run(['kv', 'put', 'tls/cli', 'v', '--cacert', certs.files.ca,
        ...endpoints]);
      assert.equal(put.code, 0, put.err.join('\n'));
      const get = await run(['kv', 'get', 'tls/cli', '--cacert', certs.files.ca, ...endpoints]);
      assert.deepEqual(get.out, ['v']);
      const leases = await run(['lease', 'list', '--cacert', certs.files.ca, ...endpoints]);
      assert.equal(leases.code, 0, leases.err.join('\n'));
      const missing = await run(['kv', 'get', 'x', '--cacert', '/nonexistent/ca.pem',
        ...endpoints]);
      assert.equal(missing.code, 2);
      assert.match(missing.err.join('\n'), /--cacert: cannot read \/nonexistent\/ca\.pem/);
      const half = await run(['kv', 'get', 'x', '--cert', certs.files.clientCert, ...endpoints]);
      assert.equal(half.code, 2);
      assert.match(half.err.join('\n'), /--cert needs --key/);
    });
});

describe('client: http transport: mutual TLS', () => {
  let certs: TestCerts;
  let cluster: LeaseFakeCluster;
  before(async () => {
    certs = makeTestCerts();
    cluster = await LeaseFakeCluster.start(1, { cert: certs.serverCert, key: certs.serverKey,
      ca: certs.ca, requestCert: true });
  });
  after(async () => {
    await cluster.stop();
    certs.remove();
  });

  test('a member that requires a client certificate: --cert/--key (and tls.cert/key) work',
    async () => {
      const c = client({ endpoints: cluster.endpoints,
        tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey } });
      assert.equal((await c.kv.put('mtls/a', '1')).kind, 'put');
      const lease = await c.grantLease({ ttlMs: 1000 });
      await lease.keepAlive();
      await lease.revoke();
      const cli = await run(['kv', 'get', 'mtls/a', '--cacert', certs.files.ca, '--cert',
        certs.files.clientCert, '--key', certs.files.clientKey, '--endpoints',
        cluster.endpoints.join(',')]);
      assert.deepEqual(cli.out, ['1'], cli.err.join('\n'));
      const without = client({ endpoints: cluster.endpoints, retryDeadlineMs: 300,
        tls: { ca: certs.ca } });
      assert.equal((await rejection(without.kv.get('mtls/a'))).code, 'CONCLAVE_UNAVAILABLE');
    });
});
