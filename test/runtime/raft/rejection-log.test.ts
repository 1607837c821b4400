/**
 * Goal: rejected peer messages are logged at a bounded rate, and nothing is silently lost: at
 * most warnsPerWindowMax lines name a rejection each per window, one summary line then counts
 * the rest by reason. Method: the RejectionLog on a simulated clock and a recording logger.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId, term } from '../../../src/core/ids.js';
import type { LogFields, Logger } from '../../../src/ports/logger.js';
import {
  RejectionLog, type MessageRejectedEvent,
} from '../../../src/runtime/raft/rejection-log.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimClock } from '../../../src/sim/sim-clock.js';

function recorder(): { logger: Logger; lines: { fields: LogFields; message: string }[] } {
  const lines: { fields: LogFields; message: string }[] = [];
  const logger: Logger = {
    debug: () => undefined, info: () => undefined, error: () => undefined,
    warn: (fields, message) => lines.push({ fields, message }),
    child: () => logger,
  };
  return { logger, lines };
}

const rejected = (reason: MessageRejectedEvent['reason'], count = 1): MessageRejectedEvent => ({
  kind: 'message-rejected', reason, from: nodeId('evil'), messageKind: 'heartbeat',
  term: term(7), count,
});

describe('runtime: raft: rejection log', () => {
  test('a flood logs 5 lines and one summary per window, with every rejection counted', () => {
    const scheduler = new Scheduler();
    const clock = new SimClock(scheduler, { driftRate: 0, monotonicOffsetMs: 0, wallOffsetMs: 0 });
    const { logger, lines } = recorder();
    const log = new RejectionLog({ clock, timer: clock, logger });
    for (let i = 0; i < 1000; i++) {
      log.note(rejected(i % 2 === 0 ? 'unknown-sender' : 'second-leader'));
    }
    log.note(rejected('below-commit', 40));
    assert.equal(lines.length, 5);
    assert.deepEqual(lines[0]!.fields, { reason: 'unknown-sender', from: 'evil',
      messageKind: 'heartbeat', term: 7, count: 1 });
    scheduler.runUntil(1000);
    assert.equal(lines.length, 6);
    assert.deepEqual(lines[5]!.fields['suppressed'],
      { 'unknown-sender': 497, 'second-leader': 498, 'below-commit': 40 });
    assert.match(lines[5]!.message, /1035 more not logged/);
    // The next window names rejections again.
    log.note(rejected('unknown-sender'));
    assert.equal(lines.length, 7);
    assert.equal(lines[6]!.message, 'peer message rejected: unknown-sender');
  });

  test('a few rejections are each logged, with no summary', () => {
    const scheduler = new Scheduler();
    const clock = new SimClock(scheduler, { driftRate: 0, monotonicOffsetMs: 0, wallOffsetMs: 0 });
    const { logger, lines } = recorder();
    const log = new RejectionLog({ clock, timer: clock, logger });
    for (let i = 0; i < 3; i++) log.note(rejected('term-out-of-range'));
    scheduler.runUntil(5000);
    log.stop();
    assert.equal(lines.length, 3);
  });
});
