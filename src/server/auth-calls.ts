/**
 * The calls that manage authentication (docs/api.md, "Authentication"): log in, turn auth on
 * and off, users, roles and permissions, as etcd's Auth service. Changes are `auth` commands
 * through the log (src/core/kv/auth.ts), so every member agrees on them; listings are read
 * from this member's store. While auth is on, every call here but `authenticate` and `status`
 * needs the role root (checked here, and again when a change applies).
 *
 * HTTP: `POST /v1/auth/<call>` for `auth-*`, `POST /v1/auth/user/<call>` and
 * `POST /v1/auth/role/<call>` for the others (`user-grant-role` is /v1/auth/user/grant-role).
 */
import {
  rootDenial, type KvAuthOp, type KvPermissionType,
} from '../core/kv/index.js';
import { CoordError } from '../errors.js';
import type { ConsistentCore, KvWrite } from '../runtime/core/consistent-core.js';
import { newTokenKey, type AuthGate } from './auth-gate.js';
import type { Body } from './client-requests.js';

export const AUTH_CALL_NAMES = ['auth-authenticate', 'auth-enable', 'auth-disable',
  'auth-status', 'user-add', 'user-delete', 'user-get', 'user-list', 'user-passwd',
  'user-grant-role', 'user-revoke-role', 'role-add', 'role-delete', 'role-get', 'role-list',
  'role-grant-permission', 'role-revoke-permission'] as const;

export type AuthCallName = typeof AUTH_CALL_NAMES[number];

/** Calls answered without a token while auth is on. */
export const OPEN_AUTH_CALLS: ReadonlySet<string> = new Set(['auth-authenticate',
  'auth-status']);

/** The HTTP path of an auth call. */
export function authCallPath(name: AuthCallName): string {
  const [group, ...rest] = name.split('-');
  return group === 'auth' ? `/v1/auth/${rest.join('-')}` : `/v1/auth/${group}/${rest.join('-')}`;
}

/** The fields each call takes (all required but `prefix`). */
const FIELDS: Readonly<Record<AuthCallName, readonly string[]>> = {
  'auth-authenticate': ['name', 'password'], 'auth-enable': [], 'auth-disable': [],
  'auth-status': [], 'user-add': ['name', 'password'], 'user-delete': ['name'],
  'user-get': ['name'], 'user-list': [], 'user-passwd': ['name', 'password'],
  'user-grant-role': ['name', 'role'], 'user-revoke-role': ['name', 'role'],
  'role-add': ['name'], 'role-delete': ['name'], 'role-get': ['name'], 'role-list': [],
  'role-grant-permission': ['name', 'type', 'key', 'prefix'],
  'role-revoke-permission': ['name', 'key', 'prefix'],
};

/** A call's body as strings (and `prefix`), each field checked; unknown fields refused. */
export function parseAuthBody(name: AuthCallName, body: Body): Readonly<Record<string, string>>
  & { readonly prefix?: boolean } {
  const allowed = FIELDS[name];
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) problems.push(`${field}: unknown field`);
  }
  for (const field of allowed) {
    const value = body[field];
    if (field === 'prefix') {
      if (value !== undefined && typeof value !== 'boolean') {
        problems.push('prefix: must be a boolean');
      }
      if (value === true) out['prefix'] = true;
    } else if (typeof value !== 'string') {
      problems.push(`${field}: must be a string`);
    } else {
      out[field] = value;
    }
  }
  if (name === 'role-grant-permission' && typeof out['type'] === 'string'
    && !['read', 'write', 'readwrite'].includes(out['type'])) {
    problems.push('type: must be "read", "write" or "readwrite"');
  }
  if (problems.length > 0) throw new CoordError('CONCLAVE_REQUEST_INVALID', problems.join('; '));
  return out as Record<string, string> & { prefix?: boolean };
}

export interface AuthCallContext {
  readonly core: Pick<ConsistentCore, 'store'>;
  readonly gate: AuthGate;
  /** The caller, when auth is on (client-calls.ts resolved its token). */
  readonly principal: string | undefined;
  /** Proposes a write as client-calls does (leader, quota, deadline). */
  readonly write: (command: KvWrite) => void;
  readonly ok: (body: unknown) => void;
  readonly fail: (error: CoordError) => void;
}

/** Runs auth call `name`; answers through the context. */
export function runAuthCall(c: AuthCallContext, name: AuthCallName, body: Body): void {
  const f = parseAuthBody(name, body);
  const auth = c.core.store.auth;
  if (name === 'auth-authenticate') {
    return c.gate.authenticate(f['name'] as string, f['password'] as string,
      (answer) => (answer instanceof CoordError ? c.fail(answer) : c.ok(answer)));
  }
  if (name === 'auth-status') return c.ok({ enabled: auth.enabled });
  if (c.principal !== undefined) {
    const denied = rootDenial(auth, c.principal, name);
    if (denied !== undefined) return c.fail(new CoordError('CONCLAVE_PERMISSION_DENIED', denied));
  }
  const read = readAnswer(c, name, f);
  if (read !== undefined) return read instanceof CoordError ? c.fail(read) : c.ok(read);
  const propose = (op: KvAuthOp): void => c.write({ kind: 'auth', ...op,
    ...(c.principal === undefined ? {} : { principal: c.principal }) } as KvWrite);
  if (name === 'user-add' || name === 'user-passwd') {
    return c.gate.hashPassword(f['password'] as string, (hash) => {
      if (hash instanceof CoordError) return c.fail(hash);
      propose({ op: name, user: f['name'] as string, password: hash });
    });
  }
  propose(authOp(name, f));
}

function authOp(name: AuthCallName, f: Readonly<Record<string, string>> & { prefix?: boolean })
  : KvAuthOp {
  const user = f['name'] as string;
  const role = (name.startsWith('role-') ? f['name'] : f['role']) as string;
  const prefix = f.prefix === true ? { prefix: true } : {};
  switch (name) {
    case 'auth-enable': return { op: 'enable', tokenKey: newTokenKey() };
    case 'auth-disable': return { op: 'disable' };
    case 'user-delete': return { op: name, user };
    case 'user-grant-role':
    case 'user-revoke-role':
      return { op: name, user, role };
    case 'role-add':
    case 'role-delete':
      return { op: name, role };
    case 'role-grant-permission':
      return { op: name, role, permission: { type: f['type'] as KvPermissionType,
        key: f['key'] as string, ...prefix } };
    case 'role-revoke-permission':
      return { op: name, role, key: f['key'] as string, ...prefix };
    default:
      throw new CoordError('CONCLAVE_USAGE', `${name} is not a change`);
  }
}

/** The answer of a listing call (from this member's store), or undefined for a change. */
function readAnswer(c: AuthCallContext, name: AuthCallName,
  f: Readonly<Record<string, string>>): unknown {
  const auth = c.core.store.auth;
  switch (name) {
    case 'user-list':
      return { users: auth.userNames() };
    case 'role-list':
      return { roles: auth.roleNames() };
    case 'user-get': {
      const user = auth.user(f['name'] as string);
      // Never the password hash: it stays in the store.
      return user === undefined ? notFound('user', f['name']) : { name: user.name,
        roles: user.roles };
    }
    case 'role-get': {
      const role = auth.role(f['name'] as string);
      return role === undefined ? notFound('role', f['name']) : { name: role.name,
        permissions: role.permissions };
    }
    default:
      return undefined;
  }
}

function notFound(what: string, name: string | undefined): CoordError {
  return new CoordError('CONCLAVE_REQUEST_INVALID', `no ${what} ${name ?? ''}`);
}
