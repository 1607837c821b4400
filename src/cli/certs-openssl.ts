/**
 * Certificates for a Conclave cluster, made with the `openssl` command: a cluster CA, member
 * certificates (peer mTLS and the HTTPS client port) and client certificates.
 *
 * Why the openssl command and not an npm library (@peculiar/x509 and friends): node:crypto can
 * make keys but not certificates; openssl is on every Linux and macOS machine that runs Node,
 * is what operators already use and audit, and the exact commands we run are the ones
 * docs/security.md shows for an organisation that issues certificates from its own PKI. A
 * library would add a dependency tree to every install for a command run once per member.
 *
 * What a certificate says (docs/security.md, "Certificates"):
 * - a member's: CN = its member id, and a URI SAN `urn:conclave:member:<id>`, the one name the
 *   peer port trusts (tcp-transport-auth.ts); DNS/IP SANs for `--host` (the HTTPS client port
 *   is verified against them); extended key usage serverAuth and clientAuth (it both accepts
 *   and opens peer connections).
 * - a client's: CN = the user's name (etcd maps a client certificate's CN to a user), clientAuth
 *   only, and never a member URI: a client certificate from the same CA cannot join as a peer.
 * Keys are EC P-256 (fast handshakes, small certificates), written with mode 0600.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { MEMBER_URI_PREFIX } from '../adapters/tcp-transport-auth.js';
import { CoordError, UsageError } from '../errors.js';

/** Validity of the CA certificate. Unit: days. Default: 3650 (ten years; rotate by re-issuing). */
export const CA_DAYS_DEFAULT = 3650;
/**
 * Validity of member and client certificates. Unit: days. Default: 825 (the longest browsers
 * accept for TLS server certificates; plan rotation within it: docs/security.md).
 */
export const LEAF_DAYS_DEFAULT = 825;

/** Names usable as member ids and users in certificates: they appear verbatim in a URI. */
const CERT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export interface CertFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface CaFiles extends CertFiles {}

export function caFiles(dir: string): CaFiles {
  return { certFile: join(dir, 'ca.crt'), keyFile: join(dir, 'ca.key') };
}

export function leafFiles(dir: string, name: string): CertFiles {
  return { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
}

/** Creates `DIR/ca.crt` and `DIR/ca.key`; refuses to overwrite an existing CA. */
export function createCa(dir: string, options: { name?: string; days?: number } = {}): CaFiles {
  const files = caFiles(dir);
  if (existsSync(files.keyFile) || existsSync(files.certFile)) {
    throw new UsageError(`a CA already exists in ${dir} (ca.crt, ca.key): certificates it ` +
      'signed would stop being trusted if it were replaced; use another --dir');
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const subject = `/CN=${options.name ?? 'conclave'} cluster CA`;
  openssl(['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
    '-nodes', '-keyout', files.keyFile, '-out', files.certFile, '-sha256',
    '-days', String(options.days ?? CA_DAYS_DEFAULT), '-subj', subject,
    '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  chmodSync(files.keyFile, 0o600);
  return files;
}

/** A member certificate `DIR/NAME.crt` + `.key`, signed by the CA in `dir`. */
export function createMemberCert(dir: string, name: string,
  options: { hosts?: readonly string[]; days?: number } = {}): CertFiles {
  const hosts = options.hosts === undefined || options.hosts.length === 0
    ? ['localhost', '127.0.0.1'] : options.hosts;
  const san = [`URI:${MEMBER_URI_PREFIX}${checkName(name, 'member')}`,
    ...hosts.map((h) => (isIP(h) === 0 ? `DNS:${checkHost(h)}` : `IP:${h}`))];
  return signLeaf(dir, name, [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=serverAuth,clientAuth',
    `subjectAltName=${san.join(',')}`,
  ], options.days);
}

/** A client certificate `DIR/NAME.crt` + `.key` (CN = NAME, clientAuth only, no member URI). */
export function createClientCert(dir: string, name: string,
  options: { days?: number } = {}): CertFiles {
  return signLeaf(dir, checkName(name, 'client'), [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    'extendedKeyUsage=clientAuth',
  ], options.days);
}

function signLeaf(dir: string, name: string, extensions: readonly string[],
  days = LEAF_DAYS_DEFAULT): CertFiles {
  const ca = caFiles(dir);
  if (!existsSync(ca.keyFile) || !existsSync(ca.certFile)) {
    throw new UsageError(`no CA in ${dir}: run \`conclave certs init --dir ${dir}\` first`);
  }
  const files = leafFiles(dir, name);
  if (existsSync(files.certFile) || existsSync(files.keyFile)) {
    throw new UsageError(`${files.certFile} or its key already exists: remove both to re-issue`);
  }
  const work = mkdtempSync(join(tmpdir(), 'conclave-certs-'));
  try {
    const csr = join(work, 'req.csr');
    const ext = join(work, 'ext.cnf');
    writeFileSync(ext, `${extensions.join('\n')}\n`);
    openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', files.keyFile, '-out', csr, '-subj', `/CN=${name}`]);
    chmodSync(files.keyFile, 0o600);
    // A random 128-bit serial: no serial file to keep, and no two certificates share one.
    openssl(['x509', '-req', '-in', csr, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-sha256',
      '-set_serial', `0x${randomBytes(16).toString('hex')}`, '-days', String(days),
      '-extfile', ext, '-out', files.certFile]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return files;
}

function checkName(name: string, what: string): string {
  if (!CERT_NAME.test(name)) {
    throw new UsageError(`${what} name ${JSON.stringify(name)}: use 1..63 of A-Z a-z 0-9 . _ - ` +
      '(starting with a letter or digit)');
  }
  return name;
}

function checkHost(host: string): string {
  if (!/^[A-Za-z0-9*]([A-Za-z0-9.-]{0,252})$/.test(host)) {
    throw new UsageError(`--host ${JSON.stringify(host)} is neither an IP address nor a DNS name`);
  }
  return host;
}

function openssl(args: readonly string[]): void {
  const run = spawnSync('openssl', args, { encoding: 'utf8' });
  if (run.error !== undefined) {
    throw new CoordError('CONCLAVE_UNAVAILABLE', 'conclave certs needs the openssl command ' +
      `(apt-get install openssl, or your system's package): ${run.error.message}`);
  }
  if (run.status !== 0) {
    throw new CoordError('CONCLAVE_UNAVAILABLE',
      `openssl ${args[0]} failed (exit ${run.status}): ${run.stderr.trim().slice(-500)}`);
  }
}
