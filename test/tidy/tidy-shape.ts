/**
 * tidy: the shape rules of STYLE.md, measured (the judging against the baseline and the
 * allow-list is in tidy-rules.ts): lines at most LINE_COLUMNS_MAX columns, functions at most
 * FUNCTION_LINES_MAX lines.
 */
import ts from 'typescript';
import type { LongFunction, LongLine } from './tidy-types.js';

/** STYLE.md: "lines at most 100 columns". Columns are code points (`→` is one column). */
export const LINE_COLUMNS_MAX = 100;

/**
 * STYLE.md: "about 70 lines at most". Counted from the first token of the function (its JSDoc
 * excluded) to its closing brace, both included; a nested function counts in its parent too.
 */
export const FUNCTION_LINES_MAX = 70;

export function longLines(file: string, text: string): LongLine[] {
  const found: LongLine[] = [];
  text.split('\n').forEach((line, i) => {
    const columns = [...line.replace(/\r$/, '')].length;
    if (columns > LINE_COLUMNS_MAX) found.push({ file, line: i + 1, columns });
  });
  return found;
}

export function longFunctions(file: string, source: ts.SourceFile): LongFunction[] {
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > FUNCTION_LINES_MAX) {
        found.push({ file, line: start + 1, name: functionName(node, source), lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * A name that survives edits elsewhere in the file (no line numbers): `f`, `Class.method`,
 * `object.property`, or `<arrow> in f` for an unnamed function inside `f`.
 */
function functionName(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  const own = ownName(node, source);
  if (own !== undefined) return own;
  for (let up = node.parent; up !== undefined; up = up.parent) {
    if (ts.isFunctionLike(up)) {
      const outer = ownName(up, source);
      if (outer !== undefined) return `<function> in ${outer}`;
    }
  }
  return '<function> at top level';
}

function ownName(node: ts.Node, source: ts.SourceFile): string | undefined {
  const nameText = (name: ts.Node | undefined): string | undefined =>
    name === undefined ? undefined : name.getText(source);
  if (ts.isFunctionDeclaration(node)) return nameText(node.name) ?? 'default';
  if (ts.isConstructorDeclaration(node)) return `${className(node)}.constructor`;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
    const owner = ts.isClassLike(node.parent) ? className(node) : objectName(node.parent, source);
    return `${owner}.${nameText(node.name)}`;
  }
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent)) return nameText(parent.name);
    if (ts.isPropertyAssignment(parent)) {
      return `${objectName(parent.parent, source)}.${nameText(parent.name)}`;
    }
    if (ts.isPropertyDeclaration(parent) && ts.isClassLike(parent.parent)) {
      return `${parent.parent.name?.text ?? '<class>'}.${nameText(parent.name)}`;
    }
  }
  return undefined;
}

function className(member: ts.ClassElement): string {
  const owner = member.parent;
  return ts.isClassLike(owner) ? owner.name?.text ?? '<class>' : '<class>';
}

/** The variable an object literal is assigned to, or `<object>`. */
function objectName(node: ts.Node, source: ts.SourceFile): string {
  const parent = node.parent;
  if (parent !== undefined && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent !== undefined && ts.isPropertyAssignment(parent)) {
    return `${objectName(parent.parent, source)}.${parent.name.getText(source)}`;
  }
  return '<object>';
}
