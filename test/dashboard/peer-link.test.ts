// A member reads only the head of a peer's feed frame (type and member) and forwards the rest
// as it came; a frame of another member, of an unknown type or over two lines is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFrame } from '../../src/dashboard/peer-link.js';

describe('dashboard: a peer\'s frame is read by its head', () => {
  it('takes a frame of the link\'s member, and refuses another member\'s or a bad one', () => {
    const text = JSON.stringify({ type: 'sample', member: 'n2', atMs: 1 });
    assert.deepEqual(parseFrame(text, 'n2'), { type: 'sample', member: 'n2', text });
    assert.equal(parseFrame(text, 'n3'), undefined, 'another member\'s frame');
    assert.equal(parseFrame(JSON.stringify({ type: 'evil', member: 'n2' }), 'n2'), undefined);
    assert.equal(parseFrame('{"type":"sample","member":"n2",\n"x":1}', 'n2'), undefined);
    assert.equal(parseFrame('{"member":"n2","type":"sample"}', 'n2'), undefined);
  });
});
