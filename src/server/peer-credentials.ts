/**
 * The files a member's listeners need, read (and the cluster secret created) before anything
 * listens, each problem a CONCLAVE_CONFIG_INVALID error naming the flag and the file:
 * - the peer port's authentication: mutual TLS files, or the cluster secret, or none;
 * - the client port's TLS files (HTTPS), when given.
 * docs/security.md says which applies when.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync, linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync,
} from 'node:fs';
import type { ServerOptions } from 'node:https';
import { dirname, join } from 'node:path';
import {
  PEER_SECRET_BYTES_MIN, type PeerAuthentication,
} from '../adapters/tcp-transport-auth.js';
import { ConfigInvalidError } from '../errors.js';
import { PEER_SECRET_FILE_NAME, type ServerConfig } from './server-config.js';

/** How the peer port authenticates for `config` (validated by validateServerConfig). */
export function peerAuthenticationOf(config: ServerConfig): PeerAuthentication {
  if (config.peerTls !== undefined) {
    return {
      kind: 'tls',
      cert: readPem('--peer-cert', config.peerTls.certFile),
      key: readPem('--peer-key', config.peerTls.keyFile),
      ca: readPem('--peer-ca', config.peerTls.caFile),
    };
  }
  const secretFile = config.peerSecretFile ??
    (config.cluster.size === 1 ? join(config.dataDir, PEER_SECRET_FILE_NAME) : undefined);
  if (secretFile === undefined) return { kind: 'none' };
  return { kind: 'secret', secret: readOrCreatePeerSecret(secretFile) };
}

/** node:https options for the client port, or undefined for plain HTTP. */
export function clientTlsOptionsOf(config: ServerConfig): ServerOptions | undefined {
  const files = config.clientTls;
  if (files === undefined) return undefined;
  const options: ServerOptions = {
    cert: readPem('--client-cert', files.certFile),
    key: readPem('--client-key', files.keyFile),
    minVersion: 'TLSv1.2',
  };
  if (files.caFile === undefined) return options;
  // etcd's --client-cert-auth with --trusted-ca-file: no certificate from this CA, no request.
  return { ...options, ca: readPem('--client-ca', files.caFile), requestCert: true,
    rejectUnauthorized: true };
}

/**
 * The cluster secret in `file`, created first when missing: 32 random bytes as 64 hex
 * characters and a newline, mode 0600, written to a temporary file and linked into place so
 * that members starting together share one secret (the first link wins; the others read it).
 * A file readable by group or others is refused: anyone who reads it can join the cluster.
 */
export function readOrCreatePeerSecret(file: string): Buffer {
  createSecretIfMissing(file);
  let mode: number;
  let text: string;
  try {
    mode = statSync(file).mode & 0o777;
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigInvalidError(`--peer-secret-file ${file} cannot be read: ${describe(error)}`);
  }
  if ((mode & 0o077) !== 0) {
    throw new ConfigInvalidError(`--peer-secret-file ${file} is readable by others (mode ${
      mode.toString(8).padStart(4, '0')}): anyone who reads it can join the cluster; ` +
      `chmod 600 ${file}`);
  }
  if (Buffer.byteLength(text) < PEER_SECRET_BYTES_MIN) {
    throw new ConfigInvalidError(`--peer-secret-file ${file} holds ${Buffer.byteLength(text)} ` +
      `bytes; at least ${PEER_SECRET_BYTES_MIN} are needed (delete it to have one made, or ` +
      '`openssl rand -hex 32`)');
  }
  return Buffer.from(text, 'utf8');
}

function createSecretIfMissing(file: string): void {
  try {
    statSync(file);
    return;
  } catch {
    // missing: create it below
  }
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(temporary, 0o600); // the umask may have taken bits away, never added: be explicit
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new ConfigInvalidError(`cannot create --peer-secret-file ${file}: ${describe(error)}`);
    }
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // never created
    }
  }
}

function readPem(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ConfigInvalidError(`${flag} ${file} cannot be read: ${describe(error)}`);
  }
}

function describe(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message
    : String(error));
}
