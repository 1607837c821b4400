/**
 * Goal: the shipped client (ConclaveClient on SimClientTransport and its machine's clock and
 * timers) does in the simulator what it does over HTTP: kv calls, a watch and leases reach the
 * members' real ConsistentCore; keep-alives follow a leadership transfer; a write nobody answers
 * ends `unknown`; a lease's local deadline moves with keep-alives and, abandoned, passes before
 * the lease ends; the recipe driver hands an election over in order with a larger token and the
 * next term, ends a holding frozen past its margin as `stalled` the moment it runs again, loses
 * a campaign whose waiter was cut off past its TTL — and under the mutant
 * `claimWithoutLeaseRecheck` a candidate takes leadership beside the rightful leader, which
 * no-overlap catches.
 * Method: a quiet LeaseWorld (3 members, no nemesis) driven call by call in virtual time
 * (SettleGate.runUntil), leaderships fed to a RecipeChecker.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  HoldingEndedError, HoldingReleasedError, LeadershipLostError, type Holding,
  type Leadership as ClientLeadership,
} from '../../../../src/client/index.js';
import { CoordError } from '../../../../src/errors.js';
import { Prng } from '../../../../src/sim/prng.js';
import { Scheduler } from '../../../../src/sim/scheduler.js';
import { SettleGate } from '../../../../src/sim/settle.js';
import { TraceHash } from '../../../../src/sim/trace-hash.js';
import { LeaseChecker } from '../../../../src/sim/scenarios/lease/lease-checker.js';
import {
  drawLeaseSettings, RECIPE_MARGIN_MS, type LeaseSettings,
} from '../../../../src/sim/scenarios/lease/lease-settings.js';
import { LeaseWorld, type SimClient } from '../../../../src/sim/scenarios/lease/lease-world.js';
import {
  RecipeChecker, type Leadership,
} from '../../../../src/sim/scenarios/lease/recipe-checker.js';

interface Fixture {
  readonly world: LeaseWorld;
  readonly settings: LeaseSettings;
  readonly checker: RecipeChecker;
}

async function quietWorld(seed: number, mutant?: string): Promise<Fixture> {
  const prng = new Prng(seed);
  const scheduler = new Scheduler();
  const settings = drawLeaseSettings(prng,
    { nodes: 3, clients: 2, 'safety-s': 10, 'recipe-clients': 3, mutant });
  const leases = new LeaseChecker(() => scheduler.nowMs, settings.timing, () => -Infinity);
  const world = new LeaseWorld(prng.fork(), scheduler, new TraceHash(), settings, leases,
    new SettleGate(scheduler));
  await world.gate.runUntil(5_000, () => world.leader() !== undefined);
  assert.ok(world.leader() !== undefined, 'no leader in 5 s');
  return { world, settings, checker: new RecipeChecker(() => scheduler.nowMs, false) };
}

/** Runs virtual time until `done()` (at most `forMs`), settling the clients' promises. */
async function runUntil(f: Fixture, forMs: number, done: () => boolean, what: string):
  Promise<void> {
  const { scheduler, gate } = f.world;
  await gate.runUntil(scheduler.nowMs + forMs, done);
  assert.ok(done(), `${what}: not within ${forMs} ms`);
}

async function runFor(f: Fixture, forMs: number): Promise<void> {
  await f.world.gate.runUntil(f.world.scheduler.nowMs + forMs);
}

/** Settles `promise` in virtual time (within 10 s) and returns its outcome. */
async function outcome<T>(f: Fixture, promise: Promise<T>):
  Promise<{ value?: T; error?: unknown }> {
  let result: { value?: T; error?: unknown } | undefined;
  promise.then((value) => { result = { value }; }, (error: unknown) => { result = { error }; });
  await runUntil(f, 10_000, () => result !== undefined, 'the call settled');
  return result!;
}

async function ok<T>(f: Fixture, promise: Promise<T>): Promise<T> {
  const result = await outcome(f, promise);
  assert.equal(result.error, undefined, String(result.error));
  return result.value as T;
}

interface Candidate {
  readonly client: SimClient;
  holding: Holding | undefined;
  leadership: Leadership | undefined;
  end: { reason: string; atMs: number } | undefined;
}

/** Recipe client `index` campaigns for election `leader` at the shortest recipe TTL. */
function campaign(f: Fixture, index: number): Candidate {
  const client = f.world.recipeClients[index]!;
  const candidate: Candidate = { client, holding: undefined, leadership: undefined,
    end: undefined };
  const ended = (reason: unknown): void => {
    const name = reason instanceof HoldingEndedError ? reason.lossReason : String(reason);
    candidate.end = { reason: name, atMs: f.world.scheduler.nowMs };
    if (candidate.leadership !== undefined) f.checker.ended(candidate.leadership);
  };
  client.client.election('leader').campaign(client.id, { ttlMs: f.settings.recipes.ttlMsMin })
    .then((leadership: ClientLeadership) => {
      candidate.holding = leadership;
      candidate.leadership = f.checker.began('election/leader', client.id,
        leadership.fencingToken, leadership.term);
      if (leadership.signal.aborted) ended(leadership.signal.reason);
      else leadership.signal.addEventListener('abort', () => ended(leadership.signal.reason));
    }, ended);
  return candidate;
}

const holding = (c: Candidate): boolean => c.holding !== undefined && !c.holding.signal.aborted;

/** The candidate is waiting on a predecessor: its key exists and it is not elected. */
function waiting(f: Fixture, c: Candidate): boolean {
  const leader = f.world.leader()?.process?.core;
  const keys = leader?.store.range({ key: 'conclave/election/leader/', prefix: true });
  return c.holding === undefined && keys?.kind === 'range'
    && keys.kvs.some((kv) => kv.value.includes(`"id":"${c.client.id}"`));
}

describe('sim: scenarios: lease: the shipped client', () => {
  test('kv calls, a watch and a lease reach the real core; a revoke deletes the key',
    async () => {
      const f = await quietWorld(1);
      const { client } = f.world.clients[0]!;
      const lease = await ok(f, client.grantLease({ ttlMs: f.settings.ttlMsMin }));
      const put = await ok(f, client.kv.put('svc/a', 'up', { lease: lease.id }));
      const read = await ok(f, client.kv.get('svc/a'));
      assert.equal(read.kv?.lease, lease.id);
      assert.equal((await ok(f, client.kv.cas('lock', undefined, 'c1'))).succeeded, true);
      assert.equal((await ok(f, client.kv.cas('lock', undefined, 'c1'))).succeeded, false);
      const seen: string[] = [];
      const watch = f.world.clients[1]!.client.watch({ prefix: 'svc/' },
        { fromRevision: put.revision + 1 });
      void (async () => {
        for await (const event of watch) seen.push(`${event.type} ${event.kv.key}`);
      })();
      await runFor(f, 500);
      assert.deepEqual(seen, [], 'no change yet');
      const revoked = await ok(f, lease.revoke());
      assert.equal(revoked.deleted, 1);
      await runUntil(f, 2_000, () => seen.length === 1, 'the watch saw the delete');
      assert.deepEqual(seen, ['delete svc/a']);
      watch.close();
      const gone = await outcome(f, client.leases.keepAliveOnce(lease.id));
      assert.equal((gone.error as CoordError).code, 'CONCLAVE_LEASE_EXPIRED');
    });

  test('after a leadership transfer, keep-alives follow to the new leader', async () => {
    const f = await quietWorld(2);
    const { client } = f.world.clients[0]!;
    const lease = await ok(f, client.grantLease({ ttlMs: f.settings.ttlMsMin }));
    const first = f.world.leader()!;
    assert.equal(client.leaderUrl, first.id);
    first.submit((p) => p.core.runtime.transferLeadership(undefined, () => undefined));
    await runUntil(f, 2_000, () => f.world.leader() !== undefined
      && f.world.leader() !== first, 'a new leader');
    const second = f.world.leader()!;
    await ok(f, lease.keepAlive());
    assert.equal(client.leaderUrl, second.id);
    await runFor(f, 3 * f.settings.ttlMsMin);
    assert.equal(lease.signal.aborted, false, String(lease.signal.reason));
  });

  test('with every member down, a write ends unknown', async () => {
    const f = await quietWorld(3);
    const { client } = f.world.clients[0]!;
    const write = outcome(f, client.kv.put('k', 'v'));
    await runFor(f, 0.05); // the write is on its way
    for (const host of f.world.hosts.values()) host.crash();
    const error = (await write).error as CoordError;
    assert.ok(error instanceof CoordError, String(error));
    assert.equal(error.outcome, 'unknown', error.message);
  });

  test('a lease\'s deadline moves with keep-alives; abandoned, it passes before the end',
    async () => {
      const f = await quietWorld(4);
      const { client } = f.world.clients[0]!;
      const ttlMs = f.settings.ttlMsMin;
      const lease = await ok(f, client.grantLease({ ttlMs }));
      const grantedDeadlineMs = lease.expiresAtMs;
      await runFor(f, 3 * ttlMs);
      assert.ok(lease.remainingMs > 0 && !lease.signal.aborted);
      assert.ok(lease.expiresAtMs > grantedDeadlineMs + 2 * ttlMs, 'the deadline did not move');
      lease.stopKeepAlive();
      const leader = f.world.leader()!;
      await runUntil(f, 3 * ttlMs, () => leader.process?.core.store.lease(lease.id) === undefined,
        'the lease ended');
      assert.equal(lease.signal.aborted, true, 'the holder still counted on an ended lease');
    });
});

describe('sim: scenarios: lease: the shipped recipe driver', () => {
  test('the next candidate waits on its predecessor, then leads with a larger token and term',
    async () => {
      const f = await quietWorld(11);
      const a = campaign(f, 0);
      await runUntil(f, 2_000, () => holding(a), 'A elected');
      const b = campaign(f, 1);
      await runUntil(f, 2_000, () => waiting(f, b), 'B waiting');
      // Kept alive at TTL/3, A holds through three TTLs; B waits all along.
      await runFor(f, 3 * f.settings.recipes.ttlMsMin);
      assert.ok(holding(a), `A lost: ${JSON.stringify(a.end)}`);
      assert.equal(b.holding, undefined);
      const resignedAtMs = f.world.scheduler.nowMs;
      void (a.holding as ClientLeadership).resign();
      await runFor(f, 0);
      assert.deepEqual(a.end, { reason: 'released', atMs: resignedAtMs });
      await runUntil(f, 1_000, () => holding(b), 'B elected after A resigned');
      const handoverMs = f.world.scheduler.nowMs - resignedAtMs;
      assert.ok(handoverMs < 200, `handover took ${handoverMs} ms`);
      assert.ok(b.leadership!.fencingToken > a.leadership!.fencingToken);
      assert.equal(b.leadership!.term, a.leadership!.term + 1);
      assert.deepEqual(f.checker.violations, []);
      assert.equal(f.checker.counts.handovers, 1);
    });

  test('a holder frozen past its margin ends as stalled the moment it runs again', async () => {
    const f = await quietWorld(12);
    const a = campaign(f, 0);
    await runUntil(f, 2_000, () => holding(a), 'A elected');
    const frozeAtMs = f.world.scheduler.nowMs;
    f.world.recipeClients[0]!.host.pause(RECIPE_MARGIN_MS + 300);
    await f.world.gate.runUntil(frozeAtMs + RECIPE_MARGIN_MS + 299);
    assert.ok(holding(a), 'a frozen holder cannot know');
    await f.world.gate.runUntil(frozeAtMs + RECIPE_MARGIN_MS + 301);
    assert.deepEqual(a.end, { reason: 'stalled', atMs: frozeAtMs + RECIPE_MARGIN_MS + 300 });
    const leaseId = a.holding!.leaseId;
    await runUntil(f, 1_000, () => f.world.leader()?.process?.core.store.lease(leaseId)
      === undefined, 'the stalled holder revoked its lease');
  });

  test('after a freeze, held() is false before any timer ran: the holder\'s own timer sees it',
    async () => {
      const f = await quietWorld(13);
      const a = campaign(f, 0);
      await runUntil(f, 2_000, () => holding(a), 'A elected');
      const host = f.world.recipeClients[0]!.host;
      const leadership = a.holding!;
      assert.equal(leadership.held(), true);
      assert.ok(leadership.remainingMs > 0);
      // The holder's next write timer, due 1 ms from now: it runs first after the freeze.
      const seen: { held: boolean; aborted: boolean; remainingMs: number }[] = [];
      host.processClock.setTimer(1, () => seen.push({ held: leadership.held(),
        aborted: leadership.signal.aborted, remainingMs: leadership.remainingMs }));
      // Frozen well past the TTL: at the resume its lease has ended at the servers.
      host.pause(2 * f.settings.recipes.ttlMsMin);
      await runUntil(f, 3 * f.settings.recipes.ttlMsMin, () => seen.length === 1,
        'the write timer ran');
      assert.deepEqual(seen, [{ held: false, aborted: true, remainingMs: 0 }]);
      const reason = leadership.signal.reason as LeadershipLostError;
      assert.ok(reason instanceof LeadershipLostError);
      assert.equal(reason.name, 'AbortError');
      assert.equal(reason.lossReason, 'stalled');
      assert.equal(reason.code, 'CONCLAVE_LEASE_EXPIRED');
    });

  test('heldWithoutClockCheck: the same frozen holder believes it holds', async () => {
    const f = await quietWorld(13, 'heldWithoutClockCheck');
    const a = campaign(f, 0);
    await runUntil(f, 2_000, () => holding(a), 'A elected');
    const host = f.world.recipeClients[0]!.host;
    const seen: boolean[] = [];
    host.processClock.setTimer(1, () => seen.push(a.holding!.held()));
    host.pause(2 * f.settings.recipes.ttlMsMin);
    await runUntil(f, 3 * f.settings.recipes.ttlMsMin, () => seen.length === 1,
      'the write timer ran');
    assert.deepEqual(seen, [true], 'the mutant must answer from the signal alone');
  });

  test('a resign is not a loss; an unlock after a loss settles at once', async () => {
    const f = await quietWorld(14);
    const a = campaign(f, 0);
    await runUntil(f, 2_000, () => holding(a), 'A elected');
    await ok(f, (a.holding as ClientLeadership).resign());
    const released = a.holding!.signal.reason as HoldingReleasedError;
    assert.ok(released instanceof HoldingReleasedError);
    assert.equal(released.name, 'AbortError');
    assert.equal(released.code, 'CONCLAVE_RELEASED');
    assert.equal(released.lossReason, 'released');
    const b = campaign(f, 1);
    await runUntil(f, 2_000, () => holding(b), 'B elected');
    // B is cut off until its lease ends: a loss, while no member can answer its revoke.
    f.world.recipeClients[1]!.host.cut(4 * f.settings.recipes.ttlMsMin);
    await runUntil(f, 2 * f.settings.recipes.ttlMsMin, () => b.end !== undefined, 'B lost');
    assert.equal(b.end?.reason, 'lease-ended');
    const calledAtMs = f.world.scheduler.nowMs;
    await ok(f, (b.holding as ClientLeadership).resign());
    assert.equal(f.world.scheduler.nowMs, calledAtMs, 'the resign waited for the cluster');
  });

  /** A leads, B waits on A, C waits on B; B is cut off for 3 TTLs, A resigns meanwhile. */
  async function waiterCutOff(mutant?: string):
    Promise<{ f: Fixture; b: Candidate; c: Candidate }> {
    const f = await quietWorld(21, mutant);
    const ttlMs = f.settings.recipes.ttlMsMin;
    const a = campaign(f, 0);
    await runUntil(f, 2_000, () => holding(a), 'A elected');
    const b = campaign(f, 1);
    await runUntil(f, 2_000, () => waiting(f, b), 'B waiting');
    const c = campaign(f, 2);
    await runUntil(f, 2_000, () => waiting(f, c), 'C waiting');
    await runFor(f, 100); // C's watch on B is open
    const cutEndMs = f.world.scheduler.nowMs + 3 * ttlMs;
    f.world.recipeClients[1]!.host.cut(3 * ttlMs);
    const leaseB = [...f.world.recipeClients[1]!.leases.keys()].at(-1)!;
    await runUntil(f, 2 * ttlMs, () => f.world.leader()?.process?.core.store.lease(leaseB)
      === undefined, 'B\'s lease expired at the servers');
    await runFor(f, 200); // C scans again: waits on A (under the mutant: C leads at once)
    void (a.holding as ClientLeadership).resign();
    await runUntil(f, 1_000, () => holding(c), 'C elected after A resigned');
    await f.world.gate.runUntil(cutEndMs + 8 * f.settings.tuning.electionTimeoutMsMax,
      () => b.end !== undefined || holding(b));
    return { f, b, c };
  }

  test('a waiter cut off past its TTL loses its campaign; no two holders at once', async () => {
    const { f, b, c } = await waiterCutOff();
    assert.equal(b.end?.reason, 'lease-ended');
    assert.equal(b.leadership, undefined);
    assert.ok(holding(c));
    assert.deepEqual(f.checker.violations, []);
  });

  test('claimWithoutLeaseRecheck: a candidate leads beside the rightful leader (no-overlap)',
    async () => {
      const { f } = await waiterCutOff('claimWithoutLeaseRecheck');
      assert.ok(f.checker.violations.some((v) => v.checker === 'no-overlap'),
        JSON.stringify(f.checker.violations));
    });
});
