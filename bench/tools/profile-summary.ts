/**
 * Where a server's CPU went: reads a .cpuprofile (from `npm run bench -- put --cpu-prof`) and
 * prints self time by function and by source file, largest first.
 * Usage: node --import tsx bench/tools/profile-summary.ts FILE.cpuprofile [rows, default 25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

function main(file: string, rows: number): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const where = shortUrl(frame.url);
    const line = where === '' ? '' : `:${frame.lineNumber + 1}`;
    const name = `${frame.functionName || '(anonymous)'} ${where}${line}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    byFile.set(where || frame.functionName, (byFile.get(where || frame.functionName) ?? 0) + us);
  }
  const print = (title: string, table: Map<string, number>): void => {
    process.stdout.write(`\n${title} (self time, of ${(totalUs / 1000).toFixed(0)} ms sampled)\n`);
    for (const [name, us] of [...table].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
      process.stdout.write(`${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${name}\n`);
    }
  };
  print('by function', byFunction);
  print('by file', byFile);
}

/** node_modules/x/... or dist/src/... instead of a whole file:// URL. */
function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write(
    'usage: node --import tsx bench/tools/profile-summary.ts FILE.cpuprofile [rows]\n');
  process.exit(2);
}
main(file, Number(process.argv[3] ?? 25));
