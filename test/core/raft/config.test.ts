/**
 * Goal: RaftConfig validation reports every broken rule at once, and the named profiles are
 * valid. Method: direct calls on the profiles and on configs broken in several ways.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId } from '../../../src/core/ids.js';
import {
  RAFT_DEFAULTS_LAN, RAFT_DEFAULTS_LOCAL, RAFT_NO_MUTANTS, validateRaftConfig,
} from '../../../src/core/raft/index.js';
import type { RaftConfig } from '../../../src/core/raft/index.js';

const voters = ['n1', 'n2', 'n3'].map(nodeId);

describe('raft: config', () => {
  test('the LAN and LOCAL profiles are valid', () => {
    for (const tuning of [RAFT_DEFAULTS_LAN, RAFT_DEFAULTS_LOCAL]) {
      assert.deepEqual(validateRaftConfig({ ...tuning, id: nodeId('n1'), voters }), []);
    }
    assert.equal(RAFT_DEFAULTS_LAN.heartbeatIntervalMs, 100);
    assert.equal(RAFT_DEFAULTS_LAN.electionTimeoutMsMin, 1000);
    assert.equal(RAFT_DEFAULTS_LAN.electionTimeoutMsMax, 2000);
    assert.ok(Object.isFrozen(RAFT_DEFAULTS_LAN) && Object.isFrozen(RAFT_NO_MUTANTS));
  });

  test('validateRaftConfig lists every problem at once', () => {
    const config = {
      ...RAFT_DEFAULTS_LAN,
      id: nodeId('n9'),
      voters: [nodeId('n1'), nodeId('n1')],
      electionTimeoutMsMin: 500,
      electionTimeoutMsMax: 400,
      heartbeatIntervalMs: 300,
      inflightMessagesMax: 0,
      bytesPerMessageMax: 1.5,
      preVote: 'yes',
      mutants: { ...RAFT_NO_MUTANTS, ackBeforeSync: 1 },
    } as unknown as RaftConfig;
    const fields = validateRaftConfig(config).map((p) => p.field);
    assert.deepEqual(fields, [
      'voters',
      'id,voters',
      'electionTimeoutMsMin,electionTimeoutMsMax',
      'electionTimeoutMsMin,heartbeatIntervalMs',
      'inflightMessagesMax',
      'bytesPerMessageMax',
      'preVote',
      'mutants.ackBeforeSync',
    ]);
  });

  test('the leader-reset fields: a boolean, and a fraction in [0, 1)', () => {
    const base = { ...RAFT_DEFAULTS_LAN, id: nodeId('n1'), voters };
    const fields = (extra: object) => validateRaftConfig({ ...base, ...extra } as RaftConfig)
      .map((p) => p.field);
    assert.deepEqual(fields({ leaderResetDelayRatioMax: 0 }), []);
    assert.deepEqual(fields({ leaderResetDelayRatioMax: 0.99 }), []);
    assert.deepEqual(fields({ leaderResetDelayRatioMax: 1, preVoteOnLeaderReset: 'yes' }),
      ['preVoteOnLeaderReset', 'leaderResetDelayRatioMax']);
    assert.deepEqual(fields({ leaderResetDelayRatioMax: -0.1 }), ['leaderResetDelayRatioMax']);
    assert.equal(RAFT_DEFAULTS_LAN.preVoteOnLeaderReset, true);
    assert.equal(RAFT_DEFAULTS_LOCAL.leaderResetDelayRatioMax, 0.1);
  });

  test('a joining node lists itself as a learner; learners must not repeat or vote', () => {
    const n4 = nodeId('n4');
    assert.deepEqual(validateRaftConfig({ ...RAFT_DEFAULTS_LAN, id: n4, voters, learners: [n4] }), []);
    const fields = (learners: unknown) => validateRaftConfig({ ...RAFT_DEFAULTS_LAN, id: n4, voters,
      learners } as RaftConfig).map((p) => p.field);
    assert.deepEqual(fields([n4, n4]), ['voters,learners']);
    assert.deepEqual(fields([n4, nodeId('n1')]), ['voters,learners']);
    assert.deepEqual(fields(['']), ['learners']);
    assert.deepEqual(fields([]), ['id,voters']);
  });

  test('non-integer timings are reported without relation noise', () => {
    const config = { ...RAFT_DEFAULTS_LOCAL, id: nodeId('n1'), voters,
      electionTimeoutMsMin: Number.NaN };
    const problems = validateRaftConfig(config);
    assert.deepEqual(problems.map((p) => p.field), ['electionTimeoutMsMin']);
    assert.match(problems[0]?.rule ?? '', /positive integer/);
  });
});
