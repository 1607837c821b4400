/**
 * client compliance: the Conclave backend. Goal: the client over HTTP passes the suite it
 * passes on etcd (client.suite.ts).
 * Method: a real cluster of 3 `conclave server` processes (the built bin: needs dist/),
 * heartbeat 50 ms and election timeout 300 ms (TTL minimum 1.86 s), on loopback.
 */
import { describe } from 'node:test';
import { connect } from '../../src/client/index.js';
import { BUILT, RealCluster } from '../support/real-cluster.js';
import { runClientCompliance } from './client.suite.js';

const TTL_MS = 4_000;
const LEASE_MARGIN_MS = 1_000;

if (!BUILT) {
  describe('client compliance: conclave', { skip: 'dist/ not built (npm run build)' }, () => {});
} else {
  runClientCompliance('conclave (3 server processes)', async () => {
    const cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 50, electionTimeoutMs: 300 });
    await cluster.waitForLeader();
    return { name: 'conclave',
      client: () => connect({ endpoints: cluster.endpoints, leaseMarginMs: LEASE_MARGIN_MS }),
      ttlMs: TTL_MS, leaseMarginMs: LEASE_MARGIN_MS, stop: () => cluster.stop() };
  });
}
