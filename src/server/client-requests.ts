/**
 * Client requests of the HTTP API, validated into typed values before anything acts on them.
 * Strict: a body must be valid UTF-8 holding one JSON object, every field must have its
 * documented type, and an unknown field is an error (a misspelt `prevKV` must not be silently
 * ignored). Every problem is a CONCLAVE_REQUEST_INVALID naming the field (`limit: must be an
 * integer >= 0`). Limits (key and value sizes, op counts) are the store's to judge next.
 *
 * Text: bodies that are not valid UTF-8 are refused, and so are strings with lone surrogates
 * (`"\ud800"`, checked by the store): keys and values are Unicode text; binary data must be
 * encoded (base64, say) by the client.
 */
import { parseKvCommand, type KvKeySelector, type KvRangeRequest } from '../core/kv/index.js';
import { CoordError } from '../errors.js';
import type { KvWrite } from '../runtime/core/consistent-core.js';

export type Body = Readonly<Record<string, unknown>>;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function invalid(message: string): CoordError {
  return new CoordError('CONCLAVE_REQUEST_INVALID', message);
}

/** The body as a JSON object; an empty body is `{}`. */
export function decodeJsonBody(bytes: Uint8Array | undefined): Body {
  if (bytes === undefined || bytes.length === 0) return {};
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw invalid('body is not valid UTF-8 (keys and values are text: encode binary data, '
      + 'e.g. as base64)');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalid(`body is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalid('body must be a JSON object');
  }
  return parsed as Body;
}

/** Field problems, collected so one answer names them all. */
class Problems {
  readonly list: string[] = [];

  unknownFields(body: Body, allowed: ReadonlySet<string>): void {
    for (const name of Object.keys(body)) {
      if (!allowed.has(name)) this.list.push(`${name}: unknown field`);
    }
  }

  string(body: Body, name: string, required: boolean): string | undefined {
    const value = body[name];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string') {
      this.list.push(`${name}: must be a string`);
      return undefined;
    }
    return value;
  }

  integer(body: Body, name: string, min: number, required: boolean): number | undefined {
    const value = body[name];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
      this.list.push(`${name}: must be an integer >= ${min}`);
      return undefined;
    }
    return value;
  }

  boolean(body: Body, name: string): boolean | undefined {
    const value = body[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') {
      this.list.push(`${name}: must be a boolean`);
      return undefined;
    }
    return value;
  }

  oneOf<T extends string>(body: Body, name: string, values: readonly T[]): T | undefined {
    const value = body[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      this.list.push(`${name}: must be one of ${values.map((v) => `"${v}"`).join(', ')}`);
      return undefined;
    }
    return value as T;
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw invalid(this.list.join('; '));
  }
}

/** The write kind of each write path. */
export const WRITE_PATHS = {
  '/v1/kv/put': 'put',
  '/v1/kv/delete': 'delete',
  '/v1/kv/txn': 'txn',
  '/v1/kv/compact': 'compact',
  '/v1/lease/grant': 'lease-grant',
  '/v1/lease/revoke': 'lease-revoke',
} as const satisfies Readonly<Record<string, KvWrite['kind']>>;

export type WritePath = keyof typeof WRITE_PATHS;

export function isWritePath(path: string): path is WritePath {
  return Object.hasOwn(WRITE_PATHS, path);
}

/**
 * A write's body as the command it asks for. The command's own shape rules apply (the codec's
 * strict reader: types, known fields, `txn` ops and compares); `kind` and `nowMs` are the
 * server's to set, so a body naming them is refused. `clientId` and `sequence` are optional,
 * together: with them a retry is applied at most once, without them every request applies.
 */
export function parseWrite(path: WritePath, body: Body): KvWrite {
  // `kind`, `nowMs` and `principal` are the server's to set (the principal from the token).
  const problems = new Problems();
  for (const name of ['kind', 'nowMs', 'principal']) {
    if (Object.hasOwn(body, name)) problems.list.push(`${name}: unknown field`);
  }
  problems.throwIfAny();
  const kind = WRITE_PATHS[path];
  // A transaction's lists may be left out: none.
  const lists = kind === 'txn' ? { compare: [], success: [], failure: [] } : {};
  const parsed = parseKvCommand({ ...lists, ...body, kind, nowMs: 0 });
  if (parsed.kind === 'decode-error') throw invalid(parsed.reason.replace(/ must /, ': must '));
  const { nowMs: _, ...write } = parsed as typeof parsed & { nowMs: number };
  return write as KvWrite;
}

const RANGE_FIELDS: ReadonlySet<string> = new Set(['key', 'prefix', 'limit', 'revision',
  'consistency', 'clientId', 'sequence']);

/**
 * A range body. `clientId` and `sequence` are accepted and ignored: a linearizable read takes
 * no log entry here, but clients that stamp their reads (the TypeScript client does) are not
 * refused for it.
 */
export function parseRange(body: Body): {
  request: KvRangeRequest; consistency: 'linearizable' | 'serializable';
} {
  const p = new Problems();
  p.unknownFields(body, RANGE_FIELDS);
  const key = p.string(body, 'key', true);
  const prefix = p.boolean(body, 'prefix');
  const limit = p.integer(body, 'limit', 0, false);
  const revision = p.integer(body, 'revision', 0, false);
  const consistency = p.oneOf(body, 'consistency', ['linearizable', 'serializable'] as const);
  p.string(body, 'clientId', false);
  p.integer(body, 'sequence', 1, false);
  p.throwIfAny();
  return {
    request: { key: key as string, ...(prefix !== undefined && { prefix }),
      ...(limit !== undefined && { limit }), ...(revision !== undefined && { revision }) },
    consistency: consistency ?? 'linearizable',
  };
}

const KEEPALIVE_FIELDS: ReadonlySet<string> = new Set(['leaseId']);
const TTL_FIELDS: ReadonlySet<string> = new Set(['leaseId', 'keys']);

/** A keep-alive (`{ leaseId }`) or time-to-live (`{ leaseId, keys? }`) body. */
export function parseLeaseQuery(body: Body, withKeys: boolean): { leaseId: number; keys: boolean } {
  const p = new Problems();
  p.unknownFields(body, withKeys ? TTL_FIELDS : KEEPALIVE_FIELDS);
  const leaseId = p.integer(body, 'leaseId', 1, true);
  const keys = withKeys ? p.boolean(body, 'keys') : undefined;
  p.throwIfAny();
  return { leaseId: leaseId as number, keys: keys === true };
}

const WATCH_PARAMS: ReadonlySet<string> = new Set(['key', 'prefix', 'fromRevision']);

/** `GET /v1/watch?key=K&prefix=true&fromRevision=R`: each parameter at most once. */
export function parseWatchQuery(params: URLSearchParams): {
  selector: KvKeySelector; fromRevision: number;
} {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!WATCH_PARAMS.has(name)) problems.push(`${name}: unknown parameter`);
    else if (seen.has(name)) problems.push(`${name}: given more than once`);
    seen.add(name);
  }
  const prefixText = params.get('prefix');
  const prefix = prefixText === null || prefixText === 'false' || prefixText === '0' ? false
    : prefixText === 'true' || prefixText === '1' ? true : undefined;
  if (prefix === undefined) problems.push('prefix: must be true, false, 1 or 0');
  const fromText = params.get('fromRevision') ?? '0';
  const fromRevision = /^\d{1,16}$/.test(fromText) ? Number(fromText) : Number.NaN;
  if (!Number.isSafeInteger(fromRevision)) {
    problems.push('fromRevision: must be an integer >= 0');
  }
  if (problems.length > 0) throw invalid(problems.join('; '));
  return { selector: { key: params.get('key') ?? '', ...(prefix === true && { prefix }) },
    fromRevision };
}

const WATCH_FIELDS: ReadonlySet<string> = new Set(['key', 'prefix', 'fromRevision']);

/** A watch asked for in a body (the stream's `watch` call): `{ key, prefix?, fromRevision? }`. */
export function parseWatchBody(body: Body): { selector: KvKeySelector; fromRevision: number } {
  const p = new Problems();
  p.unknownFields(body, WATCH_FIELDS);
  const key = p.string(body, 'key', true);
  const prefix = p.boolean(body, 'prefix');
  const fromRevision = p.integer(body, 'fromRevision', 0, false);
  p.throwIfAny();
  return { selector: { key: key as string, ...(prefix === true && { prefix }) },
    fromRevision: fromRevision ?? 0 };
}
