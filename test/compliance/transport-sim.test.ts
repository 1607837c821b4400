/**
 * transport compliance: SimNetwork. Goal: the simulator's network keeps the Transport contract
 * that the real adapters keep, so protocols tested in simulation rely on nothing more.
 * Method: the shared suite over a fault-free SimNetwork, the scheduler stepped until each
 * condition holds (failing when events run out first).
 */
import { nodeId } from '../../src/core/ids.js';
import { Prng } from '../../src/sim/prng.js';
import { Scheduler } from '../../src/sim/scheduler.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../../src/sim/sim-network.js';
import { TraceHash } from '../../src/sim/trace-hash.js';
import { runTransportCompliance, type TestMessage } from './transport.suite.js';

const STEPS_MAX = 1_000_000;

runTransportCompliance('SimNetwork', async () => {
  const scheduler = new Scheduler();
  const network = new SimNetwork<TestMessage>(scheduler, new Prng(11), new TraceHash(), {
    faults: NETWORK_FAULTS_NONE,
    describe: (m) => `${m.kind}#${m.seq}`,
    sizeBytes: (m) => 16 + m.body.length,
  });
  const a = network.attach(nodeId('a'));
  const b = network.attach(nodeId('b'));
  return {
    a,
    b,
    unknownPeer: nodeId('nobody'),
    runUntil: async (done, what) => {
      for (let steps = 0; !done(); steps++) {
        if (steps >= STEPS_MAX || !scheduler.step()) {
          throw new Error(`sim: no more events before: ${what}`);
        }
      }
    },
    dispose: () => undefined,
  };
});
