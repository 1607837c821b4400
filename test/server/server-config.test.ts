/**
 * server: config — `--auto-compaction-retention` read as etcd reads it: revisions in revision
 * mode; in periodic mode a duration (h, m, s, ms, combined) or a bare number of hours; 0 off;
 * anything else a problem naming the flag.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConfigProblem } from '../../src/core/config.js';
import { parseRetention } from '../../src/server/server-config.js';

describe('server: config: --auto-compaction-retention', () => {
  test('periodic durations and hours, revision counts', () => {
    const cases: [string, string, number][] = [
      ['periodic', '1', 3_600_000], ['periodic', '0.5', 1_800_000], ['periodic', '30m', 1_800_000],
      ['periodic', '1h30m', 5_400_000], ['periodic', '10s', 10_000], ['periodic', '500ms', 500],
      ['periodic', '0', 0], ['revision', '1000', 1000], ['revision', '0', 0],
    ];
    for (const [mode, text, expected] of cases) {
      const problems: ConfigProblem[] = [];
      assert.equal(parseRetention(mode, text, problems), expected, `${mode} ${text}`);
      assert.deepEqual(problems, [], `${mode} ${text}`);
    }
  });

  test('anything else is a problem naming the flag', () => {
    for (const [mode, text] of [['periodic', '1d'], ['periodic', 'h'], ['periodic', '-1'],
      ['revision', '1h'], ['revision', '1.5']] as const) {
      const problems: ConfigProblem[] = [];
      assert.equal(parseRetention(mode, text, problems), 0);
      assert.equal(problems[0]?.field, '--auto-compaction-retention', `${mode} ${text}`);
    }
  });
});
