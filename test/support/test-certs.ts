/**
 * Certificates for tests, made once per test process with `conclave certs`' own code (the
 * openssl command): the cluster CA with members a, b, c, x, n1..n3 and a client `alice`, and a
 * second, foreign CA with members a, b and n1..n3. Removed when the process exits.
 */
import { readFileSync, rmSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  caFiles, createCa, createClientCert, createMemberCert, leafFiles,
} from '../../src/cli/certs-openssl.js';
import type { PeerAuthentication } from '../../src/adapters/tcp-transport-auth.js';

export interface TestCerts {
  /** The cluster CA's directory (ca.crt, NAME.crt, NAME.key). */
  readonly dir: string;
  /** A foreign CA's directory, with certificates for the same names. */
  readonly foreignDir: string;
  /** TLS authentication for member `name`, from the cluster CA (or the foreign one). */
  tls(name: string, options?: { foreign?: boolean }): Extract<PeerAuthentication, { kind: 'tls' }>;
}

let made: TestCerts | undefined;

export function testCerts(): TestCerts {
  if (made !== undefined) return made;
  const root = mkdtempSync(join(tmpdir(), 'conclave-test-certs-'));
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'cluster');
  const foreignDir = join(root, 'foreign');
  createCa(dir);
  for (const name of ['a', 'b', 'c', 'x', 'n1', 'n2', 'n3']) createMemberCert(dir, name);
  createClientCert(dir, 'alice');
  createCa(foreignDir, { name: 'foreign' });
  for (const name of ['a', 'b', 'n1', 'n2', 'n3']) createMemberCert(foreignDir, name);
  made = {
    dir, foreignDir,
    tls: (name, options = {}) => {
      const from = options.foreign === true ? foreignDir : dir;
      const files = leafFiles(from, name);
      return { kind: 'tls', cert: readFileSync(files.certFile), key: readFileSync(files.keyFile),
        ca: readFileSync(caFiles(from).certFile) };
    },
  };
  return made;
}
