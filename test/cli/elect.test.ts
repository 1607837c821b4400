/**
 * cli: elect — issue #6's pause test, with real processes: two `conclave elect demo` processes
 * against a real 3-member cluster; the leader is frozen with SIGSTOP. The other candidate must
 * be elected only once the frozen leader's lease could have ended, with a larger fencing token
 * that a Fence accepts; when the frozen one runs again (SIGCONT) it must notice by itself that
 * it lost (its stall watch or its lease deadline), and a Fence must refuse its token. Also:
 * SIGTERM resigns and exits 0, and usage errors exit 2.
 * Method: RealCluster (built `conclave server` processes, heartbeat 50 ms, election timeout
 * 300 ms, so the TTL minimum is 1.86 s; we use 6 s, and a 1 s lease margin, so that a loaded
 * machine's scheduling delays never cost a candidate its lease) and `conclave elect` processes
 * from source (cli-process.ts); every wait is a condition with a deadline sized for a loaded
 * machine (test/support/deadlines.ts); the measured delays are printed as test diagnostics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, Fence, type ConclaveClient } from '../../src/client/index.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { recipeKeys } from '../../src/core/election/index.js';
import { CoordError } from '../../src/errors.js';
import { cliClientFlags, deadlineMs, PROCESS_START_MS_IDLE } from '../support/deadlines.js';
import { BUILT, RealCluster, waitFor } from '../support/real-cluster.js';
import { CliProcess, stopAll, type Line } from './cli-process.js';

const TTL_S = 6;
const RHO = 0.01; // the client's and servers' default clockRateErrorMax
/** The candidates' lease margin (and stall threshold): above a busy machine's event-loop lag. */
const MARGIN_MS = 1000;
/** A candidate process started from source, to its first line. Unit: ms. */
const STARTED_MS = deadlineMs(PROCESS_START_MS_IDLE);

let cluster: RealCluster | undefined;
let client: ConclaveClient | undefined;

function elect(id: string): CliProcess {
  return new CliProcess(['elect', 'demo', '--id', id, '--ttl', String(TTL_S),
    '--lease-margin-ms', String(MARGIN_MS), '--endpoints', cluster!.endpoints.join(','),
    ...cliClientFlags()]);
}

function field(line: Line, name: string): number {
  const value = new RegExp(`\\b${name}=(\\d+)`).exec(line.text)?.[1];
  assert.ok(value !== undefined, `no ${name} in ${line.text}`);
  return Number(value);
}

async function candidateCount(): Promise<number> {
  const prefix = recipeKeys('election', 'demo').candidatePrefix;
  return (await client!.kv.range(prefix)).count;
}

describe('cli: elect', { skip: BUILT ? false : 'dist/ not built (npm ci builds it)' }, () => {
  before(async () => {
    cluster = await RealCluster.start({ nodes: 3, heartbeatMs: 50, electionTimeoutMs: 300 });
    await cluster.waitForLeader();
    client = connect({ endpoints: cluster.endpoints });
  });
  after(async () => {
    await stopAll();
    client?.close();
    await cluster?.stop();
  });

  test('a leader frozen by SIGSTOP is succeeded only after its lease could end, and is fenced',
    async (t) => {
      const a = elect('a');
      const electedA = await a.line(/^elected name=demo id=a /, STARTED_MS);
      const b = elect('b');
      await b.line(/^campaigning name=demo id=b /, STARTED_MS);
      await waitFor(async () => (await candidateCount()) === 2 ? true : undefined,
        cluster!.deadlines.requestMs, 'b\'s candidate key');
      const stoppedAtMs = performance.now();
      a.signal('SIGSTOP');
      const electedB = await b.line(/^elected name=demo id=b /, deadlineMs(TTL_S * 1000));
      // The servers keep a's lease at least TTL/(1 + ρ) after the last keep-alive they got
      // from a; a sends one every TTL/3, so the last may have come up to TTL/3 before the stop.
      // b reads its own clock, which shows a real span r as at least r × (1 − ρ): b must wait
      // at least (TTL − TTL/3) × (1 − ρ)/(1 + ρ) after the stop, less a little for the time
      // between b's election and this process reading its line (which only adds).
      const handoverMs = electedB.atMs - stoppedAtMs;
      const boundMs = TTL_S * 1000 * (2 / 3) * (1 - RHO) / (1 + RHO) - 50;
      t.diagnostic(`SIGSTOP -> b elected: ${Math.round(handoverMs)} ms `
        + `(bound ${Math.round(boundMs)})`);
      assert.ok(handoverMs >= boundMs, `b elected ${handoverMs} ms after the stop`);
      const tokenA = field(electedA, 'fencingToken');
      const tokenB = field(electedB, 'fencingToken');
      assert.ok(tokenB > tokenA, `b's token ${tokenB} > a's ${tokenA}`);
      assert.equal(field(electedB, 'term'), field(electedA, 'term') + 1);
      const fence = new Fence();
      await fence.accept(tokenB);

      const continuedAtMs = performance.now();
      a.signal('SIGCONT');
      const lostA = await a.line(/^lost name=demo id=a /, deadlineMs(TTL_S * 1000));
      t.diagnostic(`SIGCONT -> a's lost line: ${Math.round(lostA.atMs - continuedAtMs)} ms `
        + `(${lostA.text})`);
      assert.match(lostA.text, /reason=(stalled|lease-ended) /);
      assert.equal(await a.exited(deadlineMs(1000)), 75);
      await assert.rejects(fence.accept(tokenA),
        (e: CoordError) => e.code === 'CONCLAVE_FENCING_TOKEN_STALE');

      b.signal('SIGTERM');
      assert.equal(await b.exited(deadlineMs(1000)), 0, b.text('stderr'));
      assert.match(b.text('stdout'), /^resigned name=demo id=b fencingToken=\d+ term=\d+$/m);
      assert.equal(await candidateCount(), 0, 'b resigned: its key is gone');
    });

  test('usage: no --id, a bad name, a TTL below the minimum', async () => {
    const run = async (args: string[]): Promise<{ code: number; err: string }> => {
      const err: string[] = [];
      const io: CliIo = { out: () => undefined, err: (l) => err.push(l), exitCode: 0 };
      return { code: await runCli(args, io), err: err.join('\n') };
    };
    const endpoints = ['--endpoints', cluster!.endpoints.join(','), ...cliClientFlags()];
    const noId = await run(['elect', 'demo', ...endpoints]);
    assert.equal(noId.code, 2);
    assert.match(noId.err, /--id ID is needed to campaign \(or --listen\)/);
    const badName = await run(['elect', 'a/b', '--id', 'x', ...endpoints]);
    assert.equal(badName.code, 2);
    assert.match(badName.err, /CONCLAVE_USAGE: election name: .* may only hold/);
    const short = await run(['elect', 'demo', '--id', 'x', '--ttl', '1', ...endpoints]);
    assert.equal(short.code, 1);
    assert.match(short.err, /CONCLAVE_REQUEST_INVALID: ttlMs must be at least \d+ ms/);
  });
});
