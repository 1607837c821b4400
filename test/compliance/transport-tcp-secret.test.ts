/**
 * transport compliance: TcpTransport with the cluster secret. Goal: the loopback HMAC
 * handshake keeps the Transport contract, the same suite the plain TCP transport passes.
 * Method: the shared suite over two transports holding one random secret, on 127.0.0.1
 * ephemeral ports; waits are conditions with deadlines.
 */
import { randomBytes } from 'node:crypto';
import { runTransportCompliance } from './transport.suite.js';
import { NOBODY, tcpPair, waitFor } from '../adapters/real-net-helpers.js';

runTransportCompliance('TcpTransport (cluster secret)', async () => {
  const secret = randomBytes(32);
  const { a, b } = await tcpPair({}, () => ({ kind: 'secret', secret }));
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
