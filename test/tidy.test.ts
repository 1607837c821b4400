/**
 * tidy: the project's own rules, checked on every test run (see test/tidy/tidy-rules.ts).
 * Method: run the checker over the real tree (must be clean) and over a fixture tree that breaks
 * each rule (must be caught), so the check is proven to bite.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tidyCheck } from './tidy/tidy-rules.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/tidy', import.meta.url));

describe('tidy', () => {
  test('the source tree breaks no rule', () => {
    const violations = tidyCheck(ROOT);
    assert.deepEqual(violations.map((v) => `${v.file}:${v.line}: ${v.rule}`), []);
  });

  test('a fixture that calls Date.now() inside src/core is caught', () => {
    const rules = tidyCheck(FIXTURE).filter((v) => v.file.endsWith('core/clock-reader.ts'));
    assert.ok(rules.some((v) => v.rule.includes('Date.now')), JSON.stringify(rules));
  });

  test('timers, Math.random and process.hrtime in deterministic layers are caught', () => {
    const rules = tidyCheck(FIXTURE).map((v) => v.rule).join('\n');
    assert.match(rules, /src\/runtime: timers/);
    assert.match(rules, /src\/sim: Math\.random/);
    assert.match(rules, /src\/core: process\.hrtime/);
  });

  test('an import against the layer table is caught', () => {
    const rules = tidyCheck(FIXTURE).map((v) => v.rule).join('\n');
    assert.match(rules, /src\/core may not import src\/runtime/);
    assert.match(rules, /src\/core may not import 'node:fs'/);
  });
});
