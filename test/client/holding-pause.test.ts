/**
 * Goal: issue 18's pause test, with real processes. A lock holder (its own process) writes to a
 * fenced resource every 20 ms, asking `lock.held()` right before each write; it is frozen with
 * SIGSTOP while a successor takes the lock over and announces its token to the resource; after
 * SIGCONT the holder must send NO request under its stale token (the resource counts them, and
 * its Fence would refuse them), because `held()` folds the stall check in even though the
 * holder's own 20 ms timer runs before the library's 100 ms stall tick. It must then end the
 * holding as `stalled` or `lease-ended` (an AbortError) and its unlock must return.
 * Method: RealCluster (built `conclave server` processes, heartbeat 50 ms, election timeout
 * 300 ms, TTL 6 s, a 1 s lease margin so a loaded machine's timer lateness never costs the
 * holder its lock before the freeze), the holder from source (holding-pause-holder.ts through
 * tsx), the resource an HTTP server in this process with a `Fence`; every wait is a condition
 * with a deadline (test/support/deadlines.ts). The pause lasts from SIGSTOP to the successor's
 * announce: several seconds, far past the margin. Three rounds, each with a fresh holder. (With
 * HOLDING_PAUSE_CHECK=signal in its environment the holder checks only `signal.aborted`, the
 * old advice: a measurement of the gap `held()` closes, not part of the test.)
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test, type TestContext } from 'node:test';
import {
  connect, Fence, parseFencingToken, type ConclaveClient, type Lock,
} from '../../src/client/index.js';
import { recipeKeys } from '../../src/core/election/index.js';
import { CliProcess, stopAll } from '../cli/cli-process.js';
import { deadlineMs, patienceMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { BUILT, RealCluster, waitFor } from '../support/real-cluster.js';

const TTL_MS = 6_000;
const MARGIN_MS = 1_000;
/**
 * Pauses per run. Why 3: the issue saw a stale write after 7 of 8 pauses without `held()`, so
 * three clean rounds say more than one, at about 7 s each.
 */
const ROUNDS = 3;
const HOLDER = fileURLToPath(new URL('./holding-pause-holder.ts', import.meta.url));

/** One request the resource received. */
interface Arrival {
  readonly path: string;
  readonly token: number;
  readonly atMs: number;
  readonly accepted: boolean;
}

/** The fenced resource: POST /write and POST /announce, token in `x-fencing-token`. */
class Resource {
  readonly arrivals: Arrival[] = [];
  readonly fence = new Fence();
  private readonly server: Server = createServer((req, res) => {
    void this.handle(req).then((accepted) => res.writeHead(accepted ? 204 : 409).end());
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  count(token: number, sinceMs = -Infinity): number {
    return this.arrivals.filter((a) => a.token === token && a.atMs >= sinceMs).length;
  }

  private async handle(req: IncomingMessage): Promise<boolean> {
    req.resume();
    const atMs = performance.now();
    const token = parseFencingToken(req.headers['x-fencing-token'] as string | undefined);
    const path = req.url ?? '';
    const step = path === '/announce' ? this.fence.announce(token) : this.fence.accept(token);
    const accepted = await step.then(() => true, () => false);
    this.arrivals.push({ path, token, atMs, accepted });
    return accepted;
  }
}

let cluster: RealCluster | undefined;
let client: ConclaveClient | undefined;
const resource = new Resource();
let resourceUrl = '';

async function candidateCount(): Promise<number> {
  return (await client!.kv.range(recipeKeys('lock', 'pause-demo').candidatePrefix)).count;
}

async function post(path: string, token: number): Promise<number> {
  const res = await fetch(`${resourceUrl}${path}`, { method: 'POST',
    headers: { 'x-fencing-token': String(token) } });
  return res.status;
}

describe('client: holding through a pause (real processes)',
  { skip: BUILT ? false : 'dist/ not built (npm run build)' }, () => {
    before(async () => {
      cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 50, electionTimeoutMs: 300 });
      await cluster.waitForLeader();
      client = connect({ endpoints: cluster.endpoints, leaseMarginMs: MARGIN_MS });
      resourceUrl = await resource.start();
    });
    after(async () => {
      await stopAll();
      client?.close();
      await resource.stop();
      await cluster?.stop();
    });

    /** One pause: a fresh holder, frozen while the test's client takes the lock over. */
    async function pauseRound(t: TestContext, round: number): Promise<void> {
      const holder = new CliProcess([cluster!.endpoints.join(','), resourceUrl, String(TTL_MS),
        String(MARGIN_MS), String(patienceMs(500)), String(deadlineMs(2000))], HOLDER);
      const acquired = await holder.line(/^acquired fencingToken=\d+$/,
        deadlineMs(PROCESS_START_MS_IDLE));
      const stale = Number(/fencingToken=(\d+)/.exec(acquired.text)![1]);
      await waitFor(async () => resource.count(stale) >= 5 ? true : undefined,
        deadlineMs(500), 'the holder\'s first writes');
      const succeeding: Promise<Lock> = client!.lock('pause-demo',
        { ttlMs: TTL_MS, id: 'successor' });
      await waitFor(async () => (await candidateCount()) === 2 ? true : undefined,
        cluster!.deadlines.requestMs, 'the successor\'s candidate key');

      holder.signal('SIGSTOP');
      const stoppedAtMs = performance.now();
      const successor = await succeeding;
      assert.ok(successor.fencingToken > stale, `${successor.fencingToken} > ${stale}`);
      assert.equal(await post('/announce', successor.fencingToken), 204);
      const announcedAtMs = performance.now();
      const beforeResume = resource.count(stale);

      holder.signal('SIGCONT');
      const resumedAtMs = performance.now();
      const done = await holder.line(/^not held /, deadlineMs(TTL_MS));
      assert.equal(await holder.exited(deadlineMs(1000)), 0, holder.text('stderr'));
      const aborted = await holder.line(/^aborted /, 0);
      t.diagnostic(`round ${round}: paused ${Math.round(resumedAtMs - stoppedAtMs)} ms; `
        + `${beforeResume} writes under token ${stale} before; ${aborted.text}; ${done.text}`);

      // Which cause is reported first is a race on resume: the stall tick, the lease's
      // deadline, or the watch event for the key the expired lease deleted (read from the socket
      // before the tick fires; seen once in a loaded CI run). Any of them ends the holding; what
      // matters is that nothing is sent under the stale token, asserted below.
      assert.match(aborted.text,
        /name=AbortError lossReason=(stalled|lease-ended|key-deleted) /);
      assert.match(aborted.text, /code=CONCLAVE_LEASE_EXPIRED$/);
      assert.equal(resource.count(stale, resumedAtMs), 0,
        `round ${round}: the resumed holder sent a request under its stale token`);
      assert.equal(resource.count(stale, announcedAtMs), 0);
      assert.equal(resource.arrivals.filter((a) => !a.accepted).length, 0,
        'the fence had nothing to refuse');

      assert.equal(await post('/write', successor.fencingToken), 204);
      assert.equal(successor.held(), true);
      await successor.unlock();
      assert.equal(successor.held(), false);
      assert.equal((successor.signal.reason as { code?: string }).code, 'CONCLAVE_RELEASED');
    }

    test('a holder SIGSTOPped while a successor takes over sends nothing under its stale token',
      async (t) => {
        for (let round = 1; round <= ROUNDS; round++) await pauseRound(t, round);
      });
  });
