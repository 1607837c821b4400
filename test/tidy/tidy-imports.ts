/**
 * tidy: imports against the layer table of STYLE.md, read from the syntax tree (so a multi-line
 * `import { … } from`, an `export … from`, an `import x = require()`, a type-only `import()` and
 * a dynamic `import()` are all seen; a line-by-line regex sees none of the multi-line ones).
 */
import { dirname, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import type { TidyViolation } from './tidy-types.js';

/**
 * Which layer may import which (STYLE.md). Keys are src/ folders; `client` is special-cased:
 * it may use core's codec and ids and the transport adapters, nothing of the server side.
 */
const ALLOWED_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  core: ['core'],
  ports: ['core', 'ports', 'errors'],
  runtime: ['core', 'ports', 'runtime', 'errors'],
  adapters: ['core', 'ports', 'adapters', 'errors'],
  sim: ['core', 'ports', 'runtime', 'sim', 'errors', 'client'],
  server: ['core', 'ports', 'runtime', 'adapters', 'server', 'errors', 'client'],
  membership: ['core', 'ports', 'runtime', 'adapters', 'membership', 'errors'],
  client: ['core', 'ports', 'adapters', 'client', 'errors'],
  cli: ['core', 'ports', 'runtime', 'adapters', 'sim', 'server', 'membership', 'client', 'cli',
    'errors', 'dashboard'],
  // The page bundles the simulator (src/dashboard/web: replay and rerun of a seed in the browser).
  dashboard: ['core', 'ports', 'runtime', 'adapters', 'sim', 'server', 'membership', 'client',
    'dashboard', 'errors'],
  errors: ['core'],
  index: ['core', 'ports', 'runtime', 'adapters', 'sim', 'server', 'membership', 'client',
    'errors'],
};

/** Layers that may not import node built-ins or third-party packages at all. */
const NO_EXTERNAL_IMPORTS = new Set(['core', 'ports', 'runtime', 'sim', 'client']);

/**
 * The client's wiring: the only client file that may import src/adapters (connect() passes
 * the real adapters), and, with the index that re-exports it, what the simulator may not
 * import of the client.
 */
const CLIENT_WIRING = new Set(['client/connect.ts', 'client/index.ts']);

interface ModuleReference {
  /** The module specifier; undefined for a dynamic import() whose argument is not a literal. */
  readonly specifier: string | undefined;
  readonly node: ts.Node;
}

/** Every module a file refers to, wherever and however it is written. */
export function moduleReferences(source: ts.SourceFile): ModuleReference[] {
  const found: ModuleReference[] = [];
  const literal = (node: ts.Expression | undefined): string | undefined =>
    node !== undefined && ts.isStringLiteralLike(node) ? node.text : undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier !== undefined) {
        found.push({ specifier: literal(node.moduleSpecifier), node });
      }
    } else if (ts.isImportEqualsDeclaration(node)
      && ts.isExternalModuleReference(node.moduleReference)) {
      found.push({ specifier: literal(node.moduleReference.expression), node });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      found.push({ specifier: literal(node.arguments[0]), node });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      found.push({ specifier: literal(node.argument.literal as ts.Expression), node });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The import rules broken by one file of layer `layer`. */
export function importViolations(srcDir: string, rootDir: string, file: string, layer: string,
  source: ts.SourceFile): TidyViolation[] {
  const violations: TidyViolation[] = [];
  for (const { specifier, node } of moduleReferences(source)) {
    const problem = specifier === undefined
      ? `src/${layer}: import() of a computed specifier cannot be checked against the layer table`
      : importProblem(srcDir, file, layer, specifier);
    if (problem === undefined) continue;
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    violations.push({
      file: relative(rootDir, file), line: line + 1, rule: problem,
      text: node.getText(source).replace(/\s+/g, ' ').slice(0, 120),
    });
  }
  return violations;
}

function importProblem(srcDir: string, file: string, layer: string,
  specifier: string): string | undefined {
  if (!specifier.startsWith('.')) {
    if (NO_EXTERNAL_IMPORTS.has(layer)) {
      return `src/${layer} may not import '${specifier}' (no I/O or third-party code in this layer)`;
    }
    return undefined;
  }
  const target = resolve(dirname(file), specifier);
  if (!target.startsWith(srcDir + sep)) return `import leaves src/: '${specifier}'`;
  const targetLayer = layerOf(srcDir, target);
  const wiring = clientWiringProblem(srcDir, file, target, layer, targetLayer, specifier);
  if (wiring !== undefined) return wiring;
  const allowed = ALLOWED_IMPORTS[layer];
  if (allowed === undefined) {
    return `src/${layer} is not a known layer (add it to the table in STYLE.md and tidy)`;
  }
  if (!allowed.includes(targetLayer)) {
    return `src/${layer} may not import src/${targetLayer} ('${specifier}'): dependencies point down`;
  }
  return undefined;
}

/** Only connect.ts brings the real adapters into the client; the simulator never imports it. */
function clientWiringProblem(srcDir: string, file: string, target: string, layer: string,
  targetLayer: string, specifier: string): string | undefined {
  const from = relative(srcDir, file).split(sep).join('/');
  const to = relative(srcDir, target).split(sep).join('/').replace(/\.js$/, '.ts');
  if (layer === 'client' && targetLayer === 'adapters' && !CLIENT_WIRING.has(from)) {
    return `src/${from} may not import src/adapters ('${specifier}'): the client runs on its `
      + 'components; only client/connect.ts wires in the real adapters';
  }
  if (layer === 'sim' && CLIENT_WIRING.has(to)) {
    return `src/sim may not import src/${to} ('${specifier}'): it wires the real adapters; `
      + 'import the client modules themselves';
  }
  return undefined;
}

/** `src/core/raft/x.ts` → `core`; `src/index.ts` → `index`. */
export function layerOf(srcDir: string, file: string): string {
  const first = relative(srcDir, file).split(sep)[0] ?? '';
  return first.replace(/\.(ts|js)$/, '');
}
