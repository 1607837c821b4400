/**
 * The page's files, built by scripts/build-dashboard.mjs (esbuild) into dist/dashboard/ and
 * read once when a member starts. Found beside the compiled module (dist/src/dashboard ->
 * dist/dashboard) or, when run from source, in the checkout's dist/dashboard.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface DashboardAsset {
  readonly contentType: string;
  readonly body: Buffer;
}

export type DashboardAssets = ReadonlyMap<string, DashboardAsset>;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Where the built page lives, or undefined when it was never built. */
export function assetsDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, '..', '..', 'dashboard'),
    join(here, '..', '..', 'dist', 'dashboard')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  return undefined;
}

export function loadAssets(): DashboardAssets | undefined {
  const dir = assetsDir();
  if (dir === undefined) return undefined;
  const assets = new Map<string, DashboardAsset>();
  for (const name of readdirSync(dir)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType === undefined) continue;
    assets.set(name, { contentType, body: readFileSync(join(dir, name)) });
  }
  return assets;
}
