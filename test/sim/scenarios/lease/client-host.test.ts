/**
 * Goal: a simulated client machine freezes and loses the network the way the election tests
 * need: while frozen nothing runs, and everything that became due (timers, messages) runs on
 * resume in the order it became due; a timer cancelled while queued never runs; a freeze begun
 * by queued work holds back the rest; a cut loses messages both ways and only for its length.
 * Method: two SimClientHosts on one SimNetwork, driven by the scheduler in virtual time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../../src/core/ids.js';
import { Prng } from '../../../../src/sim/prng.js';
import { Scheduler } from '../../../../src/sim/scheduler.js';
import { SimNetwork, NETWORK_FAULTS_NONE } from '../../../../src/sim/sim-network.js';
import { TraceHash } from '../../../../src/sim/trace-hash.js';
import { SimClientHost } from '../../../../src/sim/scenarios/lease/client-host.js';
import type { LeaseNetMessage } from '../../../../src/sim/scenarios/lease/core-protocol.js';

const CLOCK = { driftRate: 0, monotonicOffsetMs: 0, wallOffsetMs: 0 };

function pair(): { scheduler: Scheduler; a: SimClientHost; b: SimClientHost } {
  const scheduler = new Scheduler();
  const network = new SimNetwork<LeaseNetMessage>(scheduler, new Prng(1), new TraceHash(), {
    faults: { ...NETWORK_FAULTS_NONE, latencyMsMin: 1, latencyMsMax: 1 },
    describe: (m) => m.kind, sizeBytes: () => 1,
  });
  return { scheduler, a: new SimClientHost(nodeId('a'), scheduler, network, CLOCK),
    b: new SimClientHost(nodeId('b'), scheduler, network, CLOCK) };
}

function ping(id: string): LeaseNetMessage {
  return { kind: 'client', message: { kind: 'close', id } };
}

function idOf(m: LeaseNetMessage): string {
  return m.kind === 'client' ? m.message.id : m.kind;
}

describe('sim: scenarios: lease: client host', () => {
  test('a frozen client runs nothing; on resume what came due runs in order', () => {
    const { scheduler, a, b } = pair();
    const seen: string[] = [];
    a.transport.setHandler({ onMessage: (_from, m) => {
      seen.push(`msg ${idOf(m)} at ${scheduler.nowMs}`);
    } });
    a.processClock.setTimer(10, () => seen.push(`t10 at ${scheduler.nowMs}`));
    const cancelled = a.processClock.setTimer(30, () => seen.push('t30'));
    a.processClock.setTimer(50, () => seen.push(`t50 at ${scheduler.nowMs}`));
    a.pause(100);
    scheduler.schedule(19, () => b.transport.send(nodeId('a'), ping('m20')));
    scheduler.runUntil(99);
    assert.deepEqual(seen, [], 'nothing runs while frozen');
    cancelled.cancel(); // came due at 30, queued, cancelled before it ran
    scheduler.runUntil(200);
    assert.deepEqual(seen, ['t10 at 100', 'msg m20 at 100', 't50 at 100']);
    assert.equal(a.counts.pauses, 1);
    assert.equal(a.counts.pausedMs, 100);
  });

  test('work run on resume that freezes again holds back the rest', () => {
    const { scheduler, a } = pair();
    const seen: string[] = [];
    a.processClock.setTimer(10, () => {
      seen.push(`first at ${scheduler.nowMs}`);
      a.pause(50);
    });
    a.processClock.setTimer(20, () => seen.push(`second at ${scheduler.nowMs}`));
    a.pause(100);
    scheduler.runUntil(1_000);
    assert.deepEqual(seen, ['first at 100', 'second at 150']);
  });

  test('a cut loses messages both ways, and only while it lasts', () => {
    const { scheduler, a, b } = pair();
    const atA: string[] = [];
    const atB: string[] = [];
    const into = (seen: string[]) => ({ onMessage: (_from: unknown, m: LeaseNetMessage) => {
      seen.push(idOf(m));
    } });
    a.transport.setHandler(into(atA));
    b.transport.setHandler(into(atB));
    a.cut(100);
    assert.equal(a.isCut, true);
    a.transport.send(nodeId('b'), ping('out'));
    b.transport.send(nodeId('a'), ping('in'));
    scheduler.runUntil(100);
    assert.equal(a.isCut, false);
    a.transport.send(nodeId('b'), ping('out2'));
    b.transport.send(nodeId('a'), ping('in2'));
    scheduler.runUntil(200);
    assert.deepEqual(atA, ['in2']);
    assert.deepEqual(atB, ['out2']);
    assert.equal(a.counts.cutDropped, 2);
  });
});
