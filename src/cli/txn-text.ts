/**
 * The text form of a transaction for `conclave kv txn`, as etcdctl reads it from stdin: three
 * blocks separated by an empty line: compares, the ops run when every compare holds, the ops
 * run otherwise.
 *
 *   value("config/mode") = "blue"
 *   version("config/epoch") > "2"
 *
 *   put config/mode green
 *   get config/ --prefix
 *
 *   get config/mode
 *
 * A compare is `TARGET("KEY") OP "OPERAND"`: TARGET one of value, version, create, mod; OP one
 * of = != > <. An op is `put KEY VALUE [--lease=ID]`, `get KEY [--prefix] [--limit=N]` or
 * `del KEY [--prefix]`; a KEY or VALUE with spaces is written in double quotes (JSON escapes).
 * Every mistake is a UsageError naming the line.
 */
import type { KvCompare, KvTxnOp, TxnRequest } from '../client/index.js';
import type { KvCompareResult } from '../core/kv/types.js';
import { UsageError } from '../errors.js';

/** Longest txn text read. Why: a txn is a few ops typed or scripted; 1 MiB is far beyond. */
export const TXN_TEXT_BYTES_MAX = 1024 * 1024;

const RESULTS: Readonly<Record<string, KvCompareResult>> = {
  '=': 'equal', '==': 'equal', '!=': 'not-equal', '>': 'greater', '<': 'less',
};

export function parseTxnText(text: string): TxnRequest {
  if (Buffer.byteLength(text) > TXN_TEXT_BYTES_MAX) {
    throw new UsageError(`txn: the text is longer than ${TXN_TEXT_BYTES_MAX} bytes`);
  }
  const blocks: { line: number; text: string }[][] = [[]];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') {
      if ((blocks.at(-1) ?? []).length > 0 || blocks.length === 1) blocks.push([]);
    } else blocks.at(-1)?.push({ line: i + 1, text: line });
  });
  // A leading empty line means "no compares"; trailing empty blocks mean nothing.
  while (blocks.length > 1 && (blocks.at(-1) ?? []).length === 0) blocks.pop();
  if (blocks.length > 3) {
    throw new UsageError('txn: expected at most three blocks (compares, success ops, failure ' +
      `ops) separated by empty lines; found ${blocks.length}`);
  }
  const [compares = [], success = [], failure = []] = blocks;
  return {
    compare: compares.map((l) => parseCompare(l.text, l.line)),
    success: success.map((l) => parseOp(l.text, l.line)),
    failure: failure.map((l) => parseOp(l.text, l.line)),
  };
}

function parseCompare(text: string, line: number): KvCompare {
  const m = /^(value|version|create|mod)\(\s*("(?:[^"\\]|\\.)*")\s*\)\s*(==|=|!=|>|<)\s*(.+)$/
    .exec(text);
  if (m === null) {
    throw new UsageError(`txn line ${line}: expected a compare like value("KEY") = "VALUE" ` +
      `(targets: value, version, create, mod; operators: = != > <), got ${text}`);
  }
  const [, target = '', keyText = '', op = '', operandText = ''] = m;
  const key = unquote(keyText, line);
  const operand = operandText.startsWith('"') ? unquote(operandText, line) : operandText;
  const result = RESULTS[op] ?? 'equal';
  if (target === 'value') return { key, target: 'value', result, value: operand };
  const n = Number(operand);
  if (!/^\d+$/.test(operand) || !Number.isSafeInteger(n)) {
    throw new UsageError(`txn line ${line}: ${target} compares with a whole number, got ` +
      operandText);
  }
  if (target === 'version') return { key, target: 'version', result, version: n };
  if (target === 'create') return { key, target: 'createRevision', result, createRevision: n };
  return { key, target: 'modRevision', result, modRevision: n };
}

const OP_FORMS = 'expected put KEY VALUE, get KEY or del KEY';

function parseOp(text: string, line: number): KvTxnOp {
  const words = splitWords(text, line);
  const flags = words.filter((w) => w.startsWith('--'));
  const args = words.filter((w) => !w.startsWith('--'));
  const [verb, key, value] = args;
  const flag = (name: string): string | true | undefined => {
    const hit = flags.find((f) => f === `--${name}` || f.startsWith(`--${name}=`));
    return hit === undefined ? undefined : hit.includes('=') ? hit.slice(hit.indexOf('=') + 1)
      : true;
  };
  const known = verb === 'put' ? ['lease'] : verb === 'get' ? ['prefix', 'limit']
    : ['prefix'];
  const unknown = flags.find((f) => !known.includes(f.slice(2).split('=')[0] ?? ''));
  if (unknown !== undefined) throw new UsageError(`txn line ${line}: ${verb} has no ${unknown}`);
  if (key === undefined) {
    throw new UsageError(`txn line ${line}: ${OP_FORMS}, got ${text}`);
  }
  if (verb === 'put' && value !== undefined && args.length === 3) {
    const lease = flag('lease');
    return { kind: 'put', key, value,
      ...(lease === undefined ? {} : { lease: whole(lease, line) }) };
  }
  if ((verb === 'get' || verb === 'del' || verb === 'delete') && args.length === 2) {
    const prefix = flag('prefix') !== undefined;
    if (verb !== 'get') return { kind: 'delete', key, prefix };
    const limit = flag('limit');
    return { kind: 'range', key, prefix,
      ...(limit === undefined ? {} : { limit: whole(limit, line) }) };
  }
  throw new UsageError(`txn line ${line}: ${OP_FORMS}, got ${text}`);
}

function whole(value: string | true, line: number): number {
  const n = Number(value);
  if (value === true || !/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new UsageError(`txn line ${line}: expected a whole number, got ${String(value)}`);
  }
  return n;
}

/** Words split on spaces; a double-quoted word may hold spaces and JSON escapes. */
function splitWords(text: string, line: number): string[] {
  const words: string[] = [];
  const pattern = /"(?:[^"\\]|\\.)*"|\S+/g;
  for (const m of text.matchAll(pattern)) {
    words.push(m[0].startsWith('"') ? unquote(m[0], line) : m[0]);
  }
  return words;
}

function unquote(text: string, line: number): string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'string') return value;
  } catch {
    // reported below
  }
  throw new UsageError(`txn line ${line}: ${text} is not a double-quoted string`);
}
