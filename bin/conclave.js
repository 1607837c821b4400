#!/usr/bin/env node
// The `conclave` command. `npm ci` compiles src/ to dist/ (the `prepare` script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
if (!existsSync(main)) {
  process.stderr.write('conclave: not built yet; run `npm ci` (or `npm run build`) first\n');
  process.exit(2);
}
const { runCli } = await import(main);
process.exitCode = await runCli(process.argv.slice(2));
