#!/usr/bin/env node
// Builds the dashboard page (src/dashboard/web) for the browser into dist/dashboard: the app
// and the simulator worker bundled and minified by esbuild, uPlot's stylesheet folded into
// app.css, and index.html copied. Run by `npm run build` and `prepare` after tsc.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'src', 'dashboard', 'web');
const out = join(root, 'dist', 'dashboard');
mkdirSync(out, { recursive: true });
const common = { bundle: true, minify: true, format: 'esm', platform: 'browser',
  target: 'es2022', legalComments: 'none', logLevel: 'warning' };
await build({ ...common, entryPoints: [join(web, 'main.ts')], outfile: join(out, 'app.js') });
await build({ ...common, entryPoints: [join(web, 'sim-worker.ts')],
  outfile: join(out, 'sim-worker.js') });
const uplotCss = readFileSync(join(root, 'node_modules', 'uplot', 'dist', 'uPlot.min.css'), 'utf8');
writeFileSync(join(out, 'app.css'), uplotCss + '\n' + readFileSync(join(web, 'app.css'), 'utf8'));
copyFileSync(join(web, 'index.html'), join(out, 'index.html'));
