/**
 * What `npm install conclave` gets: the files `npm pack` would publish. Runs after `npm test`'s
 * build, with scripts off (a `prepare` here would rebuild dist/ under the other tests' feet).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONCLAVE_VERSION } from '../src/core/version.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface PackEntry { readonly path: string; readonly size: number }

function packedFiles(): readonly PackEntry[] {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const out = execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'],
    { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const parsed = JSON.parse(out) as Array<{ files: PackEntry[] }>;
  assert.equal(parsed.length, 1, 'npm pack described one package');
  return parsed[0]!.files;
}

describe('package: what npm publishes', { skip: !existsSync(`${ROOT}/dist/src/index.js`) &&
  'dist/ is not built (run npm run build)' }, () => {
  const files = packedFiles();
  const paths = new Set(files.map((f) => f.path));

  it('ships the command, the library with its types, the license, README and docs', () => {
    for (const path of ['bin/conclave.js', 'dist/src/index.js', 'dist/src/index.d.ts',
      'dist/src/cli/main.js', 'LICENSE', 'README.md', 'package.json', 'docs/client.md']) {
      assert.ok(paths.has(path), `${path} is in the package`);
    }
  });

  it('ships no source maps, sources, tests, benchmarks or local state', () => {
    const unwanted = [...paths].filter((p) => p.endsWith('.map') || p.startsWith('src/') ||
      p.startsWith('test/') || p.startsWith('bench/') || p.startsWith('examples/') ||
      p.startsWith('.') || p.includes('/.conclave') || p.endsWith('.cpuprofile'));
    assert.deepEqual(unwanted, []);
  });

  it('every docs/ link in README and the shipped docs points at a shipped file', () => {
    const broken: string[] = [];
    for (const page of [...paths].filter((p) => p === 'README.md' || p.startsWith('docs/'))) {
      const text = readFileSync(`${ROOT}/${page}`, 'utf8');
      const base = page.includes('/') ? page.slice(0, page.lastIndexOf('/') + 1) : '';
      for (const match of text.matchAll(/\]\(((?:\.\.\/|\.\/)?(?:docs\/)?[\w./-]+\.md)(?:#[\w-]*)?\)/g)) {
        const target = normalize(base + match[1]!);
        if (target.startsWith('docs/') || target === 'README.md') {
          if (!paths.has(target)) broken.push(`${page} -> ${match[1]}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('says where it comes from and under which license', () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as Record<string, unknown>;
    for (const field of ['license', 'repository', 'homepage', 'bugs', 'engines', 'exports']) {
      assert.ok(pkg[field] !== undefined, `package.json has ${field}`);
    }
    assert.match(readFileSync(`${ROOT}/LICENSE`, 'utf8'), /Apache License\s+Version 2\.0/);
  });

  it('the README says how to install and use it, and how to develop it', () => {
    const readme = readFileSync(`${ROOT}/README.md`, 'utf8');
    assert.match(readme, /^## Install and use$/m);
    assert.match(readme, /npm install conclave/);
    assert.match(readme, /^## Develop$/m);
    assert.match(readme, /npm ci/);
  });

  it('ships the metrics reference and the Grafana dashboard; one version everywhere', () => {
    for (const path of ['docs/metrics.md', 'docs/grafana-dashboard.json']) {
      assert.ok(paths.has(path), `${path} is in the package`);
    }
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as { version: string };
    assert.equal(CONCLAVE_VERSION, pkg.version, 'src/core/version.ts follows package.json');
  });
});

function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}
