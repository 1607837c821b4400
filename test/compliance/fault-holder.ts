/**
 * A holder process of the recipe fault suite (recipe-faults.suite.ts): campaigns in the
 * election `faults` on the backend named, and while it leads writes to the test's fenced
 * resource every 100 ms (first once as its announce step, then each time only while `held()`,
 * stamping the wall clock just before sending); campaigns again after a loss. One JSON line per event on stdout.
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
  // The announce step (Fence.announce, docs/elections.md): the resource knows this token before
  // the test hears of the election, so a resumed predecessor's late write is refused.
  await act(leadership);
  say({ e: 'elected', token: leadership.fencingToken });
  // held() right before each action, as docs/elections.md says: after a pause the stall is
  // seen at once, not at the library's next stall tick.
  while (leadership.held()) {
    await act(leadership);
    await new Promise((resolve) => setTimeout(resolve, ACT_EVERY_MS));
  }
  if (!leadership.signal.aborted) {
    await new Promise((resolve) => leadership.signal.addEventListener('abort', resolve,
      { once: true }));
  }
  say({ e: 'lost', token: leadership.fencingToken, reason: String(leadership.signal.reason) });
}
