/**
 * sim: host — crash, restart and pause of a simulated process.
 * Method: a tiny process that ticks on a timer and records messages; check what runs when.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../src/core/ids.js';
import { Prng } from '../../src/sim/prng.js';
import { Scheduler } from '../../src/sim/scheduler.js';
import { SimHost, type HostContext } from '../../src/sim/sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../../src/sim/sim-network.js';
import { SIM_STORAGE_DEFAULTS } from '../../src/sim/sim-storage.js';
import { TraceHash } from '../../src/sim/trace-hash.js';
import type { Transport } from '../../src/ports/transport.js';

describe('sim: host', () => {
  function setup() {
    const scheduler = new Scheduler();
    const network = new SimNetwork<string>(scheduler, new Prng(1), new TraceHash(), {
      faults: NETWORK_FAULTS_NONE, describe: (m) => m, sizeBytes: (m) => m.length,
    });
    const log: string[] = [];
    const factory = (context: HostContext<string>): { transport: Transport<string>; halt(): void } => {
      const tick = (): void => {
        log.push(`${context.id}#${context.restarts} tick@${scheduler.nowMs}`);
        context.timer.setTimer(10, tick);
      };
      context.timer.setTimer(10, tick);
      context.transport.setHandler({ onMessage: (from, m) => log.push(`${context.id} got ${m} from ${from}@${scheduler.nowMs}`) });
      return { transport: context.transport, halt: () => undefined };
    };
    const options = { clock: { driftRate: 0, monotonicOffsetMs: 0, wallOffsetMs: 0 }, storage: SIM_STORAGE_DEFAULTS };
    const a = new SimHost(nodeId('a'), scheduler, network, new Prng(2), options, factory);
    const b = new SimHost(nodeId('b'), scheduler, network, new Prng(3), options, factory);
    return { scheduler, log, a, b };
  }

  test('a crashed process runs no timers and gets no messages; a restart starts fresh', () => {
    const { scheduler, log, a, b } = setup();
    scheduler.runUntil(15);
    a.crash();
    b.process!.transport.send(nodeId('a'), 'lost');
    scheduler.runUntil(35);
    assert.ok(!log.some((l) => l.startsWith('a#0 tick@20') || l.includes('lost')));
    a.restart();
    scheduler.runUntil(46);
    assert.ok(log.includes('a#1 tick@45'), log.join('\n'));
  });

  test('a paused process runs nothing until resumed, then catches up in order', () => {
    const { scheduler, log, a, b } = setup();
    scheduler.runUntil(5);
    a.pause(30);
    b.process!.transport.send(nodeId('a'), 'hello');
    scheduler.runUntil(34);
    assert.ok(!log.some((l) => l.startsWith('a#0')), log.join('\n'));
    scheduler.runUntil(36);
    const resumed = log.filter((l) => l.startsWith('a'));
    // The message arrived (about 5 ms) before the tick was due (10 ms): it runs first.
    assert.deepEqual(resumed, ['a got hello from b@35', 'a#0 tick@35']);
  });
});
