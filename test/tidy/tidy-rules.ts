/**
 * Our version of TigerBeetle's tidy.zig, so nobody has to remember the rules. Over every .ts
 * file under `src/` of a root it checks, on the TypeScript syntax tree (never line by line,
 * which multi-line imports and aliases slip past):
 * - imports against the layer table of STYLE.md (tidy-imports.ts);
 * - no clock, timer, randomness or process global in the deterministic layers, however it is
 *   reached (tidy-globals.ts);
 * - lines of at most 100 columns and functions of at most 70 lines (tidy-shape.ts), judged
 *   against a short allow-list and a temporary baseline (tidy-baseline.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import type { ShapeBaseline } from './tidy-baseline.js';
import { DETERMINISTIC_LAYERS, globalViolations } from './tidy-globals.js';
import { importViolations, layerOf } from './tidy-imports.js';
import { FUNCTION_LINES_MAX, LINE_COLUMNS_MAX, longFunctions, longLines } from './tidy-shape.js';
import type { LongFunction, LongLine, TidyViolation } from './tidy-types.js';

export type { LongFunction, LongLine, TidyViolation } from './tidy-types.js';

/** What one pass over a tree found. */
export interface TidyReport {
  /** Imports and banned globals: every one is a failure. */
  readonly violations: readonly TidyViolation[];
  /** Shape measurements, for `judgeShape`. */
  readonly longLines: readonly LongLine[];
  readonly longFunctions: readonly LongFunction[];
}

export function tidyCheck(rootDir: string): TidyReport {
  const srcDir = join(rootDir, 'src');
  const files = listTsFiles(srcDir);
  const violations: TidyViolation[] = [];
  const lines: LongLine[] = [];
  const functions: LongFunction[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022,
      true, ts.ScriptKind.TS);
    const shown = relative(rootDir, file).split(sep).join('/');
    const layer = layerOf(srcDir, file);
    violations.push(...importViolations(srcDir, rootDir, file, layer, source)
      .map((v) => ({ ...v, file: shown })));
    if (DETERMINISTIC_LAYERS.has(layer)) {
      violations.push(...globalViolations(source, layer, shown));
    }
    lines.push(...longLines(shown, source.text));
    functions.push(...longFunctions(shown, source));
  }
  return { violations, longLines: lines, longFunctions: functions };
}

/**
 * The shape rules as failures: a long line or function is allowed only by the allow-list
 * (functions) or within the baseline's ceiling; a baseline entry above what the tree has now
 * fails too, so the baseline only ever shrinks (lower it to the figure the message names).
 */
export function judgeShape(report: TidyReport, baseline: ShapeBaseline): string[] {
  const problems: string[] = [];
  const perFile = new Map<string, LongLine[]>();
  for (const line of report.longLines) {
    perFile.set(line.file, [...(perFile.get(line.file) ?? []), line]);
  }
  for (const [file, found] of perFile) {
    const ceiling = baseline.longLines[file] ?? 0;
    if (found.length <= ceiling) continue;
    const where = found.map((l) => `${l.line} (${l.columns})`).join(', ');
    problems.push(`${file}: ${found.length} lines over ${LINE_COLUMNS_MAX} columns`
      + ` (baseline ${ceiling}); lines: ${where}`);
  }
  for (const [file, ceiling] of Object.entries(baseline.longLines)) {
    const count = perFile.get(file)?.length ?? 0;
    if (count < ceiling) {
      problems.push(`${file}: the baseline allows ${ceiling} long lines, the file has ${count}:`
        + ` lower it to ${count} in test/tidy/tidy-baseline.ts (it only shrinks)`);
    }
  }
  const keyOf = (f: { file: string; name: string }): string => `${f.file} ${f.name}`;
  const long = new Set(report.longFunctions.map(keyOf));
  for (const fn of report.longFunctions) {
    const key = keyOf(fn);
    if (baseline.allowedFunctions.some((a) => keyOf(a) === key)) continue;
    if (baseline.longFunctions.some((b) => keyOf(b) === key)) continue;
    problems.push(`${fn.file}:${fn.line}: ${fn.name} is ${fn.lines} lines (at most `
      + `${FUNCTION_LINES_MAX}): split it`);
  }
  for (const entry of [...baseline.allowedFunctions, ...baseline.longFunctions]) {
    if (!long.has(keyOf(entry))) {
      problems.push(`${entry.file} ${entry.name}: listed in test/tidy/tidy-baseline.ts but no`
        + ` longer over ${FUNCTION_LINES_MAX} lines (or renamed): remove the entry`);
    }
  }
  return problems;
}

function listTsFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string): void => {
    for (const entry of readdirSync(path).sort()) {
      const full = join(path, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry.endsWith('.ts')) out.push(full);
    }
  };
  walk(dir);
  return out;
}
