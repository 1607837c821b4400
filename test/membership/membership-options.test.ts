/**
 * membership: options — joinCluster's options resolve to the profile plus overrides, and bad
 * options are refused with every broken rule listed at once (the SWIM config's own included).
 * Method: call the pure resolver directly; no sockets.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SWIM_DEFAULTS_LAN, SWIM_DEFAULTS_LOCAL } from '../../src/core/swim/index.js';
import { resolveJoinOptions, type JoinClusterOptions } from '../../src/membership/index.js';

function resolve(options: JoinClusterOptions) {
  const result = resolveJoinOptions(options);
  assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.problems));
  return result.resolved;
}

function problems(options: JoinClusterOptions): string[] {
  const result = resolveJoinOptions(options);
  assert.ok(!result.ok, 'expected the options to be refused');
  return result.problems.map((p) => p.field);
}

describe('membership: options', () => {
  test('defaults: LAN profile, loopback port 7946, two rounds over the seeds to join', () => {
    const r = resolve({ name: 'n1', seeds: ['127.0.0.1:7000', '127.0.0.1:7001'] });
    assert.deepEqual(r.config, SWIM_DEFAULTS_LAN);
    assert.deepEqual(r.bind, { host: '127.0.0.1', port: 7946 });
    assert.equal(r.seeds.length, 2);
    assert.equal(r.joinDeadlineMs, 2 * 2 * SWIM_DEFAULTS_LAN.joinTimeoutMs);
    assert.equal(r.clusterName, 'conclave');
  });

  test('the local profile, then config overrides, then the strategy shorthands', () => {
    const r = resolve({
      name: 'n1', seeds: [], bind: '127.0.0.1:0', profile: 'local',
      config: { probeIntervalMs: 300, splitBrainStrategy: 'keep-oldest' },
      splitBrainStrategy: 'static-quorum', staticQuorumSize: 3,
    });
    assert.equal(r.config.probeIntervalMs, 300);
    assert.equal(r.config.gossipIntervalMs, SWIM_DEFAULTS_LOCAL.gossipIntervalMs);
    assert.equal(r.config.splitBrainStrategy, 'static-quorum');
    assert.equal(r.config.staticQuorumSize, 3);
    assert.equal(r.bind.port, 0);
  });

  test('every broken rule is reported at once', () => {
    const fields = problems({
      name: 'seed:x', bind: 'nowhere', seeds: ['127.0.0.1:0', 'host'], profile: 'wan' as 'lan',
      splitBrainStrategy: 'static-quorum', config: { probeTimeoutMs: 900 },
      joinDeadlineMs: -1, clusterName: '',
    });
    for (const field of ['name', 'bind', 'seeds[0]', 'seeds[1]', 'profile',
      'config.staticQuorumSize', 'config.probeTimeoutMs,probeIntervalMs', 'joinDeadlineMs',
      'clusterName']) {
      assert.ok(fields.includes(field), `${field} missing from ${fields.join(' ')}`);
    }
  });

  test('beyond loopback needs insecure; a wildcard bind needs advertise', () => {
    assert.deepEqual(problems({ name: 'n1', seeds: [], bind: '10.0.0.5:7946' }), ['bind']);
    assert.deepEqual(problems({ name: 'n1', seeds: [], bind: '0.0.0.0:7946', insecure: true }),
      ['bind,advertise']);
    const r = resolve({
      name: 'n1', seeds: [], bind: '0.0.0.0:7946', advertise: '10.0.0.5:7946', insecure: true,
    });
    assert.deepEqual(r.advertise, { host: '10.0.0.5', port: 7946 });
  });
});
