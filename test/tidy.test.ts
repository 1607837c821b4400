/**
 * tidy: the project's own rules, checked on every test run (see test/tidy/tidy-rules.ts).
 * Method: run the checker over the real tree (must be clean, the shape rules judged against
 * the allow-list and the temporary baseline of test/tidy/tidy-baseline.ts) and over a fixture
 * tree that breaks each rule (must be caught), so each check is proven to bite; the fixture's
 * look-alikes prove it does not bite where it should not.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NO_BASELINE, SHAPE_BASELINE, type ShapeBaseline } from './tidy/tidy-baseline.js';
import { judgeShape, tidyCheck, type TidyReport } from './tidy/tidy-rules.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/tidy', import.meta.url));

describe('tidy', () => {
  let fixture: TidyReport;
  before(() => {
    fixture = tidyCheck(FIXTURE);
  });
  const rulesOf = (file: string): string[] =>
    fixture.violations.filter((v) => v.file === `src/${file}`).map((v) => `${v.line}: ${v.rule}`);

  test('the source tree breaks no rule', () => {
    const report = tidyCheck(ROOT);
    assert.deepEqual(report.violations.map((v) => `${v.file}:${v.line}: ${v.rule}`), []);
    assert.deepEqual(judgeShape(report, SHAPE_BASELINE), []);
  });

  test('a fixture that calls Date.now() inside src/core is caught', () => {
    assert.ok(rulesOf('core/clock-reader.ts').some((r) => r.includes('Date')),
      JSON.stringify(rulesOf('core/clock-reader.ts')));
  });

  test('timers, Math.random and process.hrtime in deterministic layers are caught', () => {
    const rules = fixture.violations.map((v) => v.rule).join('\n');
    assert.match(rules, /src\/runtime: timers/);
    assert.match(rules, /src\/sim: Math\.random/);
    assert.match(rules, /src\/core: process/);
  });

  test('the client on ports: real timers, clocks, fetch and adapters are caught', () => {
    const rules = fixture.violations.filter((v) => v.file.endsWith('client/real-io.ts'))
      .map((v) => v.rule).join('\n');
    assert.match(rules, /src\/client: performance/);
    assert.match(rules, /src\/client: timers/);
    assert.match(rules, /src\/client: fetch/);
    assert.match(rules, /src\/client: AbortSignal\.timeout/);
    assert.match(rules, /src\/client may not import 'node:http'/);
    assert.match(rules, /src\/client\/real-io\.ts may not import src\/adapters/);
    const wiring = fixture.violations.filter((v) => v.file.endsWith('client/connect.ts'));
    assert.deepEqual(wiring, [], 'connect.ts wires the adapters in');
  });

  test('the simulator may import the client but not its wiring to the real adapters', () => {
    const rules = fixture.violations.filter((v) => v.file.endsWith('sim/real-client.ts'))
      .map((v) => v.rule).join('\n');
    assert.match(rules, /src\/sim may not import src\/client\/connect\.ts/);
  });

  test('an import against the layer table is caught', () => {
    const rules = fixture.violations.map((v) => v.rule).join('\n');
    assert.match(rules, /src\/core may not import src\/runtime/);
    assert.match(rules, /src\/core may not import 'node:fs'/);
  });

  test('a multi-line import of node:fs in src/core is caught, at its first line', () => {
    assert.deepEqual(rulesOf('core/multiline-import.ts'), [
      "3: src/core may not import 'node:fs' (no I/O or third-party code in this layer)",
    ]);
  });

  test('export … from, export type … from, import() and a computed import() are caught', () => {
    const rules = rulesOf('core/module-forms.ts');
    assert.deepEqual(rules.map((r) => r.split(':')[0]), ['3', '4', '5', '10', '11'], rules.join('\n'));
    assert.match(rules[0]!, /may not import src\/runtime/);
    assert.match(rules[1]!, /'node:os'/);
    assert.match(rules[2]!, /'node:net'/);
    assert.match(rules[3]!, /'node:child_process'/);
    assert.match(rules[4]!, /computed specifier/);
  });

  test('aliased globals are caught: Date.now unread, destructured, computed, via globalThis', () => {
    const lines = rulesOf('core/aliased-globals.ts');
    const at = (line: number): string => lines.filter((r) => r.startsWith(`${line}: `)).join(' | ');
    assert.match(at(3), /Date/, 'const t = Date.now');
    assert.match(at(4), /performance/, 'const { now } = performance');
    assert.match(at(5), /Math used other than as Math\.member/, "Math['random']");
    assert.match(at(6), /Math used other than as Math\.member/, 'const M = Math');
    assert.match(at(7), /Math used other than as Math\.member/, 'const { random } = Math');
    assert.match(at(8), /globalThis/, 'globalThis.setTimeout');
    assert.match(at(8), /timers/, 'globalThis.setTimeout');
    assert.match(at(9), /timers/, '{ queueMicrotask }');
  });

  test('names that only look like globals (members, locals, parameters, types) pass', () => {
    assert.deepEqual(rulesOf('core/look-alikes.ts'), []);
  });

  test('a 101-column line is caught; a 100-column one is not', () => {
    const lines = fixture.longLines.filter((l) => l.file === 'src/sim/long-line.ts');
    assert.deepEqual(lines.map((l) => [l.line, l.columns]), [[3, 101]]);
    assert.match(judgeShape(fixture, NO_BASELINE).join('\n'),
      /src\/sim\/long-line\.ts: 1 lines over 100 columns \(baseline 0\); lines: 3 \(101\)/);
  });

  test('a 90-line function is caught; a 70-line one is not', () => {
    const long = fixture.longFunctions.filter((f) => f.file === 'src/sim/long-function.ts');
    assert.deepEqual(long.map((f) => [f.name, f.lines]), [['ninetyLines', 90]]);
    assert.match(judgeShape(fixture, NO_BASELINE).join('\n'),
      /long-function\.ts:3: ninetyLines is 90 lines \(at most 70\)/);
  });

  test('the baseline is a ceiling that only shrinks; the allow-list needs a live entry', () => {
    const only = (extra: Partial<ShapeBaseline>): string[] =>
      judgeShape(fixture, { ...NO_BASELINE, ...extra });
    const fn = { file: 'src/sim/long-function.ts', name: 'ninetyLines' };
    const lines = { 'src/sim/long-line.ts': 1 };
    assert.deepEqual(only({ longLines: lines, longFunctions: [fn] }), []);
    assert.deepEqual(only({ longLines: lines, allowedFunctions: [{ ...fn, reason: 'a table' }] }),
      []);
    assert.match(only({ longLines: { 'src/sim/long-line.ts': 2 }, longFunctions: [fn] }).join(),
      /allows 2 long lines, the file has 1: lower it to 1/);
    const stale = { file: 'src/sim/long-function.ts', name: 'seventyLines' };
    assert.match(only({ longLines: lines, longFunctions: [fn, stale] }).join(),
      /seventyLines: listed in test\/tidy\/tidy-baseline\.ts but no longer over 70 lines/);
  });
});
