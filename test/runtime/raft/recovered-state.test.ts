/**
 * Goal: a recovered Raft state the core cannot run from (here a term above TERM_MAX, which an
 * older version could write after one forged frame) is refused at start with a CoordError
 * naming the reason, never an assertion. Method: a RaftRuntime over a fake storage.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { logIndex, nodeId, term } from '../../../src/core/ids.js';
import { RAFT_DEFAULTS_LOCAL, TERM_MAX, type RaftMessage } from '../../../src/core/raft/index.js';
import { CoordError } from '../../../src/errors.js';
import type { Transport } from '../../../src/ports/transport.js';
import { RaftRuntime } from '../../../src/runtime/raft/raft-runtime.js';
import type { RaftStorage } from '../../../src/runtime/raft-storage.js';
import { Prng } from '../../../src/sim/prng.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimClock } from '../../../src/sim/sim-clock.js';

describe('runtime: raft: recovered state', () => {
  test('a recovered term above TERM_MAX is refused with CONCLAVE_STORAGE_CORRUPT', () => {
    const clock = new SimClock(new Scheduler(),
      { driftRate: 0, monotonicOffsetMs: 0, wallOffsetMs: 0 });
    const storage: RaftStorage = {
      recovered: { hardState: { term: term(2 ** 53 - 1), vote: undefined,
        commitIndex: logIndex(0) }, entries: [] },
      append: () => undefined, saveHardState: () => undefined, sync: (done) => done(),
      lastIndex: () => logIndex(0),
    };
    const transport: Transport<RaftMessage> = {
      localId: nodeId('n1'), send: () => undefined, sendDatagram: () => undefined,
      setHandler: () => undefined, close: () => undefined,
    };
    assert.throws(() => new RaftRuntime({ ...RAFT_DEFAULTS_LOCAL, id: nodeId('n1'),
      voters: [nodeId('n1')] }, { clock, timer: clock, transport, storage, random: new Prng(1),
      stateMachine: { apply: () => undefined } }), (error: unknown) => {
      assert.ok(error instanceof CoordError);
      assert.equal(error.code, 'CONCLAVE_STORAGE_CORRUPT');
      assert.match(error.message, new RegExp(`above TERM_MAX \\(${TERM_MAX}\\)`));
      return true;
    });
  });
});
