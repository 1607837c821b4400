/**
 * Certificates for TLS tests, made in the test with openssl (installed on the machine; see
 * docs/client.md, "Testing"): a throw-away CA, a server certificate for 127.0.0.1 and
 * localhost, and a client certificate (clientAuth), all EC P-256, valid two days, in a temp
 * dir removed by `remove()`. Not a test file itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCerts {
  /** PEM texts. */
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** The same as files, for the CLI's --cacert, --cert, --key. */
  readonly files: { readonly ca: string; readonly clientCert: string; readonly clientKey: string };
  remove(): void;
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'conclave-tls-'));
  const at = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...key, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2',
    '-subj', '/CN=conclave test CA');
  const issue = (name: string, extensions: string): void => {
    openssl('req', ...key, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`),
      '-subj', `/CN=conclave test ${name}`);
    writeFileSync(at(`${name}.ext`), extensions);
    openssl('x509', '-req', '-in', at(`${name}.csr`), '-CA', at('ca.pem'), '-CAkey', at('ca.key'),
      '-CAcreateserial', '-out', at(`${name}.pem`), '-days', '2', '-extfile', at(`${name}.ext`));
  };
  issue('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  issue('client', 'extendedKeyUsage=clientAuth\n');
  const read = (name: string): string => readFileSync(at(name), 'utf8');
  return {
    ca: read('ca.pem'), serverCert: read('server.pem'), serverKey: read('server.key'),
    clientCert: read('client.pem'), clientKey: read('client.key'),
    files: { ca: at('ca.pem'), clientCert: at('client.pem'), clientKey: at('client.key') },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
