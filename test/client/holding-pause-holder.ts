/**
 * The lock holder of holding-pause.test.ts, a process of its own (not a test file itself): it
 * takes the lock `pause-demo`, then every 20 ms asks `lock.held()` and, only when it says
 * true, sends one fenced write (POST /write with its token) to the test's resource. Once
 * `held()` says false it sends nothing more, unlocks (which returns at once after a loss) and
 * exits. Lines on stdout: `acquired fencingToken=N`, `aborted name=.. lossReason=.. code=..`,
 * `not held sent=N unlockMs=N`.
 * argv: ENDPOINTS RESOURCE_URL TTL_MS MARGIN_MS REQUEST_TIMEOUT_MS RETRY_DEADLINE_MS
 */
import { Agent, request } from 'node:http';
import { connect, type HoldingEndedError } from '../../src/client/index.js';

/** How often the holder writes. Unit: ms. Why 20: the shape of the report. */
const WRITE_INTERVAL_MS = 20;

const [endpoints, resourceUrl, ttlMs, marginMs, timeoutMs, retryMs] = process.argv.slice(2);
const client = connect({ endpoints: endpoints!.split(','), leaseMarginMs: Number(marginMs),
  requestTimeoutMs: Number(timeoutMs), retryDeadlineMs: Number(retryMs) });
const lock = await client.lock('pause-demo', { ttlMs: Number(ttlMs), id: 'holder' });
process.stdout.write(`acquired fencingToken=${lock.fencingToken}\n`);
lock.signal.addEventListener('abort', () => {
  const reason = lock.signal.reason as HoldingEndedError;
  process.stdout.write(`aborted name=${reason.name} lossReason=${reason.lossReason} `
    + `code=${reason.code}\n`);
}, { once: true });

const agent = new Agent({ keepAlive: true, maxSockets: 4 });
let sent = 0;

/** HOLDING_PAUSE_CHECK=signal: the old advice (signal.aborted only), to measure the gap. */
const check = process.env['HOLDING_PAUSE_CHECK'] === 'signal'
  ? (): boolean => !lock.signal.aborted : (): boolean => lock.held();

function write(): void {
  if (!check()) {
    void finish();
    return;
  }
  sent++;
  const req = request(`${resourceUrl}/write`, { method: 'POST', agent,
    headers: { 'x-fencing-token': String(lock.fencingToken) } });
  req.on('response', (res) => res.resume());
  req.on('error', () => undefined); // the resource's answer does not matter to the holder
  req.end();
  setTimeout(write, WRITE_INTERVAL_MS);
}

async function finish(): Promise<void> {
  const startMs = performance.now();
  await lock.unlock();
  const unlockMs = Math.round(performance.now() - startMs);
  process.stdout.write(`not held sent=${sent} unlockMs=${unlockMs}\n`);
  agent.destroy();
  client.close();
}

setTimeout(write, WRITE_INTERVAL_MS);
