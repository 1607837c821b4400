/**
 * tidy: nondeterminism in the deterministic layers (core, runtime, sim, client), found by resolving
 * every identifier on the syntax tree rather than by matching text. A reference counts when it
 * is free (no enclosing scope of the module declares the name: ES modules are strict, so a free
 * name is the global), in any form: called, aliased (`const t = Date.now`), destructured
 * (`const { now } = performance`), reached through `globalThis.setTimeout` or `Math['random']`.
 * A local or a property that only shares the name (`host.process`, `this.timer.setTimer`) is
 * left alone. (The type checker would resolve names too, but building a program over src/ costs
 * several times the parse; the scope walk of tidy-scopes.ts is exact for strict-mode modules.)
 */
import ts from 'typescript';
import { isFreeReference } from './tidy-scopes.js';
import type { TidyViolation } from './tidy-types.js';

/**
 * Layers whose code must be deterministic: time and randomness only through ports. The client
 * is one of them (it runs on its components, so the simulator runs it); its real adapters are
 * in src/adapters, wired in by client/connect.ts.
 */
export const DETERMINISTIC_LAYERS = new Set(['core', 'runtime', 'sim', 'client']);

/** Files allowed one banned global, each with the reason. Keep it short. */
const ALLOWED_EXCEPTIONS: readonly { file: string; rule: string; reason: string }[] = [
  { file: 'src/sim/settle.ts', rule: 'timers',
    reason: 'a macrotask boundary, not a clock: it lets the promise reactions of the simulated '
      + 'client run to the end between two events; it reads no time and orders nothing' },
];

/**
 * Globals banned outright in deterministic layers, with the port to use instead. Any value
 * reference to one is a violation, whatever is done with it.
 */
const BANNED_GLOBALS: Readonly<Record<string, string>> = {
  Date: 'Date: take nowMs or a Clock',
  performance: 'performance: take a Clock',
  setTimeout: 'timers: take a Timer',
  setInterval: 'timers: take a Timer',
  setImmediate: 'timers: take a Timer',
  clearTimeout: 'timers: take a Timer',
  clearInterval: 'timers: take a Timer',
  clearImmediate: 'timers: take a Timer',
  queueMicrotask: 'timers: take a Timer (microtask order is the host\'s, not the seed\'s)',
  crypto: 'crypto randomness: take a Random',
  process: 'process: the process global is I/O (hrtime, env, nextTick); take a port',
  globalThis: 'globalThis: reaches every banned global; take a port',
  global: 'global: reaches every banned global; take a port',
  fetch: 'fetch: network I/O; take a Transport',
  WebSocket: 'sockets: network I/O; take a Transport',
};

/**
 * Globals with both safe and banned members: only `Object.member` with a member outside the
 * banned set may appear; any other use (an alias of the object, destructuring it, a computed
 * member) could hide a banned member, so it is a violation too.
 */
const GUARDED_GLOBALS: Readonly<Record<string, { banned: ReadonlySet<string>; rule: string }>> = {
  Math: { banned: new Set(['random']), rule: 'Math.random: take a Random' },
  AbortSignal: { banned: new Set(['timeout']),
    rule: 'AbortSignal.timeout (a real timer): take a Timer' },
};

/** The banned-global violations of one file. */
export function globalViolations(source: ts.SourceFile,
  layer: string, file: string): TidyViolation[] {
  const violations: TidyViolation[] = [];
  const report = (node: ts.Node, rule: string): void => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    const text = source.text.split('\n')[line]?.trim() ?? '';
    violations.push({ file, line: line + 1, rule: `src/${layer}: ${rule}`, text });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isTypeNode(node)) return; // `Date` as a type, `typeof setTimeout`: no value read
    if (ts.isIdentifier(node)) {
      const rule = ruleFor(node);
      if (rule !== undefined && !excepted(file, rule)) report(node, rule);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return violations;
}

function excepted(file: string, rule: string): boolean {
  return ALLOWED_EXCEPTIONS.some((e) => file.endsWith(e.file) && rule.startsWith(e.rule));
}

function ruleFor(id: ts.Identifier): string | undefined {
  const name = id.text;
  const banned = BANNED_GLOBALS[name];
  const guarded = GUARDED_GLOBALS[name];
  // `globalThis.setTimeout`, `x.Date`: the member name is resolved as its own identifier.
  const isMemberName = ts.isPropertyAccessExpression(id.parent) && id.parent.name === id;
  if (banned === undefined && guarded === undefined) return undefined;
  if (isMemberName && !isGlobalObject(id.parent.expression)) return undefined;
  if (!isMemberName && !isFreeReference(id)) return undefined;
  if (banned !== undefined) return banned;
  const parent = id.parent;
  if (ts.isPropertyAccessExpression(parent) && parent.expression === id) {
    return guarded!.banned.has(parent.name.text) ? guarded!.rule : undefined;
  }
  return `${name} used other than as ${name}.member (an alias or destructuring could hide `
    + `${[...guarded!.banned].map((m) => `${name}.${m}`).join(', ')}): ${guarded!.rule}`;
}

/** `globalThis` or `global` (the only objects whose members are the globals themselves). */
function isGlobalObject(expression: ts.Expression): boolean {
  return ts.isIdentifier(expression) && (expression.text === 'globalThis'
    || expression.text === 'global');
}

