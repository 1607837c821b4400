/**
 * Passwords and tokens at the client door (docs/security.md, "Authentication"). The users,
 * roles and the token key live in the replicated store (src/core/kv/auth.ts); this module does
 * what needs a clock, randomness or CPU time the core may not spend: scrypt, and tokens.
 *
 * Passwords: scrypt (node:crypto, memory-hard: a guess costs as much memory as a login) with a
 * 16-byte random salt per hash and N = 2^15, r = 8, p = 1: 32 MiB and about 100 ms of one core
 * per hash on the development machine. Why these: OWASP's floor for scrypt is 2^17 with r = 8
 * (128 MiB), more than a coordination member should spend per login while it serves a
 * cluster; 2^15 keeps an offline guess at about 32 MiB and 0.1 s (a dictionary of a billion
 * passwords takes three core-years per user) while a member holds at most
 * `AUTHENTICATIONS_INFLIGHT_MAX` hashes at once (128 MiB at worst). Clients hash once per
 * login, not per call: calls carry a token. The parameters are stored with each hash, so
 * raising them later needs only new passwords.
 *
 * Tokens: signed, not stored. A token is `base64url(JSON {u, i, e}) "." base64url(HMAC-SHA256)`
 * over the payload with the cluster's token key (32 random bytes drawn by the member that
 * proposed `auth enable`, replicated in the store): `u` the user, `i` the log index that set
 * its password (a new password or a deleted user ends its tokens), `e` the expiry in wall
 * time. Why signed tokens with a shared key rather than etcd's "simple" tokens kept per
 * member: every member can check every token, so a leader change, a restart or a client moving
 * to another member changes nothing (simple tokens die with the member that issued them); and
 * the member keeps no table of tokens to bound. The cost: a token cannot be revoked before its
 * expiry except by changing the user's password, deleting the user, or turning auth off and on
 * (a new key). Expiry is checked on each member's wall clock: keep member clocks within a
 * fraction of the TTL (NTP does).
 */
import { createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { rootDenial, type AuthTable, type KvPasswordHash } from '../core/kv/index.js';
import { CoordError } from '../errors.js';

export const SCRYPT_PARAMS = Object.freeze({ N: 2 ** 15, r: 8, p: 1, keyBytes: 32,
  saltBytes: 16 });

/**
 * scrypt computations running at once (logins, user add, passwd). Each takes 128·N·r bytes
 * (32 MiB): 4 bound a member's hashing memory at 128 MiB; more are refused
 * CONCLAVE_OVERLOADED (the client backs off and retries).
 */
export const AUTHENTICATIONS_INFLIGHT_MAX = 4;

/** Default token lifetime. Unit: ms. 5 minutes, as etcd's `--auth-token-ttl` (300 s). */
export const AUTH_TOKEN_TTL_MS_DEFAULT = 300_000;

/**
 * Tokens remembered as checked (the HMAC and JSON of a token are then not redone on every
 * call). Unit: tokens. 4096: far above the clients of one member; the cache is dropped whole
 * when full. Only tokens this cluster signed enter it, each at most 1024 characters: an entry
 * is about 300 bytes for a usual token and at most about 2.3 KiB, so 1.2 to 9.5 MiB in all.
 */
const CHECKED_TOKENS_MAX = 4096;

/** The longest password taken. Unit: UTF-8 bytes. scrypt hashes any length; 1 KiB is plenty. */
export const PASSWORD_BYTES_MAX = 1024;

export interface IssuedToken {
  readonly token: string;
  /** Unit: ms. */
  readonly ttlMs: number;
}

interface Checked {
  readonly user: string;
  readonly passwordIndex: number;
  readonly expiresAtMs: number;
  readonly key: string;
}

export class AuthGate {
  private hashing = 0;
  private readonly checked = new Map<string, Checked>();

  constructor(private readonly auth: () => AuthTable,
    private readonly wallMs: () => number = Date.now,
    readonly tokenTtlMs: number = AUTH_TOKEN_TTL_MS_DEFAULT) {}

  get enabled(): boolean {
    return this.auth().enabled;
  }

  /**
   * The user `token` speaks for, or the error to answer; undefined while auth is off (the
   * token is then ignored, as etcd ignores one).
   */
  principalOf(token: string | undefined): string | CoordError | undefined {
    const auth = this.auth();
    if (!auth.enabled) return undefined;
    if (token === undefined || token === '') {
      return invalid('auth is enabled: log in first (conclave --user NAME, or '
        + 'connect({ auth: { user, password } }))');
    }
    const checked = this.checked.get(token) ?? this.verify(token, auth.tokenKey);
    if (checked instanceof CoordError) return checked;
    if (checked.key !== auth.tokenKey) return invalid('the token was signed before auth was '
      + 'last enabled; log in again');
    if (checked.expiresAtMs <= this.wallMs()) return invalid('the token expired; log in again');
    const user = auth.user(checked.user);
    if (user === undefined || user.passwordIndex !== checked.passwordIndex) {
      return invalid(`the token of ${checked.user} was revoked (user deleted or password `
        + 'changed); log in again');
    }
    return checked.user;
  }

  /**
   * Checks `password` for `name` and answers a token. The same scrypt work runs for an unknown
   * user, so the time taken does not tell whether a user exists.
   */
  authenticate(name: string, password: string,
    done: (answer: IssuedToken | CoordError) => void): void {
    const auth = this.auth();
    if (!auth.enabled) {
      return done(new CoordError('CONCLAVE_REQUEST_INVALID', 'auth is not enabled '
        + '(conclave auth enable): calls need no token'));
    }
    const user = auth.user(name);
    const stored = user?.password ?? DECOY_HASH;
    this.scrypt(password, stored, (derived) => {
      if (derived instanceof CoordError) return done(derived);
      const expected = Buffer.from(stored.hash, 'base64');
      const match = user !== undefined && derived.length === expected.length
        && timingSafeEqual(derived, expected);
      if (!match) {
        return done(new CoordError('CONCLAVE_AUTH_FAILED', 'authentication failed: '
          + 'no such user, or a wrong password'));
      }
      // Checked again after the wait: the user may have changed meanwhile.
      const now = this.auth().user(name);
      if (now === undefined || now.passwordIndex !== user?.passwordIndex) {
        return done(new CoordError('CONCLAVE_AUTH_FAILED', 'authentication failed: the user '
          + 'changed during the login; try again'));
      }
      done(this.issue(name, now.passwordIndex, this.auth().tokenKey));
    });
  }

  /** A fresh salted hash of `password` (user add, passwd). */
  hashPassword(password: string, done: (hash: KvPasswordHash | CoordError) => void): void {
    const salt = randomBytes(SCRYPT_PARAMS.saltBytes).toString('base64');
    const params = { salt, hash: '', N: SCRYPT_PARAMS.N, r: SCRYPT_PARAMS.r, p: SCRYPT_PARAMS.p };
    this.scrypt(password, params, (derived) => {
      if (derived instanceof CoordError) return done(derived);
      done({ ...params, hash: derived.toString('base64') });
    });
  }

  /** A token for `user`, signed with `keyHex`. */
  issue(user: string, passwordIndex: number, keyHex: string): IssuedToken {
    const payload = Buffer.from(JSON.stringify({ u: user, i: passwordIndex,
      e: Math.floor(this.wallMs()) + this.tokenTtlMs })).toString('base64url');
    return { token: `${payload}.${sign(payload, keyHex)}`, ttlMs: this.tokenTtlMs };
  }

  private verify(token: string, keyHex: string): Checked | CoordError {
    const dot = token.indexOf('.');
    if (token.length > 1024 || dot < 1 || keyHex === '') return invalid('not a token');
    const payload = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(sign(payload, keyHex), 'base64url');
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
      return invalid('the token is not signed by this cluster');
    }
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return invalid('not a token');
    }
    const f = (fields ?? {}) as Record<string, unknown>;
    if (typeof f['u'] !== 'string' || typeof f['i'] !== 'number' || typeof f['e'] !== 'number') {
      return invalid('not a token');
    }
    const checked = { user: f['u'], passwordIndex: f['i'], expiresAtMs: f['e'], key: keyHex };
    if (this.checked.size >= CHECKED_TOKENS_MAX) this.checked.clear();
    this.checked.set(token, checked);
    return checked;
  }

  private scrypt(password: string, params: KvPasswordHash,
    done: (derived: Buffer | CoordError) => void): void {
    if (Buffer.byteLength(password) > PASSWORD_BYTES_MAX) {
      return done(new CoordError('CONCLAVE_REQUEST_INVALID',
        `password: at most ${PASSWORD_BYTES_MAX} bytes`));
    }
    if (this.hashing >= AUTHENTICATIONS_INFLIGHT_MAX) {
      return done(new CoordError('CONCLAVE_OVERLOADED', `this member is already hashing `
        + `${this.hashing} passwords (the most it does at once); retry shortly`));
    }
    this.hashing += 1;
    const keyBytes = params.hash === '' ? SCRYPT_PARAMS.keyBytes
      : Buffer.from(params.hash, 'base64').length;
    scrypt(password, Buffer.from(params.salt, 'base64'), keyBytes,
      { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r },
      (error, derived) => {
        this.hashing -= 1;
        if (error !== null) {
          return done(new CoordError('CONCLAVE_UNAVAILABLE', `scrypt failed: ${error.message}`));
        }
        done(derived);
      });
  }
}

/** A hash no password matches, hashed against for unknown users (same parameters, same cost). */
const DECOY_HASH: KvPasswordHash = { salt: Buffer.alloc(16, 7).toString('base64'),
  hash: Buffer.alloc(SCRYPT_PARAMS.keyBytes).toString('base64'), N: SCRYPT_PARAMS.N,
  r: SCRYPT_PARAMS.r, p: SCRYPT_PARAMS.p };

function sign(payload: string, keyHex: string): string {
  return createHmac('sha256', Buffer.from(keyHex, 'hex')).update(payload).digest('base64url');
}

function invalid(message: string): CoordError {
  return new CoordError('CONCLAVE_INVALID_TOKEN', message);
}

/** Why the bearer of `header` may not do what only root may (auth on), or undefined. */
export function rootRefusal(gate: AuthGate, auth: AuthTable,
  header: string | string[] | undefined): CoordError | undefined {
  const principal = gate.principalOf(bearerToken(header));
  if (principal === undefined || principal instanceof CoordError) return principal;
  const denied = rootDenial(auth, principal, 'this operator route');
  return denied === undefined ? undefined : new CoordError('CONCLAVE_PERMISSION_DENIED', denied);
}

/** A fresh token signing key for `auth enable`: 32 random bytes as hex. */
export function newTokenKey(): string {
  return randomBytes(32).toString('hex');
}

/** The token of an `Authorization: Bearer TOKEN` header (etcd's gateway takes the bare token). */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(value.trim());
  return match === null ? value.trim() : match[1];
}
