/**
 * client compliance: the etcd backend. Goal: `connect({ backend: 'etcd' })` gives the same
 * Client as Conclave's, passing the same suite (client.suite.ts).
 * Method: a real 3-member etcd (Debian's etcd-server, installed by scripts/install-etcd.sh when
 * missing; the suite is skipped, saying why, only when it cannot be installed), heartbeat 50 ms
 * and election timeout 500 ms; clients over the gRPC transport (EtcdClientTransport).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EtcdConnection } from '../../src/adapters/etcd/etcd-connection.js';
import { connect, type ConclaveClient } from '../../src/client/index.js';
import { CoordError } from '../../src/errors.js';
import { deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { waitFor } from '../support/real-cluster.js';
import { ensureEtcdInstalled, RealEtcd } from '../support/real-etcd.js';
import { makeTestCerts, type TestCerts } from '../support/tls-certs.js';
import { runClientCompliance } from './client.suite.js';

const missing = ensureEtcdInstalled();
/** Above etcd's minimum TTL (1.5 election timeouts: 1 s here) with room for a loaded machine. */
const TTL_MS = 4_000;
const LEASE_MARGIN_MS = 1_000;

if (missing !== undefined) {
  // node:test has no skipped describe with a reason across files: say it once, loudly.
  console.log(`# SKIP client compliance on etcd: ${missing}`);
} else {
  runClientCompliance('etcd (3 members, real processes)', async () => {
    const etcd = await RealEtcd.start({ members: 3 });
    const make = () => connect({ backend: 'etcd', endpoints: etcd.endpoints,
      leaseMarginMs: LEASE_MARGIN_MS });
    const probe = make();
    try {
      await waitFor(async () => (await probe.status().catch(() => undefined))?.leaderId
        !== undefined || undefined, deadlineMs(PROCESS_START_MS_IDLE), 'an etcd leader');
    } finally {
      probe.close();
    }
    return { name: 'etcd', client: make, ttlMs: TTL_MS, leaseMarginMs: LEASE_MARGIN_MS,
      stop: async () => etcd.stop() };
  });
}

/**
 * etcd-only: user/password auth. The token lives 2 s (`--auth-token-ttl 2`, etcd's clock): the
 * client's calls, watch and keep-alives must go on past its expiry with renewed tokens.
 */
describe('client on etcd: user/password auth with token renewal', { skip: missing ?? false },
  () => {
    let etcd: RealEtcd;
    let client: ConclaveClient;
    before(async () => {
      etcd = await RealEtcd.start({ members: 1, extraArgs: ['--auth-token-ttl', '2'] });
      const admin = new EtcdConnection({ endpoints: etcd.endpoints });
      try {
        await waitFor(() => admin.call('status', {}, { timeoutMs: 1000 })
          .then(() => true, () => undefined), deadlineMs(PROCESS_START_MS_IDLE), 'etcd');
        await admin.call('userAdd', { name: 'root', password: 'rootpw' });
        await admin.call('userGrantRole', { user: 'root', role: 'root' });
        await admin.call('authEnable', {});
      } finally {
        admin.close();
      }
      client = connect({ backend: 'etcd', endpoints: etcd.endpoints,
        auth: { user: 'root', password: 'rootpw' }, leaseMarginMs: LEASE_MARGIN_MS });
    });
    after(() => {
      client?.close();
      etcd?.stop();
    });

    test('without auth etcd refuses; with it, calls and a watch outlive the token', async () => {
      const anonymous = connect({ backend: 'etcd', endpoints: etcd.endpoints,
        retryDeadlineMs: 1000 });
      try {
        await assert.rejects(anonymous.kv.put('a', '1'), /user name is empty|auth|token/i);
      } finally {
        anonymous.close();
      }
      const put = await client.kv.put('auth/a', '1');
      const lease = await client.grantLease({ ttlMs: TTL_MS });
      const watch = client.watch({ prefix: 'auth/' }, { fromRevision: put.revision });
      const seen: string[] = [];
      const watching = (async () => {
        for await (const event of watch) {
          seen.push(event.kv.value);
          if (seen.length === 2) return;
        }
      })();
      // etcd's own clock expires the 2 s token: wait past it before the next calls.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      await client.kv.put('auth/a', '2');
      await watching;
      assert.deepEqual(seen, ['1', '2']);
      const kept = await lease.keepAlive();
      assert.equal(kept.leaseId, lease.id);
      assert.equal(lease.signal.aborted, false);
      await lease.revoke();
    });
  });

/** etcd-only: HTTPS with client certificates (etcd's --client-cert-auth). */
describe('client on etcd: TLS with a client certificate', { skip: missing ?? false }, () => {
  let etcd: RealEtcd;
  let certs: TestCerts;
  before(async () => {
    certs = makeTestCerts();
    const dir = certs.files.ca.slice(0, certs.files.ca.lastIndexOf('/'));
    etcd = await RealEtcd.start({ members: 1, clientTls: { certFile: `${dir}/server.pem`,
      keyFile: `${dir}/server.key`, caFile: certs.files.ca } });
  });
  after(() => {
    etcd?.stop();
    certs?.remove();
  });

  test('with the CA and a client certificate calls and watches work; without, they fail',
    async () => {
      const endpoints = etcd.endpoints.map((e) => `https://${e}`);
      const client = connect({ backend: 'etcd', endpoints, tls: { ca: certs.ca,
        cert: certs.clientCert, key: certs.clientKey } });
      try {
        const put = await waitFor(() => client.kv.put('tls/a', '1').catch(() => undefined),
          deadlineMs(PROCESS_START_MS_IDLE), 'etcd over TLS');
        assert.equal((await client.kv.get('tls/a')).kv?.value, '1');
        for await (const event of client.watch({ key: 'tls/a' },
          { fromRevision: put.revision })) {
          assert.equal(event.kv.value, '1');
          break;
        }
      } finally {
        client.close();
      }
      const noCert = connect({ backend: 'etcd', endpoints, tls: { ca: certs.ca },
        retryDeadlineMs: 1000 });
      try {
        await assert.rejects(noCert.kv.get('tls/a'), (error: unknown) =>
          error instanceof CoordError && error.code === 'CONCLAVE_UNAVAILABLE');
      } finally {
        noCert.close();
      }
    });
});
