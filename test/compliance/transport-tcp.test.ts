/**
 * transport compliance: TcpTransport. Goal: the TCP peer transport keeps the Transport
 * contract, the same suite the simulator's network passes.
 * Method: the shared suite over two transports on 127.0.0.1 ephemeral ports; waits are
 * conditions with deadlines.
 */
import { runTransportCompliance } from './transport.suite.js';
import { NOBODY, tcpPair, waitFor } from '../adapters/real-net-helpers.js';

runTransportCompliance('TcpTransport', async () => {
  const { a, b } = await tcpPair();
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
