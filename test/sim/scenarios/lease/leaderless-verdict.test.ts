/**
 * sim: scenarios: lease: the simulated member answers a leader-only call it cannot serve with
 * the server's own verdict (src/runtime/core/leaderless.ts): CONCLAVE_NO_LEADER while an
 * election may be under way (a leader heard, or the member started, within 3 election
 * timeouts), CONCLAVE_NO_QUORUM after longer; a member that names a leader redirects. And the
 * lease and core scenarios see both verdicts, so the shipped client is run against both.
 * Method: SimMemberServer with a core whose status the test sets, its clock the test's; then
 * whole seeds, counting the verdicts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../../src/core/ids.js';
import type { ConsistentCore } from '../../../../src/runtime/core/index.js';
import { coreScenario, runCoreSeed } from '../../../../src/sim/scenarios/core/index.js';
import {
  leaseScenario, runLeaseSeed, SimMemberServer, type LeaseNetMessage,
} from '../../../../src/sim/scenarios/lease/index.js';
import type { Scenario, ScenarioOptions } from '../../../../src/sim/scenario.js';

const ELECTION_TIMEOUT_MS_MAX = 400;

interface FakeStatus { leaderId: string | undefined; leaderContactAgeMs: number }

function member(): { answer(): { code: string; leader?: string }; status: FakeStatus;
  clock: { nowMs: number }; server: SimMemberServer; core: ConsistentCore } {
  const clock = { nowMs: 1_000 };
  const status: FakeStatus = { leaderId: undefined, leaderContactAgeMs: Infinity };
  const core = { id: nodeId('n1'), status: () => ({ role: 'follower', term: 4, ...status }) };
  const sent: LeaseNetMessage[] = [];
  const server = new SimMemberServer({ member: nodeId('n1'), send: (_to, m) => sent.push(m),
    nowMs: () => clock.nowMs, observer: { handled: () => undefined, answered: () => undefined },
    timer: { setTimer: () => ({ cancel: () => undefined }) } as never, progressIntervalMs: 400,
    memberNowMs: () => clock.nowMs, electionTimeoutMsMax: ELECTION_TIMEOUT_MS_MAX });
  server.coreOpened(core as unknown as ConsistentCore);
  let n = 0;
  const answer = (): { code: string; leader?: string } => {
    server.receive(core as unknown as ConsistentCore, nodeId('c1'), { kind: 'call',
      id: `k${n++}`, request: { kind: 'put', key: 'k', value: 'v' } as never });
    const last = sent.at(-1);
    assert.ok(last?.kind === 'member' && last.message.kind === 'answer');
    const reply = last.message.reply;
    assert.ok(reply.kind === 'refused');
    return { code: reply.error.code,
      ...(reply.leader === undefined ? {} : { leader: reply.leader }) };
  };
  return { answer, status, clock, server, core: core as unknown as ConsistentCore };
}

function defaults(scenario: Scenario<unknown>): ScenarioOptions {
  return Object.fromEntries(scenario.flags.map((f) => [f.name, f.defaultValue]));
}

describe('sim: scenarios: lease: leaderless verdict', () => {
  test('a leader heard within the window: NO_LEADER; longer ago: NO_QUORUM', () => {
    const m = member();
    m.clock.nowMs += 10_000;
    m.status.leaderContactAgeMs = 3 * ELECTION_TIMEOUT_MS_MAX;
    assert.equal(m.answer().code, 'CONCLAVE_NO_LEADER');
    m.status.leaderContactAgeMs = 3 * ELECTION_TIMEOUT_MS_MAX + 1;
    assert.equal(m.answer().code, 'CONCLAVE_NO_QUORUM');
  });

  test('a member that never heard a leader: NO_LEADER for the window after it opened', () => {
    const m = member();
    m.clock.nowMs += 3 * ELECTION_TIMEOUT_MS_MAX;
    assert.equal(m.answer().code, 'CONCLAVE_NO_LEADER');
    m.clock.nowMs += 1;
    assert.equal(m.answer().code, 'CONCLAVE_NO_QUORUM');
    // A restart opens a new core: its uptime counts from there.
    m.server.coreOpened(m.core);
    assert.equal(m.answer().code, 'CONCLAVE_NO_LEADER');
  });

  test('a member that knows the leader names it', () => {
    const m = member();
    m.status.leaderId = 'n2';
    m.status.leaderContactAgeMs = 50;
    assert.deepEqual(m.answer(), { code: 'CONCLAVE_NOT_LEADER', leader: 'n2' });
  });

  test('the lease and core scenarios give both verdicts (seed 1 each)', async () => {
    const lease = await runLeaseSeed(1, defaults(leaseScenario));
    assert.deepEqual(lease.violations, []);
    assert.ok(lease.figures.leaderless.noLeader > 0, JSON.stringify(lease.figures.leaderless));
    assert.ok(lease.figures.leaderless.noQuorum > 0, JSON.stringify(lease.figures.leaderless));
    const summary = leaseScenario.summarize([lease], defaults(leaseScenario));
    assert.ok(summary.lines.some((l) => /\d+ CONCLAVE_NO_LEADER .* \d+ CONCLAVE_NO_QUORUM/.test(l)),
      summary.lines.join('\n'));
    const core = await runCoreSeed(1, defaults(coreScenario));
    assert.deepEqual(core.violations, []);
    assert.ok(core.figures.leaderless.noLeader > 0, JSON.stringify(core.figures.leaderless));
    assert.ok(core.figures.leaderless.noQuorum > 0, JSON.stringify(core.figures.leaderless));
  });
});
