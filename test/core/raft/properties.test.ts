/**
 * Goal: Raft's safety properties under arbitrary schedules on 3 nodes: election safety (at most
 * one leader per term), log matching, committed entries never change (and are applied once, in
 * order), plus liveness once the network heals. Method: fast-check generates interleavings of
 * message delivery in any order, drops, duplicates, ticks at random times, proposals and
 * crash-restarts (persistence is synchronous per Ready, as the contract demands); the harness
 * checkers and the node's own assertions run after every action. A mutant run shows the
 * property can fail.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { assertNever } from '../../../src/core/assert.js';
import type { NodeId } from '../../../src/core/ids.js';
import type { RaftMutants } from '../../../src/core/raft/index.js';
import { Cluster } from './harness.js';

type Action =
  | { readonly t: 'deliver'; readonly k: number }
  | { readonly t: 'settle' }
  | { readonly t: 'crash-before-persist'; readonly k: number }
  | { readonly t: 'drop'; readonly k: number }
  | { readonly t: 'duplicate'; readonly k: number }
  | { readonly t: 'tick'; readonly node: number; readonly dtMs: number }
  | { readonly t: 'fire'; readonly node: number }
  | { readonly t: 'propose'; readonly node: number }
  | { readonly t: 'restart'; readonly node: number };

const position = fc.nat({ max: 1000 });
const node = fc.nat({ max: 2 });
// Weights tuned so that most runs elect leaders in several terms and commit entries.
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 12, arbitrary: position.map((k) => ({ t: 'deliver', k }) as const) },
  { weight: 1, arbitrary: fc.constant({ t: 'settle' } as const) },
  { weight: 1, arbitrary: position.map((k) => ({ t: 'drop', k }) as const) },
  { weight: 1, arbitrary: position.map((k) => ({ t: 'duplicate', k }) as const) },
  { weight: 2, arbitrary: fc.record({ node, dtMs: fc.nat({ max: 400 }) })
    .map((a) => ({ t: 'tick', ...a }) as const) },
  { weight: 3, arbitrary: node.map((n) => ({ t: 'fire', node: n }) as const) },
  { weight: 3, arbitrary: node.map((n) => ({ t: 'propose', node: n }) as const) },
  { weight: 1, arbitrary: node.map((n) => ({ t: 'restart', node: n }) as const) },
  { weight: 1, arbitrary: position.map((k) => ({ t: 'crash-before-persist', k }) as const) },
);

const schedule = fc.array(action, { minLength: 50, maxLength: 200 });

function apply(c: Cluster, a: Action, counter: { proposals: number }): void {
  const id = (i: number): NodeId => c.ids[i] as NodeId;
  const at = (k: number): number => k % c.inFlight.length;
  switch (a.t) {
    case 'deliver':
      if (c.inFlight.length > 0) c.deliver(at(a.k));
      return;
    case 'settle':
      c.deliverAll();
      return;
    case 'crash-before-persist': {
      // The receiver handles the message, then crashes before its Ready is persisted.
      const m = c.inFlight.length > 0 ? c.deliver(at(a.k), { process: false }) : undefined;
      if (m === undefined || c.isCrashed(m.to)) return;
      c.processThenCrashBeforePersist(m.to);
      c.restart(m.to);
      return;
    }
    case 'drop':
      if (c.inFlight.length > 0) c.inFlight.splice(at(a.k), 1);
      return;
    case 'duplicate': {
      const m = c.inFlight[c.inFlight.length > 0 ? at(a.k) : 0];
      if (m !== undefined) c.inFlight.push(m);
      return;
    }
    case 'tick':
      c.nowMs += a.dtMs;
      c.tick(id(a.node));
      return;
    case 'fire': {
      const deadline = c.nodes.get(id(a.node))?.nextDeadlineMs() ?? Number.POSITIVE_INFINITY;
      if (Number.isFinite(deadline)) c.fire(id(a.node));
      return;
    }
    case 'propose':
      c.propose(id(a.node), `p${counter.proposals++}`);
      return;
    case 'restart':
      c.crash(id(a.node));
      c.restart(id(a.node));
      return;
    default:
      assertNever(a, 'action');
  }
}

/** Runs the schedule; returns the violations found (safety), then checks liveness. */
function run(seed: number, actions: readonly Action[], mutants: Partial<RaftMutants> = {}):
  string[] {
  const c = new Cluster({ seed, mutants });
  const counter = { proposals: 0 };
  for (const a of actions) {
    apply(c, a, counter);
    c.checkLogMatching();
    if (c.violations.length > 0) return c.violations;
  }
  // Liveness: once messages flow again, a leader emerges and commits on every node.
  c.runFor(3000);
  const leader = c.elect();
  c.propose(leader, 'final');
  c.runFor(500);
  const commits = c.ids.map((id) => c.node(id).status().commitIndex);
  assert.ok(commits.every((x) => x === commits[0]), `commit indexes differ: ${commits}`);
  assert.equal(commits[0], c.node(leader).status().lastIndex);
  c.checkLogMatching();
  return c.violations;
}

describe('raft: properties', () => {
  test('safety holds on 3 nodes under reordering, loss, duplication, ticks and restarts', () => {
    fc.assert(fc.property(fc.nat({ max: 1_000_000 }), schedule, (seed, actions) => {
      assert.deepEqual(run(seed, actions), []);
    }), { numRuns: 150 });
  });

  test('the same search finds the ackBeforeSync mutant', () => {
    // Crashes before persisting lose entries already acknowledged; the search notices (lost
    // commits or a follower that can no longer catch up). Measured: found within 4-89 runs
    // over fast-check seeds 1-10; the seed is fixed here so the test is deterministic.
    const result = fc.check(fc.property(fc.nat({ max: 1_000_000 }), schedule, (seed, actions) =>
      run(seed, actions, { ackBeforeSync: true }).length === 0),
    { numRuns: 300, seed: 42, endOnFailure: true });
    assert.equal(result.failed, true, 'the property search should catch the mutant');
  });
});
