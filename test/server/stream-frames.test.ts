// server: stream frames — a request frame's optional `timeoutMs` (the client's deadline, as
// HTTP's conclave-timeout) is taken when it is an integer in range and refused, naming the
// field, otherwise (docs/protocol.md, "Requests").
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REQUEST_TIMEOUT_MS_MAX } from '../../src/adapters/request-deadline.js';
import { checkFrame } from '../../src/server/stream-frames.js';

const LIMIT = 1024;

describe('server: stream frames', () => {
  test('timeoutMs in range is carried; no timeoutMs leaves it out', () => {
    const frame = checkFrame({ id: 3, op: 'put', body: {}, timeoutMs: 800 }, 40, LIMIT);
    assert.equal(frame.kind, 'request');
    assert.equal(frame.kind === 'request' ? frame.timeoutMs : undefined, 800);
    const plain = checkFrame({ id: 4, op: 'put', body: {} }, 30, LIMIT);
    assert.equal(plain.kind === 'request' && !('timeoutMs' in plain), true);
  });

  test('timeoutMs out of range or not an integer is refused, naming the field', () => {
    for (const timeoutMs of [0, -1, 1.5, REQUEST_TIMEOUT_MS_MAX + 1, '800', null]) {
      const frame = checkFrame({ id: 5, op: 'range', body: {}, timeoutMs }, 40, LIMIT);
      assert.equal(frame.kind, 'bad', JSON.stringify(timeoutMs));
      assert.equal(frame.kind === 'bad' ? frame.id : undefined, 5);
      assert.match(frame.kind === 'bad' ? frame.error.message : '', /^timeoutMs: /);
      assert.equal(frame.kind === 'bad' ? frame.error.code : '', 'CONCLAVE_REQUEST_INVALID');
    }
  });
});
