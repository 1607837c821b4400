/**
 * transport compliance: TcpTransport over mutual TLS. Goal: peer TLS (certificates from
 * `conclave certs`) keeps the Transport contract, the same suite the plain TCP transport and the
 * simulator's network pass.
 * Method: the shared suite over two TLS transports on 127.0.0.1 ephemeral ports, each with a
 * member certificate from one test CA; waits are conditions with deadlines.
 */
import { runTransportCompliance } from './transport.suite.js';
import { NOBODY, tcpPair, waitFor } from '../adapters/real-net-helpers.js';
import { testCerts } from '../support/test-certs.js';

runTransportCompliance('TcpTransport (mutual TLS)', async () => {
  const certs = testCerts();
  const { a, b } = await tcpPair({}, (id) => certs.tls(id));
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
