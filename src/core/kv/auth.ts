/**
 * Users, roles and permissions, replicated with the key-value store (etcd's auth store is the
 * model): every member applies the same `auth` commands in log order, so every member judges a
 * request alike, and the state rides in snapshots (an `auth` section, snapshot-sections.ts).
 *
 * Pure: passwords arrive already hashed (scrypt, by the member that took the request: hashing
 * needs randomness for the salt, which the core may not draw), and the token signing key of
 * `enable` is drawn by the proposer too. The core only stores them and decides.
 *
 * - A permission grants `read`, `write` or `readwrite` on one key, or on every key that starts
 *   with `key` (`prefix: true`; the empty prefix is every key).
 * - The role `root` is built in: it always exists, holds every permission, and cannot be
 *   deleted or given permissions. The user `root` holds it from its creation, and `enable`
 *   requires that user (as etcd requires a root user before auth is turned on).
 * - A user's `passwordIndex` is the log index of the command that set its password: tokens
 *   carry it, so a new password (or a deleted and re-added user) ends every older token.
 */
import { isWellFormed } from './text.js';
import type { KvKeySelector, KvProblem } from './types.js';

export type KvPermissionType = 'read' | 'write' | 'readwrite';

export interface KvPermission {
  readonly type: KvPermissionType;
  readonly key: string;
  /** When true, `key` is a prefix (the empty prefix: every key). Default: false. */
  readonly prefix?: boolean;
}

/** scrypt's output and the parameters it was made with (server/auth-gate.ts says why these). */
export interface KvPasswordHash {
  /** Base64 of the random salt. */
  readonly salt: string;
  /** Base64 of scrypt(password, salt, N, r, p). */
  readonly hash: string;
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

export interface KvAuthUser {
  readonly name: string;
  /** Sorted, without duplicates. */
  readonly roles: readonly string[];
  readonly password: KvPasswordHash;
  /** The log index of the command that set the password (tokens carry it). */
  readonly passwordIndex: number;
}

export interface KvAuthRole {
  readonly name: string;
  readonly permissions: readonly KvPermission[];
}

/** The auth state as plain data (the snapshot's `auth` section). */
export interface KvAuthSnapshot {
  readonly enabled: boolean;
  /** Hex of the token signing key drawn by the proposer of the latest `enable`; '' before. */
  readonly tokenKey: string;
  /** In name order. */
  readonly users: readonly KvAuthUser[];
  /** In name order; `root` is built in and never listed. */
  readonly roles: readonly KvAuthRole[];
}

export type KvAuthOp =
  | { readonly op: 'enable'; readonly tokenKey: string }
  | { readonly op: 'disable' }
  | { readonly op: 'user-add'; readonly user: string; readonly password: KvPasswordHash }
  | { readonly op: 'user-delete'; readonly user: string }
  | { readonly op: 'user-passwd'; readonly user: string; readonly password: KvPasswordHash }
  | { readonly op: 'user-grant-role'; readonly user: string; readonly role: string }
  | { readonly op: 'user-revoke-role'; readonly user: string; readonly role: string }
  | { readonly op: 'role-add'; readonly role: string }
  | { readonly op: 'role-delete'; readonly role: string }
  | { readonly op: 'role-grant-permission'; readonly role: string;
    readonly permission: KvPermission }
  | { readonly op: 'role-revoke-permission'; readonly role: string; readonly key: string;
    readonly prefix?: boolean };

export type KvAuthOpName = KvAuthOp['op'];

export const KV_AUTH_OPS: readonly KvAuthOpName[] = ['enable', 'disable', 'user-add',
  'user-delete', 'user-passwd', 'user-grant-role', 'user-revoke-role', 'role-add',
  'role-delete', 'role-grant-permission', 'role-revoke-permission'];

export const ROOT = 'root';

/**
 * Bounds of the auth state. Users and roles: 1000 each (etcd sets none; an installation with
 * more principals than that wants an external identity provider, and the whole table is
 * checked on every request's role walk only for the caller's own roles, so size costs memory,
 * not time). Roles per user 64 and permissions per role 256: a permission check walks them.
 */
export const AUTH_BOUNDS = Object.freeze({
  usersMax: 1000,
  rolesMax: 1000,
  userRolesMax: 64,
  rolePermissionsMax: 256,
  /** User and role names: 1 to 64 characters. */
  nameLengthMax: 64,
});

const NAME_PATTERN = /^[A-Za-z0-9._@-]+$/;
const PERMISSION_TYPES: readonly string[] = ['read', 'write', 'readwrite'];

/** Why `name` is not a user or role name, or undefined. */
export function authNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0
    || name.length > AUTH_BOUNDS.nameLengthMax || !NAME_PATTERN.test(name)) {
    return `must be 1 to ${AUTH_BOUNDS.nameLengthMax} characters of A-Z a-z 0-9 . _ @ -`;
  }
  return undefined;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function hashProblems(hash: KvPasswordHash, field: string, problems: KvProblem[]): void {
  const power = Number.isSafeInteger(hash.N) && hash.N >= 1024 && hash.N <= 1_048_576
    && (hash.N & (hash.N - 1)) === 0;
  if (!power) problems.push({ field: `${field}.N`, rule: 'a power of two from 2^10 to 2^20' });
  if (!(Number.isSafeInteger(hash.r) && hash.r >= 1 && hash.r <= 32)) {
    problems.push({ field: `${field}.r`, rule: 'an integer from 1 to 32' });
  }
  if (!(Number.isSafeInteger(hash.p) && hash.p >= 1 && hash.p <= 16)) {
    problems.push({ field: `${field}.p`, rule: 'an integer from 1 to 16' });
  }
  for (const part of ['salt', 'hash'] as const) {
    const text = hash[part];
    if (typeof text !== 'string' || text.length < 16 || text.length > 128 || !BASE64.test(text)) {
      problems.push({ field: `${field}.${part}`, rule: 'base64 of 12 to 96 bytes' });
    }
  }
}

/** Every rule an auth op breaks (shape of names, keys and hashes); empty when valid. */
export function authOpProblems(op: KvAuthOp, keyProblems: (field: string, key: unknown,
  prefix: boolean) => readonly KvProblem[]): KvProblem[] {
  const problems: KvProblem[] = [];
  const name = (field: string, value: unknown): void => {
    const problem = authNameProblem(value);
    if (problem !== undefined) problems.push({ field, rule: problem });
  };
  switch (op.op) {
    case 'enable':
      if (typeof op.tokenKey !== 'string' || !/^[0-9a-f]{64}$/.test(op.tokenKey)) {
        problems.push({ field: 'tokenKey', rule: '64 hex digits (32 random bytes)' });
      }
      break;
    case 'disable':
      break;
    case 'user-add':
    case 'user-passwd':
      name('user', op.user);
      hashProblems(op.password, 'password', problems);
      break;
    case 'user-delete':
      name('user', op.user);
      break;
    case 'user-grant-role':
    case 'user-revoke-role':
      name('user', op.user);
      name('role', op.role);
      break;
    case 'role-add':
    case 'role-delete':
      name('role', op.role);
      break;
    case 'role-grant-permission': {
      name('role', op.role);
      const p = op.permission;
      if (!PERMISSION_TYPES.includes(p.type)) {
        problems.push({ field: 'permission.type', rule: 'read, write or readwrite' });
      }
      problems.push(...keyProblems('permission.key', p.key, p.prefix === true));
      break;
    }
    case 'role-revoke-permission':
      name('role', op.role);
      problems.push(...keyProblems('key', op.key, op.prefix === true));
      break;
  }
  return problems;
}

/** What `AuthTable.apply` answers: done, or refused with a reason (nothing changed). */
export type AuthApplied = { readonly kind: 'ok' }
  | { readonly kind: 'refused'; readonly reason: string };

const OK: AuthApplied = { kind: 'ok' };
const refused = (reason: string): AuthApplied => ({ kind: 'refused', reason });

export class AuthTable {
  private enabledValue = false;
  private tokenKeyValue = '';
  private readonly users = new Map<string, KvAuthUser>();
  private readonly roles = new Map<string, KvAuthRole>();

  constructor(snapshot?: KvAuthSnapshot) {
    if (snapshot === undefined) return;
    this.enabledValue = snapshot.enabled;
    this.tokenKeyValue = snapshot.tokenKey;
    for (const user of snapshot.users) this.users.set(user.name, user);
    for (const role of snapshot.roles) this.roles.set(role.name, role);
  }

  get enabled(): boolean {
    return this.enabledValue;
  }

  /** Hex of the token signing key ('' before the first `enable`). Never sent to clients. */
  get tokenKey(): string {
    return this.tokenKeyValue;
  }

  /** True when nothing was ever set: the snapshot then carries no auth section. */
  get empty(): boolean {
    return !this.enabledValue && this.tokenKeyValue === '' && this.users.size === 0
      && this.roles.size === 0;
  }

  user(name: string): KvAuthUser | undefined {
    return this.users.get(name);
  }

  role(name: string): KvAuthRole | undefined {
    if (name === ROOT) return { name: ROOT, permissions: [{ type: 'readwrite', key: '',
      prefix: true }] };
    return this.roles.get(name);
  }

  userNames(): string[] {
    return [...this.users.keys()].sort();
  }

  /** Every role, `root` first. */
  roleNames(): string[] {
    return [ROOT, ...[...this.roles.keys()].sort()];
  }

  /** True for a user holding the `root` role. */
  isRoot(name: string | undefined): boolean {
    return name !== undefined && (this.users.get(name)?.roles.includes(ROOT) ?? false);
  }

  /** Whether `user` may `need` every key `selector` covers. */
  permits(name: string, selector: KvKeySelector, need: 'read' | 'write'): boolean {
    const user = this.users.get(name);
    if (user === undefined) return false;
    if (user.roles.includes(ROOT)) return true;
    for (const roleName of user.roles) {
      const role = this.roles.get(roleName);
      if (role === undefined) continue;
      for (const permission of role.permissions) {
        if (permission.type !== 'readwrite' && permission.type !== need) continue;
        if (covers(permission, selector)) return true;
      }
    }
    return false;
  }

  toSnapshot(): KvAuthSnapshot {
    const byName = <T extends { name: string }>(items: Iterable<T>): T[] =>
      [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { enabled: this.enabledValue, tokenKey: this.tokenKeyValue,
      users: byName(this.users.values()), roles: byName(this.roles.values()) };
  }

  /** Applies a valid op of log entry `index`; a refusal changes nothing. */
  apply(index: number, op: KvAuthOp): AuthApplied {
    switch (op.op) {
      case 'enable':
        if (!this.users.has(ROOT)) {
          return refused('auth cannot be enabled without a user "root" (conclave user add root)');
        }
        if (!this.enabledValue) this.tokenKeyValue = op.tokenKey;
        this.enabledValue = true;
        return OK;
      case 'disable':
        this.enabledValue = false;
        return OK;
      default:
        return op.op.startsWith('user-') ? this.applyUser(index, op) : this.applyRole(op);
    }
  }

  private applyUser(index: number, op: KvAuthOp): AuthApplied {
    switch (op.op) {
      case 'user-add':
        if (this.users.has(op.user)) return refused(`user ${op.user} exists`);
        if (this.users.size >= AUTH_BOUNDS.usersMax) {
          return refused(`the cluster holds its maximum of ${AUTH_BOUNDS.usersMax} users`);
        }
        this.users.set(op.user, { name: op.user, roles: op.user === ROOT ? [ROOT] : [],
          password: op.password, passwordIndex: index });
        return OK;
      case 'user-delete':
        if (!this.users.has(op.user)) return refused(`no user ${op.user}`);
        if (op.user === ROOT && this.enabledValue) {
          return refused('the user root cannot be deleted while auth is enabled');
        }
        this.users.delete(op.user);
        return OK;
      case 'user-passwd':
        return this.updateUser(op.user, (u) => ({ ...u, password: op.password,
          passwordIndex: index }));
      case 'user-grant-role':
        if (this.role(op.role) === undefined) return refused(`no role ${op.role}`);
        return this.updateUser(op.user, (u) => {
          if (u.roles.includes(op.role)) return u;
          if (u.roles.length >= AUTH_BOUNDS.userRolesMax) {
            return `a user holds at most ${AUTH_BOUNDS.userRolesMax} roles`;
          }
          return { ...u, roles: [...u.roles, op.role].sort() };
        });
      case 'user-revoke-role':
        if (op.user === ROOT && op.role === ROOT && this.enabledValue) {
          return refused('the user root keeps the role root while auth is enabled');
        }
        return this.updateUser(op.user, (u) => (u.roles.includes(op.role)
          ? { ...u, roles: u.roles.filter((r) => r !== op.role) }
          : `user ${op.user} does not hold role ${op.role}`));
      default:
        return refused(`not a user op: ${op.op}`);
    }
  }

  private updateUser(name: string, change: (user: KvAuthUser) => KvAuthUser | string)
    : AuthApplied {
    const user = this.users.get(name);
    if (user === undefined) return refused(`no user ${name}`);
    const changed = change(user);
    if (typeof changed === 'string') return refused(changed);
    this.users.set(name, changed);
    return OK;
  }

  private applyRole(op: KvAuthOp): AuthApplied {
    if (!('role' in op)) return refused(`not a role op: ${op.op}`);
    if (op.role === ROOT) return refused('the role root is built in and cannot be changed');
    const role = this.roles.get(op.role);
    switch (op.op) {
      case 'role-add':
        if (role !== undefined) return refused(`role ${op.role} exists`);
        if (this.roles.size >= AUTH_BOUNDS.rolesMax) {
          return refused(`the cluster holds its maximum of ${AUTH_BOUNDS.rolesMax} roles`);
        }
        this.roles.set(op.role, { name: op.role, permissions: [] });
        return OK;
      case 'role-delete':
        if (role === undefined) return refused(`no role ${op.role}`);
        this.roles.delete(op.role);
        for (const user of [...this.users.values()]) {
          if (user.roles.includes(op.role)) {
            this.users.set(user.name, { ...user, roles: user.roles.filter((r) => r !== op.role) });
          }
        }
        return OK;
      case 'role-grant-permission':
        return role === undefined ? refused(`no role ${op.role}`) : this.grant(role, op.permission);
      case 'role-revoke-permission': {
        if (role === undefined) return refused(`no role ${op.role}`);
        const kept = role.permissions.filter((p) => !samePermissionKey(p, op.key, op.prefix));
        if (kept.length === role.permissions.length) {
          return refused(`role ${op.role} has no permission on ${describeKey(op.key, op.prefix)}`);
        }
        this.roles.set(op.role, { ...role, permissions: kept });
        return OK;
      }
      default:
        return refused(`not a role op: ${op.op}`);
    }
  }

  /** A grant on a key the role already has replaces that permission's type (as etcd). */
  private grant(role: KvAuthRole, permission: KvPermission): AuthApplied {
    const rest = role.permissions.filter((p) =>
      !samePermissionKey(p, permission.key, permission.prefix));
    if (rest.length >= AUTH_BOUNDS.rolePermissionsMax) {
      return refused(`a role holds at most ${AUTH_BOUNDS.rolePermissionsMax} permissions`);
    }
    const canonical: KvPermission = { type: permission.type, key: permission.key,
      ...(permission.prefix === true && { prefix: true }) };
    this.roles.set(role.name, { ...role, permissions: [...rest, canonical] });
    return OK;
  }
}

function samePermissionKey(p: KvPermission, key: string, prefix: boolean | undefined): boolean {
  return p.key === key && (p.prefix === true) === (prefix === true);
}

function describeKey(key: string, prefix: boolean | undefined): string {
  return prefix === true ? `the prefix "${key}"` : `the key "${key}"`;
}

/** Whether `permission`'s keys include every key `selector` covers. */
export function covers(permission: KvPermission, selector: KvKeySelector): boolean {
  if (permission.prefix === true) return selector.key.startsWith(permission.key);
  return selector.prefix !== true && selector.key === permission.key;
}

// ---------------------------------------------------------------------------------------------
// Shapes (snapshot decoding and command decoding read through these)

type Fields = Readonly<Record<string, unknown>>;
const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function isPasswordHash(value: unknown): value is KvPasswordHash {
  return isObject(value) && typeof value['salt'] === 'string'
    && typeof value['hash'] === 'string' && typeof value['N'] === 'number'
    && typeof value['r'] === 'number' && typeof value['p'] === 'number'
    && Object.keys(value).length === 5;
}

export function isPermission(value: unknown): value is KvPermission {
  return isObject(value) && typeof value['type'] === 'string'
    && PERMISSION_TYPES.includes(value['type']) && typeof value['key'] === 'string'
    && isWellFormed(value['key'])
    && (value['prefix'] === undefined || typeof value['prefix'] === 'boolean');
}

/** Why `value` is not an auth snapshot, or undefined. */
export function authSnapshotProblem(value: unknown): string | undefined {
  if (!isObject(value) || typeof value['enabled'] !== 'boolean'
    || typeof value['tokenKey'] !== 'string' || !Array.isArray(value['users'])
    || !Array.isArray(value['roles'])) {
    return 'snapshot.auth must be { enabled, tokenKey, users, roles }';
  }
  const users = value['users'] as readonly unknown[];
  const bad = users.findIndex((u) => !(isObject(u) && authNameProblem(u['name']) === undefined
    && Array.isArray(u['roles']) && u['roles'].every((r) => authNameProblem(r) === undefined)
    && isPasswordHash(u['password']) && typeof u['passwordIndex'] === 'number'));
  if (bad >= 0) return `snapshot.auth.users[${bad}] is malformed`;
  const roles = value['roles'] as readonly unknown[];
  const badRole = roles.findIndex((r) => !(isObject(r) && authNameProblem(r['name']) === undefined
    && r['name'] !== ROOT && Array.isArray(r['permissions'])
    && r['permissions'].every(isPermission)));
  if (badRole >= 0) return `snapshot.auth.roles[${badRole}] is malformed`;
  if (value['enabled'] === true && !users.some((u) => isObject(u) && u['name'] === ROOT)) {
    return 'snapshot.auth is enabled without a user root';
  }
  return undefined;
}
