/**
 * One ExampleEshop service instance (catalog, cart, payment): a small HTTP process that the
 * supervisor starts and restarts. Health monitors poll GET /health.
 *
 *   GET  /health       200 { service, incarnation, pid }, unless the service hangs
 *   POST /admin/hang   from now on, /health never answers (the process stays up: a deadlock)
 *   POST /admin/exit   the process exits (a crash)
 *
 * Usage: service.ts --name cart [--port 0] [--incarnation 1] [--hang]
 * The incarnation counts the restarts (the supervisor passes it): monitors send the incarnation
 * they saw fail with a restart order, so an order for an instance already replaced is a no-op.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { emitEvent } from './events.js';
import { sendJson, watchParent } from './http.js';

const { values } = parseArgs({
  options: {
    name: { type: 'string' },
    port: { type: 'string', default: '0' },
    incarnation: { type: 'string', default: '1' },
    hang: { type: 'boolean', default: false },
  },
});
const name = values.name ?? '';
const incarnation = Number(values.incarnation);
const port = Number(values.port);
if (!/^[a-z][a-z0-9-]*$/.test(name) || !Number.isSafeInteger(incarnation) || incarnation < 1
  || !Number.isSafeInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write('usage: service.ts --name NAME [--port P] [--incarnation N] [--hang]\n');
  process.exit(2);
}

let hung = values.hang;

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  const route = `${request.method ?? ''} ${request.url ?? ''}`;
  if (route === 'GET /health') {
    // A hung service keeps the connection open and never answers, like a deadlocked one.
    if (!hung) sendJson(response, 200, { service: name, incarnation, pid: process.pid });
    return;
  }
  if (route === 'POST /admin/hang') {
    hung = true;
    sendJson(response, 200, { service: name, hung: true });
    return;
  }
  if (route === 'POST /admin/exit') {
    sendJson(response, 200, { service: name, exiting: true });
    response.once('finish', () => process.exit(1));
    return;
  }
  if (route === 'GET /') {
    sendJson(response, 200, { service: name, incarnation, shop: 'ExampleEshop' });
    return;
  }
  sendJson(response, 404, { error: `no route ${route}` });
});

server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  emitEvent(name, { kind: 'service-listening', port: bound });
});
watchParent(() => process.exit(0));
