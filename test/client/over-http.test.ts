/**
 * client: the client's tests again over HTTP/JSON (`connect({ transport: 'http' })`); run on
 * their own, the same files drive the multiplexed stream, connect()'s default. Method: the
 * selection is made before the test files load (transport-under-test.ts), in this process.
 */
import { selectTransport } from './transport-under-test.js';

selectTransport('http');
await import('./kv.test.js');
await import('./watch.test.js');
await import('./signal.test.js');
await import('./status.test.js');
await import('./election.test.js');
await import('./lease.test.js');
