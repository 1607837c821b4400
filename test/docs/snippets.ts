/**
 * Code blocks in README.md and docs/*.md, for the docs tests: TypeScript blocks to compile and
 * shell blocks whose curl lines run against a real cluster.
 *
 * Conventions the docs follow so that their code can be checked:
 * - A ```ts block is a module that must compile against the package (`import ... from
 *   'conclave'`). Names a snippet uses without defining (your own functions, a `db`, a
 *   `signal`) are declared in an HTML comment right above the block, invisible when rendered:
 *   `<!-- ts-prelude: declare const signal: AbortSignal; -->`.
 * - A ```ts signature block lists call shapes, not code: it is not compiled.
 * - In ```sh blocks, the lines starting with `curl` (or `NAME=$(curl`) run in order in one shell
 *   against a fresh `conclave dev` cluster, with `localhost:2379` standing for its first member.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Snippet {
  /** Where it stands, as `file:line` of its opening fence. */
  readonly where: string;
  readonly info: string;
  readonly code: string;
  /** Declarations from a `ts-prelude` comment right above the block ('' when none). */
  readonly prelude: string;
}

const PRELUDE = /<!--\s*ts-prelude:([\s\S]*?)-->\s*$/;

/** README.md and every docs/*.md under `root`, in a stable order. */
export function documentationFiles(root: string): readonly string[] {
  const docs = readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => join('docs', f))];
}

/** Every fenced block of `file` (relative to `root`). */
export function snippetsOf(root: string, file: string): readonly Snippet[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S.*)?$/.exec(lines[i]!);
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    const before = lines.slice(Math.max(0, start - 6), start).join('\n');
    out.push({
      where: `${file}:${start + 1}`, info: (open[1] ?? '').trim(), code: body.join('\n'),
      prelude: PRELUDE.exec(before)?.[1]?.trim() ?? '',
    });
  }
  return out;
}

/** The lines of a shell block that call curl, in order (continuation lines joined). */
export function curlLines(code: string): readonly string[] {
  const joined = code.replace(/\\\n\s*/g, ' ');
  return joined.split('\n').map((l) => l.trim())
    .filter((l) => /^(?:[A-Z_]+=\$\()?curl\s/.test(l));
}
