/**
 * swim: member table. Goal: the randomized round-robin visits every live member once per
 * round (and never itself or the dead), sampling respects exclusions, the oldest live member
 * is tracked as members die, and expired dead records are forgotten. Method: a table of
 * records driven directly with a seeded Prng.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { incarnation, nodeId, type NodeId } from '../../../src/core/ids.js';
import { MemberTable } from '../../../src/core/swim/member-table.js';
import { memberAge } from '../../../src/core/swim/index.js';
import { Prng } from '../../../src/sim/prng.js';

function table(count: number): MemberTable {
  const t = new MemberTable(nodeId('m0'), new Prng(9));
  for (let i = 0; i < count; i++) {
    t.add({
      id: nodeId(`m${i}`), address: '', state: 'alive', incarnation: incarnation(1),
      age: memberAge(i + 1), generation: undefined, by: undefined, stateChangedMs: 0,
    });
  }
  return t;
}

describe('swim: member table', () => {
  test('each round probes every other live member exactly once', () => {
    const t = table(10);
    t.setState(t.get(nodeId('m3'))!, 'dead', 0);
    for (let round = 0; round < 3; round++) {
      const seen: NodeId[] = [];
      for (let i = 0; i < 8; i++) seen.push(t.nextProbeTarget(0, 1e9)!.id);
      assert.deepEqual([...seen].sort(), ['m1', 'm2', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9']);
    }
  });

  test('sampling returns distinct live members outside the exclusions', () => {
    const t = table(20);
    t.setState(t.get(nodeId('m5'))!, 'dead', 0);
    for (let i = 0; i < 50; i++) {
      const sample = t.sampleLive(3, [nodeId('m7')]).map((r) => r.id);
      assert.equal(new Set(sample).size, sample.length);
      for (const id of sample) assert.ok(!['m0', 'm5', 'm7'].includes(id), id);
    }
  });

  test('the oldest live member follows deaths and returns', () => {
    const t = table(4);
    assert.equal(t.oldestLive()?.id, 'm0');
    t.setState(t.get(nodeId('m1'))!, 'alive', 0);
    t.setState(t.get(nodeId('m0'))!, 'left', 0);
    assert.equal(t.oldestLive()?.id, 'm1');
    t.setState(t.get(nodeId('m1'))!, 'dead', 0);
    assert.equal(t.oldestLive()?.id, 'm2');
    t.setState(t.get(nodeId('m1'))!, 'alive', 0);
    assert.equal(t.oldestLive()?.id, 'm1');
  });

  test('dead records are forgotten at the start of a round once past retention', () => {
    const t = table(5);
    t.setState(t.get(nodeId('m2'))!, 'dead', 100);
    for (let i = 0; i < 10; i++) t.nextProbeTarget(500, 1000);
    assert.ok(t.get(nodeId('m2')) !== undefined, 'kept within retention');
    for (let i = 0; i < 10; i++) t.nextProbeTarget(2000, 1000);
    assert.equal(t.get(nodeId('m2')), undefined);
    assert.equal(t.size, 4);
    assert.equal(t.liveCount, 4);
  });
});
