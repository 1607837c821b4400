/**
 * Our version of TigerBeetle's tidy.zig: plain fs + regexes over src/, so nobody has to remember
 * the rules. It bans nondeterminism in the deterministic layers (core, runtime, sim) and checks
 * every import against the layer table of STYLE.md.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';

export interface TidyViolation {
  readonly file: string;
  readonly line: number;
  readonly rule: string;
  readonly text: string;
}

/** Layers whose code must be deterministic: time and randomness only through ports. */
const DETERMINISTIC_LAYERS = new Set(['core', 'runtime', 'sim']);

const BANNED_APIS: readonly { pattern: RegExp; rule: string }[] = [
  { pattern: /\bDate\.now\s*\(/, rule: 'Date.now: take nowMs or a Clock' },
  { pattern: /\bnew\s+Date\s*\(/, rule: 'new Date(): take a Clock' },
  { pattern: /\bperformance\.now\s*\(/, rule: 'performance.now: take a Clock' },
  { pattern: /\b(setTimeout|setInterval|setImmediate)\s*\(/, rule: 'timers: take a Timer' },
  { pattern: /\bMath\.random\s*\(/, rule: 'Math.random: take a Random' },
  { pattern: /\bcrypto\.(random\w*|getRandomValues)\s*\(/, rule: 'crypto randomness: take a Random' },
  { pattern: /\b(randomBytes|randomUUID|randomInt|getRandomValues)\s*\(\s*\)/, rule: 'crypto randomness: take a Random' },
  { pattern: /\bprocess\.hrtime\b/, rule: 'process.hrtime: take a Clock' },
];

/**
 * Which layer may import which (STYLE.md). Keys are src/ folders; `client` is special-cased:
 * it may use core's codec and ids and the transport adapters, nothing of the server side.
 */
const ALLOWED_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  core: ['core'],
  ports: ['core', 'ports'],
  runtime: ['core', 'ports', 'runtime', 'errors'],
  adapters: ['core', 'ports', 'adapters', 'errors'],
  sim: ['core', 'ports', 'runtime', 'sim', 'errors'],
  server: ['core', 'ports', 'runtime', 'adapters', 'server', 'errors', 'client'],
  membership: ['core', 'ports', 'runtime', 'adapters', 'membership', 'errors'],
  client: ['core', 'ports', 'adapters', 'client', 'errors'],
  cli: ['core', 'ports', 'runtime', 'adapters', 'sim', 'server', 'membership', 'client', 'cli', 'errors', 'dashboard'],
  // The page bundles the simulator (src/dashboard/web: replay and rerun of a seed in the browser).
  dashboard: ['core', 'ports', 'runtime', 'adapters', 'sim', 'server', 'membership', 'client', 'dashboard', 'errors'],
  errors: ['core'],
  index: ['core', 'ports', 'runtime', 'adapters', 'sim', 'server', 'membership', 'client', 'errors'],
};

/** Layers that may not import node built-ins or third-party packages at all. */
const NO_EXTERNAL_IMPORTS = new Set(['core', 'ports', 'runtime', 'sim']);

const IMPORT_PATTERN = /^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/;

export function tidyCheck(rootDir: string): TidyViolation[] {
  const srcDir = join(rootDir, 'src');
  const violations: TidyViolation[] = [];
  for (const file of listTsFiles(srcDir)) {
    const layer = layerOf(srcDir, file);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((text, i) => {
      const at = { file: relative(rootDir, file), line: i + 1, text: text.trim() };
      const code = stripComment(text);
      if (DETERMINISTIC_LAYERS.has(layer)) {
        for (const banned of BANNED_APIS) {
          if (banned.pattern.test(code)) violations.push({ ...at, rule: `src/${layer}: ${banned.rule}` });
        }
      }
      const match = IMPORT_PATTERN.exec(code);
      const specifier = match?.[1] ?? match?.[2] ?? match?.[3];
      if (specifier !== undefined) {
        const problem = importProblem(srcDir, file, layer, specifier);
        if (problem !== undefined) violations.push({ ...at, rule: problem });
      }
    });
  }
  return violations;
}

function importProblem(srcDir: string, file: string, layer: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) {
    if (NO_EXTERNAL_IMPORTS.has(layer)) {
      return `src/${layer} may not import '${specifier}' (no I/O or third-party code in this layer)`;
    }
    return undefined;
  }
  const target = resolve(dirname(file), specifier);
  if (!target.startsWith(srcDir + sep)) return `import leaves src/: '${specifier}'`;
  const targetLayer = layerOf(srcDir, target);
  const allowed = ALLOWED_IMPORTS[layer];
  if (allowed === undefined) return `src/${layer} is not a known layer (add it to the table in STYLE.md and tidy)`;
  if (!allowed.includes(targetLayer)) {
    return `src/${layer} may not import src/${targetLayer} ('${specifier}'): dependencies point down`;
  }
  return undefined;
}

function layerOf(srcDir: string, file: string): string {
  const first = relative(srcDir, file).split(sep)[0] ?? '';
  return first.replace(/\.(ts|js)$/, '');
}

function stripComment(line: string): string {
  const trimmed = line.trimStart();
  if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*')) return '';
  const at = line.indexOf(' // ');
  return at >= 0 ? line.slice(0, at) : line;
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
