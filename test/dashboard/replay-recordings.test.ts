/**
 * `conclave sim --record` for the scenarios beyond Raft (lease, core, gossip, heartbeat): each
 * writes a recording whose rerun gave the plain run's trace hash (the command checks it and
 * says so when not), and the replay view's model (replay-model.ts, pure) loads it and reaches
 * its verdict step; a planted bug's recording (lease, claimWithoutLeaseRecheck, seed 4) shows
 * the checker that fired at its instant. Small sizes: a few simulated seconds each.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { nodeStateAt, ReplayModel } from '../../src/dashboard/web/replay-model.js';
import { recordingProblem, type SimRecording } from '../../src/sim/sim-recorder.js';
import { runCliInProcess } from '../cli/run-in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-record-'));

/** Runs `conclave sim ARGS --record FILE` in this process; returns the recording and output. */
async function record(name: string, args: string[]):
  Promise<{ code: number; out: string; recording: SimRecording }> {
  const file = join(dir, `${name}.json`);
  const run = await runCliInProcess(['sim', ...args, '--record', file]);
  const out = [...run.out, ...run.err].join('\n');
  // The rerun with a recorder gave the plain run's trace hash: no complaint, and the same hash.
  assert.doesNotMatch(out, /not deterministic/, out);
  const recording = JSON.parse(readFileSync(file, 'utf8')) as SimRecording;
  assert.equal(recordingProblem(recording), undefined);
  const hash = /^seed \d+ trace ([0-9a-f]+)/m.exec(out)?.[1];
  assert.equal(recording.traceHash, hash, out);
  assert.match(out, new RegExp(`recorded seed ${recording.seed} \\(${recording.messages.length} ` +
    `messages, ${recording.events.length} events`));
  return { code: run.code, out, recording };
}

/** Steps the model from 0 as "step ▶" does until `targetMs`; returns the steps taken. */
function stepTo(model: ReplayModel, targetMs: number): number {
  let t = 0;
  let steps = 0;
  while (t < targetMs) {
    t = model.nextStep(t);
    steps++;
    assert.ok(steps <= model.steps.length + 1, 'stepping never reached the target');
  }
  assert.equal(t, targetMs);
  return steps;
}

function count(recording: SimRecording, kind: string): number {
  return recording.events.filter((e) => e.kind === kind).length;
}

describe('conclave sim --record: lease, core, gossip, heartbeat; the replay model', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('lease: members with roles and terms, calls with their answers, every checker held',
    async () => {
      const { code, recording } = await record('lease', ['--scenario', 'lease', '--nodes', '3',
        '--seed', '1', '--safety-s', '3']);
      assert.equal(code, 0);
      assert.deepEqual(recording.members, ['n1', 'n2', 'n3']);
      // The clients (c…, r…) are nodes of the recording too, drawn apart from the members.
      assert.ok(recording.nodes.some((id) => id.startsWith('c')));
      assert.ok(count(recording, 'role') > 0);
      const ops = recording.events.filter((e) => e.kind === 'client');
      assert.ok(ops.some((e) => e.op.startsWith('lease-grant') && e.outcome.startsWith('ok')));
      assert.ok(ops.some((e) => e.op.startsWith('lease-keepalive')));
      const model = new ReplayModel(recording);
      assert.equal(model.verdictMs, undefined);
      const end = model.at(model.endMs);
      assert.equal(end.violations.length, 0);
      assert.ok(end.leadersByTerm.size > 0);
      assert.equal(end.nodes.get('c1')?.member, false);
      assert.equal(nodeStateAt(end.nodes.get('c1')!, model.endMs), 'client');
    });

  test('lease with a planted bug: the recording shows the checker that fired, at its instant',
    async () => {
      // docs/simulation.md: claimWithoutLeaseRecheck on seed 4 gives `VIOLATION term`.
      const { code, out, recording } = await record('lease-mutant', ['--scenario', 'lease',
        '--nodes', '3', '--seed', '4', '--mutant', 'claimWithoutLeaseRecheck']);
      assert.equal(code, 1, out);
      assert.match(out, /VIOLATION term/);
      const model = new ReplayModel(recording);
      const verdictMs = model.verdictMs;
      assert.ok(verdictMs !== undefined);
      stepTo(model, verdictMs);
      const before = model.at(model.previousStep(verdictMs));
      assert.equal(before.violations.length, 0);
      const at = model.at(verdictMs);
      assert.equal(at.violations[0]?.checker, 'term');
      assert.equal(at.violations[0]?.atMs, recording.violations[0]?.atMs);
    });

  test('core: members, KV calls with their answers, snapshots on, every checker held',
    async () => {
      const { code, recording } = await record('core', ['--scenario', 'core', '--nodes', '3',
        '--seed', '1', '--safety-s', '3']);
      assert.equal(code, 0);
      assert.deepEqual(recording.members, ['n1', 'n2', 'n3']);
      const ops = recording.events.filter((e) => e.kind === 'client');
      assert.ok(ops.some((e) => /^(put|range|txn|delete)/.test(e.op)));
      const model = new ReplayModel(recording);
      assert.equal(model.at(model.endMs).violations.length, 0);
      assert.ok(model.at(model.endMs).leadersByTerm.size > 0);
    });

  test('gossip: each member\'s standing, the emergent leader, bounded news', async () => {
    const { code, recording } = await record('gossip', ['--scenario', 'gossip', '--members',
      '8', '--seed', '3']);
    assert.equal(code, 0);
    assert.equal(recording.members?.length, 8);
    assert.ok(count(recording, 'crash') > 0);
    // News of a member only when it changes: far fewer than members × observers × changes.
    const news = recording.events.filter((e) => e.kind === 'member');
    assert.ok(news.some((e) => e.state === 'dead'));
    assert.ok(news.length < 400, `${news.length} member events`);
    const model = new ReplayModel(recording);
    assert.equal(model.verdictMs, undefined);
    const end = model.at(model.endMs);
    assert.equal(end.violations.length, 0);
    const leader = end.emergentLeaders[0];
    assert.ok(leader?.leader !== undefined, 'every member names one leader at the end');
    assert.ok(leader.generation > 0);
    // The first crash: the member is drawn down at once, then others take it for suspect/dead.
    const crash = recording.events.find((e) => e.kind === 'crash')!;
    if (crash.kind !== 'crash') throw new Error('unreachable');
    assert.equal(nodeStateAt(model.at(crash.atMs).nodes.get(crash.node)!, crash.atMs), 'down');
  });

  test('heartbeat: who suspects whom, by detector, every checker held', async () => {
    const { code, recording } = await record('heartbeat', ['--scenario', 'heartbeat',
      '--nodes', '4', '--seed', '2', '--duration-s', '60']);
    assert.equal(code, 0);
    assert.equal(recording.members?.length, 4);
    const suspicions = recording.events.filter((e) => e.kind === 'member'
      && e.state === 'suspect');
    assert.ok(suspicions.length > 0);
    const first = suspicions[0]!;
    if (first.kind !== 'member') throw new Error('unreachable');
    const model = new ReplayModel(recording);
    const at = model.at(first.atMs);
    assert.equal(at.nodes.get(first.node)?.suspectedBy.get(first.detector!)?.has(first.by), true);
    assert.equal(model.at(model.endMs).violations.length, 0);
    stepTo(model, model.endMs);
  });
});
