#!/usr/bin/env node
// Runs node's test runner through tsx over every *.test.ts under the given folders or files
// (default: test/). Node 20's `node --test DIR` does not pick up .ts files, hence this script.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(path, out) {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path).sort()) {
      if (entry === 'fixtures' || entry === 'node_modules') continue;
      collect(join(path, entry), out);
    }
  } else if (path.endsWith('.test.ts')) {
    out.push(path);
  }
}

const roots = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
const files = [];
for (const root of roots.length > 0 ? roots : ['test']) collect(root, files);
if (files.length === 0) {
  process.stderr.write('run-tests: no *.test.ts files found\n');
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...passthrough, ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
