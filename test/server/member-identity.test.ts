/**
 * server: member identity. Goal: the cluster id depends on the cluster name, the token and the
 * member names (not their order), the identity file round-trips and any damage to it is
 * refused (never guessed), and a mismatch names both sides. Method: direct calls; fast-check
 * flips bytes of an encoded identity.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { nodeId } from '../../src/core/ids.js';
import {
  decodeIdentity, deriveClusterId, encodeIdentity, expectedIdentity, identityMismatch,
} from '../../src/server/member-identity.js';

const members = ['n1', 'n2', 'n3'].map(nodeId);
const inputs = { clusterName: 'conclave', token: 'prod-eu-1', members };

describe('server: member identity', () => {
  test('the cluster id: 16 hex digits, stable, order-free, and changed by every input', () => {
    const id = deriveClusterId(inputs);
    assert.match(id, /^[0-9a-f]{16}$/);
    assert.equal(deriveClusterId({ ...inputs, members: [...members].reverse() }), id);
    for (const changed of [{ ...inputs, token: 'prod-eu-2' }, { ...inputs, clusterName: 'x' },
      { ...inputs, members: members.slice(0, 2) }, { ...inputs, token: '' }]) {
      assert.notEqual(deriveClusterId(changed), id, JSON.stringify(changed));
    }
    // Fields are length-prefixed: moving a character between them changes the id.
    assert.notEqual(deriveClusterId({ ...inputs, clusterName: 'conclavep', token: 'rod-eu-1' }),
      id);
  });

  test('an identity round-trips as one checksummed JSON line', () => {
    const identity = expectedIdentity(nodeId('n2'), inputs);
    const bytes = encodeIdentity(identity);
    const text = new TextDecoder().decode(bytes);
    assert.match(text,
      /^\{"format":1,"clusterId":"[0-9a-f]{16}","member":"n2",.*"checksum":"[0-9a-f]{8}"\}\n$/);
    assert.deepEqual(decodeIdentity(bytes), identity);
  });

  test('any changed byte is refused, never read as another identity', () => {
    const bytes = encodeIdentity(expectedIdentity(nodeId('n2'), inputs));
    fc.assert(fc.property(fc.nat({ max: bytes.length - 2 }), fc.integer({ min: 1, max: 255 }),
      (at, flip) => {
        const damaged = bytes.slice();
        damaged[at]! ^= flip;
        assert.equal(typeof decodeIdentity(damaged), 'string');
      }), { numRuns: 500 });
    assert.equal(decodeIdentity(new Uint8Array(0)), 'not a JSON identity (damaged?)');
    assert.match(String(decodeIdentity(new TextEncoder().encode('{"format":2}'))), /format 2/);
  });

  test('a mismatch names both clusters, or both members', () => {
    const ours = expectedIdentity(nodeId('n1'), inputs);
    const foreign = expectedIdentity(nodeId('n1'), { ...inputs, token: 'other' });
    const cluster = identityMismatch(foreign, ours)!;
    assert.ok(cluster.includes(foreign.clusterId) && cluster.includes(ours.clusterId), cluster);
    const member = identityMismatch(expectedIdentity(nodeId('n2'), inputs), ours)!;
    assert.match(member, /belongs to member n2 of cluster [0-9a-f]{16}, not to n1/);
    assert.equal(identityMismatch(ours, ours), undefined);
  });
});
