/**
 * A holder process of the recipe fault suite (recipe-faults.suite.ts): campaigns in the
 * election `faults` on the backend named, and while it leads writes to the test's fenced
 * resource every 100 ms (only while its leadership's signal has not aborted, stamping the wall
 * clock just before sending); campaigns again after a loss. One JSON line per event on stdout.
 * Not a test file itself.
 *
 *   node --import tsx test/compliance/fault-holder.ts <conclave|etcd> <endpoints> <url> <id>
 */
import { request } from 'node:http';
import { connect, type Leadership } from '../../src/client/index.js';

const [backend, endpointList, resourceUrl, id] = process.argv.slice(2);
const TTL_MS = 4_000;
const ACT_EVERY_MS = 100;
const endpoints = (endpointList ?? '').split(',');
const options = { endpoints, leaseMarginMs: 1_000 };
const client = backend === 'etcd' ? connect({ ...options, backend: 'etcd' }) : connect(options);

function say(event: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ id, at: Date.now(), ...event })}\n`);
}

function act(leadership: Leadership): Promise<void> {
  const body = JSON.stringify({ id, token: leadership.fencingToken, sentAt: Date.now() });
  return new Promise((resolve) => {
    const req = request(resourceUrl!, { method: 'POST', headers: { 'content-type':
      'application/json' } }, (res) => res.resume().on('end', () => resolve()));
    req.on('error', () => resolve());
    req.end(body);
  });
}

for (;;) {
  let leadership: Leadership;
  try {
    leadership = await client.election('faults').campaign(id!, { ttlMs: TTL_MS });
  } catch (error) {
    say({ e: 'campaign-failed', error: String(error) });
    await new Promise((resolve) => setTimeout(resolve, 200));
    continue;
  }
  say({ e: 'elected', token: leadership.fencingToken });
  while (!leadership.signal.aborted) {
    await act(leadership);
    await new Promise((resolve) => setTimeout(resolve, ACT_EVERY_MS));
  }
  say({ e: 'lost', token: leadership.fencingToken, reason: String(leadership.signal.reason) });
}
