/**
 * Certificates for `--peer-tls` runs, made with `conclave certs`' own code (the openssl
 * command): one CA per work directory, one member certificate per member name (n1.., e1..),
 * each with the SANs 127.0.0.1 and localhost (etcd checks the peer URL's IP against them;
 * Conclave checks the member URI).
 */
import { existsSync } from 'node:fs';
import {
  caFiles, createCa, createMemberCert, leafFiles,
} from '../../src/cli/certs-openssl.js';

/** The PEM files of member `name`, made on first use. */
export function memberCertFiles(dir: string, name: string):
  { cert: string; key: string; ca: string } {
  const ca = caFiles(dir);
  if (!existsSync(ca.certFile)) createCa(dir, { name: 'bench' });
  const leaf = leafFiles(dir, name);
  if (!existsSync(leaf.certFile)) createMemberCert(dir, name);
  return { cert: leaf.certFile, key: leaf.keyFile, ca: ca.certFile };
}
