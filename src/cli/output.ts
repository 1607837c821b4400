/**
 * The output formats of the commands that print key-values, etcdctl's `-w`/`--write-out`:
 * `simple` for people and shell scripts (a value alone on its line), `json` (the client's
 * result as it is, one object per line), `table` (aligned columns with a header) and `fields`
 * (one `"name" : value` line per field, easy to grep).
 */
import { InvalidArgumentError } from 'commander';
import type { KeyValue } from '../client/index.js';

export const OUTPUT_FORMATS = ['simple', 'json', 'table', 'fields'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function outputFormatFlag(value: string): OutputFormat {
  const format = OUTPUT_FORMATS.find((f) => f === value);
  if (format === undefined) {
    throw new InvalidArgumentError(`expected one of ${OUTPUT_FORMATS.join(', ')}`);
  }
  return format;
}

/** The format from `-w`, with `--json` kept as the older spelling of `-w json`. */
export function formatOf(flags: { writeOut?: OutputFormat; json?: boolean }): OutputFormat {
  return flags.writeOut ?? (flags.json === true ? 'json' : 'simple');
}

/**
 * Aligned columns, a header first; cells are never truncated. A line break or tab in a cell
 * (a value read from stdin ends with one) is shown escaped (`\n`), so a row stays one line.
 */
export function table(header: readonly string[],
  shownRows: readonly (readonly string[])[]): string[] {
  const rows = shownRows.map((r) => r.map((c) => c.replace(/[\r\n\t]/g,
    (ch) => JSON.stringify(ch).slice(1, -1))));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  return [rule, line(header), rule, ...rows.map(line), rule];
}

/**
 * Key-values in `format` (not json: the caller prints its own result for that); `simple` is
 * one `key<TAB>value` line each (the key alone with `keysOnly`).
 */
export function kvLines(kvs: readonly KeyValue[], format: Exclude<OutputFormat, 'json'>,
  keysOnly: boolean, revision: number): string[] {
  if (format === 'simple') {
    return kvs.map((kv) => (keysOnly ? kv.key : `${kv.key}\t${kv.value}`));
  }
  if (format === 'table') {
    const header = keysOnly ? ['KEY'] : ['KEY', 'VALUE', 'VERSION', 'CREATE REV', 'MOD REV',
      'LEASE'];
    return table(header, kvs.map((kv) => (keysOnly ? [kv.key] : [kv.key, kv.value,
      String(kv.version), String(kv.createRevision), String(kv.modRevision),
      kv.lease === undefined ? '-' : String(kv.lease)])));
  }
  const lines = [`"revision" : ${revision}`, `"count" : ${kvs.length}`];
  for (const kv of kvs) {
    lines.push(`"key" : ${JSON.stringify(kv.key)}`);
    if (keysOnly) continue;
    lines.push(`"createRevision" : ${kv.createRevision}`, `"modRevision" : ${kv.modRevision}`,
      `"version" : ${kv.version}`, `"value" : ${JSON.stringify(kv.value)}`,
      `"lease" : ${kv.lease ?? 0}`);
  }
  return lines;
}
