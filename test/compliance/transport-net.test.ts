/**
 * transport compliance: NetTransport. Goal: the gossip transport (TCP stream, UDP datagrams on
 * one port) keeps the Transport contract, the same suite the simulator's network passes.
 * Method: the shared suite over two transports on 127.0.0.1 ephemeral ports; waits are
 * conditions with deadlines.
 */
import { runTransportCompliance } from './transport.suite.js';
import { NOBODY, netPair, waitFor } from '../adapters/real-net-helpers.js';

runTransportCompliance('NetTransport', async () => {
  const { a, b } = await netPair();
  return {
    a,
    b,
    unknownPeer: NOBODY,
    runUntil: (done, what) => waitFor(done, what),
    dispose: () => {
      a.close();
      b.close();
    },
  };
});
