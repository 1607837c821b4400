/**
 * recipe faults: Conclave. Goal: the same fault history as on etcd (recipe-faults.suite.ts)
 * over 3 `conclave server` processes (the built bin: needs dist/), heartbeat 50 ms, election
 * timeout 300 ms.
 */
import { describe } from 'node:test';
import { BUILT, RealCluster } from '../support/real-cluster.js';
import { runRecipeFaults } from './recipe-faults.suite.js';

if (!BUILT) {
  describe('recipe faults: conclave', { skip: 'dist/ not built (npm run build)' }, () => {});
} else {
  runRecipeFaults('conclave (3 server processes)', async () => {
    const cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 50, electionTimeoutMs: 300 });
    await cluster.waitForLeader();
    return {
      name: 'conclave', endpoints: cluster.endpoints,
      killLeader: async () => cluster.kill9(await cluster.waitForLeader()),
      stop: () => cluster.stop(),
    };
  });
}
