/**
 * tidy: whether an identifier is a free reference (resolves to a global), by walking its
 * enclosing scopes on the syntax tree. ES modules are strict code: no `with`, no implicit
 * globals, block-scoped function declarations, so a name no enclosing scope declares is the
 * global of that name. Type-only declarations (interfaces, type aliases) declare no value.
 */
import ts from 'typescript';

/**
 * True when `id` is read as a value and no enclosing scope declares its name. Names that
 * declare or label rather than read (a property key, a member name after a dot, an import or
 * export specifier, a label) are never free references.
 */
export function isFreeReference(id: ts.Identifier): boolean {
  if (!readsValue(id)) return false;
  const name = id.text;
  for (let scope: ts.Node | undefined = id.parent; scope !== undefined; scope = scope.parent) {
    if (declares(scope, name)) return false;
  }
  return true;
}

function readsValue(id: ts.Identifier): boolean {
  const parent = id.parent;
  if ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)
    || ts.isMethodDeclaration(parent) || ts.isPropertySignature(parent)
    || ts.isMethodSignature(parent) || ts.isGetAccessor(parent) || ts.isSetAccessor(parent)
    || ts.isEnumMember(parent)) && parent.name === id) return false;
  if (ts.isPropertyAccessExpression(parent) && parent.name === id) return false;
  if (ts.isBindingElement(parent) && parent.propertyName === id) return false;
  if (ts.isImportSpecifier(parent) || ts.isExportSpecifier(parent)) return false;
  if (ts.isLabeledStatement(parent) || ts.isBreakOrContinueStatement(parent)) return false;
  if (ts.isQualifiedName(parent) || ts.isMetaProperty(parent)) return false;
  return true;
}

/** Whether `scope` brings a value named `name` into scope for the code inside it. */
function declares(scope: ts.Node, name: string): boolean {
  if (ts.isSourceFile(scope) || ts.isBlock(scope) || ts.isModuleBlock(scope)) {
    return scope.statements.some((s) => statementDeclares(s, name));
  }
  if (ts.isCaseBlock(scope)) {
    return scope.clauses.some((c) => c.statements.some((s) => statementDeclares(s, name)));
  }
  if (ts.isFunctionLike(scope)) {
    if (scope.parameters.some((p) => bindingDeclares(p.name, name))) return true;
    if ((ts.isFunctionExpression(scope)) && scope.name?.text === name) return true;
    const body = 'body' in scope ? scope.body : undefined;
    return body !== undefined && ts.isBlock(body) && hoistsVar(body, name);
  }
  if (ts.isClassLike(scope)) return scope.name?.text === name;
  if (ts.isForStatement(scope) || ts.isForOfStatement(scope) || ts.isForInStatement(scope)) {
    const init = scope.initializer;
    return init !== undefined && ts.isVariableDeclarationList(init)
      && init.declarations.some((d) => bindingDeclares(d.name, name));
  }
  if (ts.isCatchClause(scope)) {
    const variable = scope.variableDeclaration;
    return variable !== undefined && bindingDeclares(variable.name, name);
  }
  return false;
}

function statementDeclares(statement: ts.Statement, name: string): boolean {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.some((d) => bindingDeclares(d.name, name));
  }
  if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)
    || ts.isEnumDeclaration(statement)) return statement.name?.text === name;
  if (ts.isModuleDeclaration(statement)) {
    return ts.isIdentifier(statement.name) && statement.name.text === name;
  }
  if (ts.isImportEqualsDeclaration(statement)) return statement.name.text === name;
  if (ts.isImportDeclaration(statement)) {
    const clause = statement.importClause;
    if (clause === undefined) return false;
    if (clause.name?.text === name) return true;
    const bindings = clause.namedBindings;
    if (bindings === undefined) return false;
    if (ts.isNamespaceImport(bindings)) return bindings.name.text === name;
    return bindings.elements.some((e) => e.name.text === name);
  }
  return false;
}

function bindingDeclares(binding: ts.BindingName, name: string): boolean {
  if (ts.isIdentifier(binding)) return binding.text === name;
  return binding.elements.some((element) =>
    !ts.isOmittedExpression(element) && bindingDeclares(element.name, name));
}

/** A `var` anywhere in a function body (not in nested functions) is scoped to the function. */
function hoistsVar(body: ts.Block, name: string): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found || (ts.isFunctionLike(node) && node !== body.parent)) return;
    if (ts.isVariableDeclarationList(node)
      && (node.flags & (ts.NodeFlags.Let | ts.NodeFlags.Const | ts.NodeFlags.Using)) === 0) {
      found = node.declarations.some((d) => bindingDeclares(d.name, name));
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(body, visit);
  return found;
}
