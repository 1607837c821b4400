/**
 * What a page may ask over its feed, validated into typed requests (trust nothing that
 * arrives: a bad request gets a clear error frame, never a crash). All are reads.
 */
import { validateKvRangeRequest } from '../core/kv/index.js';
import { KV_STORE_DEFAULTS } from '../core/kv/index.js';

export type PageRequest =
  | { readonly type: 'keys'; readonly id: number; readonly prefix: string }
  | { readonly type: 'key-history'; readonly id: number; readonly key: string }
  | { readonly type: 'watch'; readonly id: number; readonly prefix: string }
  | { readonly type: 'unwatch'; readonly id: number }
  /** The page's tab changed: whether the tab in view shows the leases. */
  | { readonly type: 'view'; readonly id: number; readonly leases: boolean };

export type ParsedPageRequest =
  | { readonly kind: 'ok'; readonly request: PageRequest }
  | { readonly kind: 'invalid'; readonly problem: string };

export function parsePageRequest(text: string): ParsedPageRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return invalid('not JSON');
  }
  if (typeof value !== 'object' || value === null) return invalid('not a JSON object');
  const r = value as Record<string, unknown>;
  const id = r['id'];
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return invalid('id must be an integer');
  switch (r['type']) {
    case 'keys':
    case 'watch':
      return withKey(r['type'], id, r['prefix'], true);
    case 'key-history':
      return withKey('key-history', id, r['key'], false);
    case 'unwatch':
      return { kind: 'ok', request: { type: 'unwatch', id } };
    case 'view':
      if (typeof r['leases'] !== 'boolean') return invalid('leases must be true or false');
      return { kind: 'ok', request: { type: 'view', id, leases: r['leases'] } };
    default:
      return invalid(`unknown request type ${JSON.stringify(r['type'])}`);
  }
}

function withKey(type: 'keys' | 'watch' | 'key-history', id: number, key: unknown,
  prefix: boolean): ParsedPageRequest {
  if (typeof key !== 'string') return invalid(`${prefix ? 'prefix' : 'key'} must be a string`);
  const problems = validateKvRangeRequest({ key, prefix }, KV_STORE_DEFAULTS);
  if (problems.length > 0) {
    return invalid(problems.map((p) => `${p.field}: ${p.rule}`).join('; '));
  }
  if (type === 'key-history') return { kind: 'ok', request: { type, id, key } };
  return { kind: 'ok', request: { type, id, prefix: key } };
}

function invalid(problem: string): ParsedPageRequest {
  return { kind: 'invalid', problem };
}
