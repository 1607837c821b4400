/**
 * recipe faults: etcd. Goal: the election recipe over etcd keeps one holder acting at a time
 * under kill -9 and SIGSTOP of the holder and kill -9 of etcd's leader (recipe-faults.suite.ts).
 * Method: a real 3-member etcd (heartbeat 50 ms, election timeout 500 ms), installed by the
 * project's script when missing; skipped, saying why, only when it cannot be.
 */
import { connect } from '../../src/client/index.js';
import { deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { waitFor } from '../support/real-cluster.js';
import { ensureEtcdInstalled, RealEtcd } from '../support/real-etcd.js';
import { runRecipeFaults } from './recipe-faults.suite.js';

const missing = ensureEtcdInstalled();

if (missing !== undefined) {
  console.log(`# SKIP recipe faults on etcd: ${missing}`);
} else {
  runRecipeFaults('etcd (3 members, real processes)', async () => {
    const etcd = await RealEtcd.start({ members: 3 });
    const client = connect({ backend: 'etcd', endpoints: etcd.endpoints });
    const leaderUrl = async (): Promise<string | undefined> => {
      const status = await client.status().catch(() => undefined);
      const leader = status?.members.find((m) => m.id === status.leaderId);
      return leader?.clientUrl;
    };
    await waitFor(leaderUrl, deadlineMs(PROCESS_START_MS_IDLE), 'an etcd leader');
    return {
      name: 'etcd', endpoints: etcd.endpoints,
      killLeader: async () => {
        const url = await waitFor(leaderUrl, deadlineMs(PROCESS_START_MS_IDLE), 'the leader');
        const member = etcd.members.find((m) => url.endsWith(m.clientHostPort));
        if (member === undefined) throw new Error(`no member serves ${url}`);
        etcd.kill(member);
      },
      stop: async () => {
        client.close();
        etcd.stop();
      },
    };
  });
}
