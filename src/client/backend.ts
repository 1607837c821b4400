/**
 * Which coordination service a client talks to: Conclave's own servers (the default), or an
 * etcd cluster users already run (docs/backends.md). The same Client either way: only the
 * transport underneath differs, so the recipes (election, lock, withLock, Fence, runOnce) are
 * one code on both.
 */
import type { ClientConfig, ConnectOptions } from './config.js';

/** etcd's user/password authentication (its token is fetched, then renewed when it expires). */
export interface EtcdAuthOptions {
  readonly user: string;
  readonly password: string;
}

/**
 * `connect({ backend: 'etcd', endpoints, tls?, auth? })`: etcd's client URLs (`host:port`,
 * `http://host:port`, `https://host:port`); every other option as for Conclave.
 */
export type EtcdConnectOptions = ConnectOptions & {
  readonly backend: 'etcd';
  readonly auth?: EtcdAuthOptions;
};

export type BackendConnectOptions = (ConnectOptions & { readonly backend?: 'conclave';
  /** Log in as this user (auth on: docs/security.md); the same shape as etcd's option. */
  readonly auth?: EtcdAuthOptions; })
  | EtcdConnectOptions;

/** The client options without the backend's own (validated by validateClientConfig). */
export function clientOptionsOf(options: BackendConnectOptions): ConnectOptions {
  const { backend: _backend, ...rest } = options as BackendConnectOptions & { auth?: unknown };
  delete (rest as { auth?: unknown }).auth;
  return rest;
}

/** The auth given (either backend), checked (a typed error names what is wrong). */
export function etcdAuthOf(options: BackendConnectOptions): EtcdAuthOptions | undefined {
  if (options.auth === undefined) return undefined;
  const { user, password } = options.auth as Partial<EtcdAuthOptions>;
  if (typeof user !== 'string' || user === '' || typeof password !== 'string') {
    return { user: '', password: '' }; // refused by connect() with CONCLAVE_CONFIG_INVALID
  }
  return { user, password };
}

/** The client's TLS options as gRPC takes them (several CAs: one PEM bundle). */
export function etcdTls(config: ClientConfig): { tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer;
  servername?: string } } {
  const tls = config.tls;
  if (tls === undefined) return {};
  const pem = (v: string | Uint8Array): Buffer => Buffer.from(v as Uint8Array | string);
  const ca = tls.ca === undefined ? undefined : Array.isArray(tls.ca)
    ? Buffer.concat((tls.ca as (string | Uint8Array)[]).map(pem)) : pem(tls.ca as string);
  return { tls: { ...(ca === undefined ? {} : { ca }),
    ...(tls.cert === undefined ? {} : { cert: pem(tls.cert) }),
    ...(tls.key === undefined ? {} : { key: pem(tls.key) }),
    ...(tls.servername === undefined ? {} : { servername: tls.servername }) } };
}
