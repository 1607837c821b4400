/**
 * Commands as log entry bytes. Format: one version byte (`KV_COMMAND_FORMAT_JSON_V1` = 1), then
 * the command as UTF-8 JSON with its fields in a fixed order and absent options left out.
 *
 * Why JSON and not a binary format: src/core may not import packages (so no msgpackr), JSON is
 * built into every runtime the core runs in (Node, browser dashboard), entries stay readable in
 * WAL dumps, and the encoding is deterministic because the encoder writes fields in one fixed
 * order (JSON.stringify keeps insertion order; lone surrogates are escaped, so every string
 * survives the round trip exactly). The cost is size: about 60 bytes of field names per command,
 * small next to keys and values. The version byte lets a later format (binary) coexist.
 *
 * Decoding is total: any bytes give a command or a `decode-error`, never an exception, so a
 * corrupt or foreign entry cannot crash a replica (apply turns it into an error result). It is
 * strict: unknown fields or kinds are errors, because silently ignoring a field a newer server
 * wrote would make replicas disagree on what the command means.
 */
import { assertNever } from '../assert.js';
import { isPasswordHash, isPermission, type KvAuthOp, type KvPasswordHash } from './auth.js';
import type { KvStoreConfig } from './config.js';
import type {
  KvClientCommand, KvCommand, KvCompare, KvCompareResult, KvLeaseExpiry, KvLeaseRemaining,
  KvProblem, KvTxnOp,
} from './types.js';
import { validateKvCommand } from './validate.js';

/** The first byte of every command encoded by this version. */
export const KV_COMMAND_FORMAT_JSON_V1 = 1;

/** What `decodeKvCommand` returns for bytes that are not a command. */
export interface KvDecodeError {
  readonly kind: 'decode-error';
  readonly reason: string;
}

const encoder = new TextEncoder();
const fatalDecoder = new TextDecoder('utf-8', { fatal: true });

/** The format byte as a character: U+0001 is the single UTF-8 byte 0x01. */
const FORMAT_PREFIX = String.fromCharCode(KV_COMMAND_FORMAT_JSON_V1);

/** The command's bytes (no validation: see `encodeValidKvCommand`). */
export function encodeKvCommand(command: KvCommand): Uint8Array {
  return encodeCanonical(canonicalCommand(command));
}

/** One encode straight into the result (the prefix joins the JSON text, not a copied array). */
function encodeCanonical(canonical: KvCommand): Uint8Array {
  return encoder.encode(FORMAT_PREFIX + JSON.stringify(canonical));
}

/**
 * The server's entry point before proposing: validates `command` (every problem at once) and
 * encodes it, checking the encoded size against `commandBytesMax`. `command` in the answer is
 * the canonical copy that was encoded: deep-equal to what `decodeKvCommand(bytes)` returns and
 * sharing nothing mutable with the input, so the proposer may apply it without decoding.
 */
export function encodeValidKvCommand(
  command: KvCommand,
  config: KvStoreConfig,
): { readonly kind: 'ok'; readonly bytes: Uint8Array; readonly command: KvCommand }
  | { readonly kind: 'invalid'; readonly problems: readonly KvProblem[] } {
  const problems = validateKvCommand(command, config);
  if (problems.length > 0) return { kind: 'invalid', problems };
  const canonical = canonicalCommand(command);
  const bytes = encodeCanonical(canonical);
  if (bytes.length > config.commandBytesMax) {
    const rule = `the encoded command must be at most ${config.commandBytesMax} bytes `
      + `(is ${bytes.length})`;
    return { kind: 'invalid', problems: [{ field: '', rule }] };
  }
  return { kind: 'ok', bytes, command: canonical };
}

/**
 * The command in `bytes`, or why there is none. Never throws. Checks the shape (types, known
 * kinds and fields), not the limits: `validateKvCommand` does that.
 */
export function decodeKvCommand(bytes: Uint8Array, bytesMax = Infinity): KvCommand | KvDecodeError {
  if (bytes.length > bytesMax) {
    return decodeError(`entry of ${bytes.length} bytes exceeds ${bytesMax}`);
  }
  if (bytes.length === 0) return decodeError('empty entry');
  if (bytes[0] !== KV_COMMAND_FORMAT_JSON_V1) {
    return decodeError(`unknown command format ${bytes[0]}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(fatalDecoder.decode(bytes.subarray(1)));
  } catch (error) {
    return decodeError(`not UTF-8 JSON: ${String(error)}`);
  }
  return parseKvCommand(parsed);
}

/** The command in a parsed JSON value (for example a request body), or why there is none. */
export function parseKvCommand(value: unknown): KvCommand | KvDecodeError {
  try {
    return readCommand(value);
  } catch (error) {
    if (error instanceof ShapeError) return decodeError(error.message);
    return decodeError(`unreadable command: ${String(error)}`);
  }
}

function decodeError(reason: string): KvDecodeError {
  return { kind: 'decode-error', reason };
}

// ---------------------------------------------------------------------------------------------
// Canonical form: fixed field order, options only when set.

function canonicalCommand(command: KvCommand): KvCommand {
  switch (command.kind) {
    case 'lease-checkpoint':
      return { kind: command.kind, nowMs: command.nowMs,
        leases: command.leases.map((l) => ({ leaseId: l.leaseId, remainingMs: l.remainingMs })) };
    case 'lease-renew':
      return { kind: command.kind, nowMs: command.nowMs, leaseIds: [...command.leaseIds] };
    case 'lease-expire':
      return { kind: command.kind, nowMs: command.nowMs,
        leases: command.leases.map((l) => ({ leaseId: l.leaseId, renewals: l.renewals })) };
    default:
      return canonicalClientCommand(command);
  }
}

function canonicalClientCommand(command: KvClientCommand): KvClientCommand {
  const stamp = {
    ...(command.clientId !== undefined && { clientId: command.clientId }),
    ...(command.sequence !== undefined && { sequence: command.sequence }),
    nowMs: command.nowMs,
    ...(command.principal !== undefined && { principal: command.principal }),
  };
  switch (command.kind) {
    case 'put':
      return { kind: 'put', ...stamp, key: command.key, value: command.value,
        ...(command.prevKv !== undefined && { prevKv: command.prevKv }),
        ...(command.lease !== undefined && { lease: command.lease }) };
    case 'delete':
      return { kind: 'delete', ...stamp, key: command.key,
        ...(command.prefix !== undefined && { prefix: command.prefix }),
        ...(command.prevKv !== undefined && { prevKv: command.prevKv }) };
    case 'txn':
      return { kind: 'txn', ...stamp, compare: command.compare.map(canonicalCompare),
        success: command.success.map(canonicalOp), failure: command.failure.map(canonicalOp) };
    case 'compact':
      return { kind: 'compact', ...stamp, revision: command.revision };
    case 'lease-grant':
      return { kind: 'lease-grant', ...stamp, ttlMs: command.ttlMs };
    case 'lease-revoke':
      return { kind: 'lease-revoke', ...stamp, leaseId: command.leaseId };
    case 'auth':
      return { kind: 'auth', ...stamp, ...canonicalAuthOp(command) };
    default:
      return assertNever(command, 'kv command');
  }
}

function canonicalAuthOp(op: KvAuthOp): KvAuthOp {
  const hash = (h: KvPasswordHash): KvPasswordHash => ({ salt: h.salt, hash: h.hash, N: h.N,
    r: h.r, p: h.p });
  switch (op.op) {
    case 'enable': return { op: op.op, tokenKey: op.tokenKey };
    case 'disable': return { op: op.op };
    case 'user-add':
    case 'user-passwd':
      return { op: op.op, user: op.user, password: hash(op.password) };
    case 'user-delete': return { op: op.op, user: op.user };
    case 'user-grant-role':
    case 'user-revoke-role':
      return { op: op.op, user: op.user, role: op.role };
    case 'role-add':
    case 'role-delete':
      return { op: op.op, role: op.role };
    case 'role-grant-permission':
      return { op: op.op, role: op.role, permission: { type: op.permission.type,
        key: op.permission.key, ...(op.permission.prefix === true && { prefix: true }) } };
    case 'role-revoke-permission':
      return { op: op.op, role: op.role, key: op.key,
        ...(op.prefix === true && { prefix: true }) };
    default:
      return assertNever(op, 'auth op');
  }
}

function canonicalCompare(c: KvCompare): KvCompare {
  const { key, result } = c;
  switch (c.target) {
    case 'value': return { key, target: 'value', result, value: c.value };
    case 'version': return { key, target: 'version', result, version: c.version };
    case 'createRevision':
      return { key, target: 'createRevision', result, createRevision: c.createRevision };
    case 'modRevision': return { key, target: 'modRevision', result, modRevision: c.modRevision };
    default: return assertNever(c, 'kv compare');
  }
}

function canonicalOp(op: KvTxnOp): KvTxnOp {
  switch (op.kind) {
    case 'put':
      return { kind: 'put', key: op.key, value: op.value,
        ...(op.prevKv !== undefined && { prevKv: op.prevKv }),
        ...(op.lease !== undefined && { lease: op.lease }) };
    case 'delete':
      return { kind: 'delete', key: op.key, ...(op.prefix !== undefined && { prefix: op.prefix }),
        ...(op.prevKv !== undefined && { prevKv: op.prevKv }) };
    case 'range':
      return { kind: 'range', key: op.key, ...(op.prefix !== undefined && { prefix: op.prefix }),
        ...(op.limit !== undefined && { limit: op.limit }) };
    default:
      return assertNever(op, 'kv txn op');
  }
}

// ---------------------------------------------------------------------------------------------
// Shape reading: builds fresh objects from known fields only (nothing of the input leaks).

/** Thrown inside the reader only; `parseKvCommand` turns it into a `decode-error`. */
class ShapeError extends Error {}

type Fields = Readonly<Record<string, unknown>>;

function readObject(value: unknown, at: string, allowed: readonly string[]): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ShapeError(`${at || 'command'} must be an object`);
  }
  for (const name of Object.keys(value)) {
    if (!allowed.includes(name)) {
      throw new ShapeError(`${at}${at ? '.' : ''}${name}: unknown field`);
    }
  }
  return value as Fields;
}

function readString(fields: Fields, name: string, at: string): string {
  const value = fields[name];
  if (typeof value !== 'string') throw new ShapeError(`${at}${name} must be a string`);
  return value;
}

function readNumber(fields: Fields, name: string, at: string): number {
  const value = fields[name];
  if (typeof value !== 'number') throw new ShapeError(`${at}${name} must be a number`);
  return value;
}

function readOptionalNumber(fields: Fields, name: string, at: string): number | undefined {
  return fields[name] === undefined ? undefined : readNumber(fields, name, at);
}

function readOptionalBoolean(fields: Fields, name: string, at: string): boolean | undefined {
  const value = fields[name];
  if (value !== undefined && typeof value !== 'boolean') {
    throw new ShapeError(`${at}${name} must be a boolean`);
  }
  return value;
}

function readArray(fields: Fields, name: string): readonly unknown[] {
  const value = fields[name];
  if (!Array.isArray(value)) throw new ShapeError(`${name} must be an array`);
  return value;
}

const STAMP_FIELDS = ['kind', 'clientId', 'sequence', 'nowMs', 'principal'] as const;
const AUTH_FIELDS = ['op', 'tokenKey', 'user', 'role', 'password', 'permission', 'key',
  'prefix'];
// The field lists, built once (spreading them per decode was measurable on a follower).
const ANY_COMMAND_FIELDS = [...STAMP_FIELDS, 'key', 'value', 'prefix', 'prevKv', 'compare',
  'success', 'failure', 'revision', 'lease', 'ttlMs', 'leaseId', 'leases', 'leaseIds',
  ...AUTH_FIELDS];
const PUT_FIELDS = [...STAMP_FIELDS, 'key', 'value', 'prevKv', 'lease'];
const DELETE_FIELDS = [...STAMP_FIELDS, 'key', 'prefix', 'prevKv'];
const TXN_FIELDS = [...STAMP_FIELDS, 'compare', 'success', 'failure'];
const COMPACT_FIELDS = [...STAMP_FIELDS, 'revision'];
const LEASE_GRANT_FIELDS = [...STAMP_FIELDS, 'ttlMs'];
const LEASE_REVOKE_FIELDS = [...STAMP_FIELDS, 'leaseId'];

function readCommand(value: unknown): KvCommand {
  const kind = readObject(value, '', ANY_COMMAND_FIELDS)['kind'];
  switch (kind) {
    case 'put': {
      const f = readObject(value, '', PUT_FIELDS);
      const prevKv = readOptionalBoolean(f, 'prevKv', '');
      const lease = readOptionalNumber(f, 'lease', '');
      return { kind, ...readStamp(f), key: readString(f, 'key', ''),
        value: readString(f, 'value', ''), ...(prevKv !== undefined && { prevKv }),
        ...(lease !== undefined && { lease }) };
    }
    case 'delete': {
      const f = readObject(value, '', DELETE_FIELDS);
      const prefix = readOptionalBoolean(f, 'prefix', '');
      const prevKv = readOptionalBoolean(f, 'prevKv', '');
      return { kind, ...readStamp(f), key: readString(f, 'key', ''),
        ...(prefix !== undefined && { prefix }), ...(prevKv !== undefined && { prevKv }) };
    }
    case 'txn': {
      const f = readObject(value, '', TXN_FIELDS);
      return { kind, ...readStamp(f),
        compare: readArray(f, 'compare').map((c, i) => readCompare(c, `compare[${i}]`)),
        success: readArray(f, 'success').map((op, i) => readOp(op, `success[${i}]`)),
        failure: readArray(f, 'failure').map((op, i) => readOp(op, `failure[${i}]`)) };
    }
    case 'compact': {
      const f = readObject(value, '', COMPACT_FIELDS);
      return { kind, ...readStamp(f), revision: readNumber(f, 'revision', '') };
    }
    case 'lease-grant': {
      const f = readObject(value, '', LEASE_GRANT_FIELDS);
      return { kind, ...readStamp(f), ttlMs: readNumber(f, 'ttlMs', '') };
    }
    case 'lease-revoke': {
      const f = readObject(value, '', LEASE_REVOKE_FIELDS);
      return { kind, ...readStamp(f), leaseId: readNumber(f, 'leaseId', '') };
    }
    case 'auth': {
      const f = readObject(value, '', [...STAMP_FIELDS, ...AUTH_FIELDS]);
      return { kind, ...readStamp(f), ...canonicalAuthOp(readAuthOp(f)) };
    }
    default:
      return readSystemCommand(value, kind);
  }
}

function readSystemCommand(value: unknown, kind: unknown): KvCommand {
  switch (kind) {
    case 'lease-checkpoint': {
      const f = readObject(value, '', ['kind', 'nowMs', 'leases']);
      return { kind, nowMs: readNumber(f, 'nowMs', ''),
        leases: readArray(f, 'leases').map((l, i) => readRemaining(l, `leases[${i}]`)) };
    }
    case 'lease-renew': {
      const f = readObject(value, '', ['kind', 'nowMs', 'leaseIds']);
      return { kind, nowMs: readNumber(f, 'nowMs', ''),
        leaseIds: readArray(f, 'leaseIds').map((id, i) => {
          if (typeof id !== 'number') throw new ShapeError(`leaseIds[${i}] must be a number`);
          return id;
        }) };
    }
    case 'lease-expire': {
      const f = readObject(value, '', ['kind', 'nowMs', 'leases']);
      return { kind, nowMs: readNumber(f, 'nowMs', ''),
        leases: readArray(f, 'leases').map((l, i) => readExpiry(l, `leases[${i}]`)) };
    }
    default:
      throw new ShapeError(`unknown command kind ${JSON.stringify(kind)}`);
  }
}

function readRemaining(value: unknown, at: string): KvLeaseRemaining {
  const f = readObject(value, at, ['leaseId', 'remainingMs']);
  return { leaseId: readNumber(f, 'leaseId', `${at}.`),
    remainingMs: readNumber(f, 'remainingMs', `${at}.`) };
}

function readExpiry(value: unknown, at: string): KvLeaseExpiry {
  const f = readObject(value, at, ['leaseId', 'renewals']);
  return { leaseId: readNumber(f, 'leaseId', `${at}.`),
    renewals: readNumber(f, 'renewals', `${at}.`) };
}

/** The stamp; `clientId` and `sequence` are optional (validation checks they come together). */
function readStamp(f: Fields): {
  clientId?: string; sequence?: number; nowMs: number; principal?: string;
} {
  const clientId = f['clientId'] === undefined ? undefined : readString(f, 'clientId', '');
  const sequence = readOptionalNumber(f, 'sequence', '');
  const principal = f['principal'] === undefined ? undefined : readString(f, 'principal', '');
  return { ...(clientId !== undefined && { clientId }),
    ...(sequence !== undefined && { sequence }), nowMs: readNumber(f, 'nowMs', ''),
    ...(principal !== undefined && { principal }) };
}

/** The fields each auth op takes besides `op`. */
const AUTH_OP_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'enable': ['tokenKey'], 'disable': [], 'user-add': ['user', 'password'],
  'user-delete': ['user'], 'user-passwd': ['user', 'password'],
  'user-grant-role': ['user', 'role'], 'user-revoke-role': ['user', 'role'],
  'role-add': ['role'], 'role-delete': ['role'], 'role-grant-permission': ['role', 'permission'],
  'role-revoke-permission': ['role', 'key', 'prefix'],
};

/** An auth op's fields (shapes only; `authOpProblems` judges them). */
export function readAuthOp(f: Fields): KvAuthOp {
  const op = f['op'];
  const fields = typeof op === 'string' ? AUTH_OP_FIELDS[op] : undefined;
  if (typeof op !== 'string' || fields === undefined) {
    throw new ShapeError(`op: unknown auth op ${JSON.stringify(op)}`);
  }
  for (const name of AUTH_FIELDS) {
    if (name !== 'op' && f[name] !== undefined && !fields.includes(name)) {
      throw new ShapeError(`${name}: unknown field for ${op}`);
    }
  }
  const out: Record<string, unknown> = { op };
  for (const name of fields) {
    if (name === 'prefix') {
      const prefix = readOptionalBoolean(f, 'prefix', '');
      if (prefix === true) out['prefix'] = true;
    } else if (name === 'password') {
      if (!isPasswordHash(f['password'])) {
        throw new ShapeError('password must be { salt, hash, N, r, p }');
      }
      out['password'] = f['password'];
    } else if (name === 'permission') {
      if (!isPermission(f['permission'])) {
        throw new ShapeError('permission must be { type: read|write|readwrite, key, prefix? }');
      }
      out['permission'] = f['permission'];
    } else {
      out[name] = readString(f, name, '');
    }
  }
  return out as unknown as KvAuthOp;
}

const COMPARE_RESULTS: readonly string[] = ['equal', 'not-equal', 'greater', 'less'];

function readCompare(value: unknown, at: string): KvCompare {
  const base = readObject(value, at, ['key', 'target', 'result', 'value', 'version',
    'createRevision', 'modRevision']);
  const target = base['target'];
  const result = base['result'];
  if (typeof result !== 'string' || !COMPARE_RESULTS.includes(result)) {
    throw new ShapeError(`${at}.result must be one of ${COMPARE_RESULTS.join(', ')}`);
  }
  const common = { key: readString(base, 'key', `${at}.`), result: result as KvCompareResult };
  const p = `${at}.`;
  switch (target) {
    case 'value': {
      const f = readObject(value, at, ['key', 'target', 'result', 'value']);
      return { ...common, target, value: readString(f, 'value', p) };
    }
    case 'version': {
      const f = readObject(value, at, ['key', 'target', 'result', 'version']);
      return { ...common, target, version: readNumber(f, 'version', p) };
    }
    case 'createRevision': {
      const f = readObject(value, at, ['key', 'target', 'result', 'createRevision']);
      return { ...common, target, createRevision: readNumber(f, 'createRevision', p) };
    }
    case 'modRevision': {
      const f = readObject(value, at, ['key', 'target', 'result', 'modRevision']);
      return { ...common, target, modRevision: readNumber(f, 'modRevision', p) };
    }
    default:
      throw new ShapeError(`${at}.target: unknown target ${JSON.stringify(target)}`);
  }
}

function readOp(value: unknown, at: string): KvTxnOp {
  const kind = readObject(value, at, ['kind', 'key', 'value', 'prefix', 'prevKv', 'limit',
    'lease'])['kind'];
  const p = `${at}.`;
  switch (kind) {
    case 'put': {
      const f = readObject(value, at, ['kind', 'key', 'value', 'prevKv', 'lease']);
      const prevKv = readOptionalBoolean(f, 'prevKv', p);
      const lease = readOptionalNumber(f, 'lease', p);
      return { kind, key: readString(f, 'key', p), value: readString(f, 'value', p),
        ...(prevKv !== undefined && { prevKv }), ...(lease !== undefined && { lease }) };
    }
    case 'delete': {
      const f = readObject(value, at, ['kind', 'key', 'prefix', 'prevKv']);
      const prefix = readOptionalBoolean(f, 'prefix', p);
      const prevKv = readOptionalBoolean(f, 'prevKv', p);
      return { kind, key: readString(f, 'key', p), ...(prefix !== undefined && { prefix }),
        ...(prevKv !== undefined && { prevKv }) };
    }
    case 'range': {
      const f = readObject(value, at, ['kind', 'key', 'prefix', 'limit']);
      const prefix = readOptionalBoolean(f, 'prefix', p);
      const limit = f['limit'] === undefined ? undefined : readNumber(f, 'limit', p);
      return { kind, key: readString(f, 'key', p), ...(prefix !== undefined && { prefix }),
        ...(limit !== undefined && { limit }) };
    }
    default:
      throw new ShapeError(`${at}.kind: unknown op kind ${JSON.stringify(kind)}`);
  }
}
