/**
 * server: peer credentials and the listener rules. Goal: a member refuses to start where it
 * would be reachable without authentication (non-loopback peers without TLS, non-loopback
 * clients without HTTPS, several members with neither certificates nor a secret), unless
 * --insecure; the cluster secret file is created once with mode 0600, shared by members that
 * start together, and refused when others can read it or it is too short; `conclave certs`
 * makes certificates that name the member, refuses bad names and an existing CA with exit 2.
 * Method: validateServerConfig on configs; the secret functions on files in a temp dir; the CLI
 * in-process with captured output (the openssl command underneath).
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { PeerAddress } from '../../src/adapters/peer-address.js';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import { peerAuthenticationOf, readOrCreatePeerSecret } from '../../src/server/peer-credentials.js';
import {
  SERVER_DEFAULTS, validateServerConfig, type ServerConfig,
} from '../../src/server/server-config.js';

const dir = mkdtempSync(join(tmpdir(), 'conclave-peer-credentials-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const at = (host: string, port: number): PeerAddress => ({ host, port });

function config(overrides: Partial<ServerConfig> = {}, size = 3): ServerConfig {
  const cluster = new Map<NodeId, PeerAddress>();
  for (let i = 1; i <= size; i++) cluster.set(nodeId(`n${i}`), at('127.0.0.1', 7000 + i));
  return { name: nodeId('n1'), dataDir: join(dir, 'data'), peerAddress: at('127.0.0.1', 7001),
    clientAddress: at('127.0.0.1', 8001), cluster, clientAddresses: new Map(),
    heartbeatMs: SERVER_DEFAULTS.heartbeatMs, electionTimeoutMs: SERVER_DEFAULTS.electionTimeoutMs,
    insecure: false, clusterName: 'test', initialClusterToken: '',
    peerSecretFile: join(dir, 'shared-secret'),
    snapshotCount: SERVER_DEFAULTS.snapshotCount,
    snapshotCatchUpEntries: SERVER_DEFAULTS.snapshotCatchUpEntries,
    autoCompaction: SERVER_DEFAULTS.autoCompaction, ...overrides };
}

const rulesOf = (c: ServerConfig): string => validateServerConfig(c).map((p) => p.rule).join('\n');

describe('server: listener rules', () => {
  test('a non-loopback peer address needs peer TLS, unless --insecure', () => {
    const beyond = config({ peerAddress: at('10.0.0.1', 7001) });
    assert.match(rulesOf(beyond), /needs --peer-cert, --peer-key and --peer-ca/);
    assert.equal(rulesOf({ ...beyond, insecure: true }), '');
    const tls = { certFile: 'c', keyFile: 'k', caFile: 'a' };
    assert.equal(rulesOf({ ...beyond, peerTls: tls, peerSecretFile: undefined }), '');
  });

  test('a non-loopback client address needs HTTPS, unless --insecure', () => {
    const beyond = config({ clientAddress: at('0.0.0.0', 8001) });
    assert.match(rulesOf(beyond), /needs --client-cert and --client-key/);
    assert.equal(rulesOf({ ...beyond, clientTls: { certFile: 'c', keyFile: 'k' } }), '');
  });

  test('several members need certificates or a shared secret; one member does not', () => {
    assert.match(rulesOf(config({ peerSecretFile: undefined })), /needs --peer-secret-file/);
    assert.equal(rulesOf(config({ peerSecretFile: undefined, insecure: true })), '');
    assert.equal(rulesOf(config({ peerSecretFile: undefined }, 1)), '');
    const alone = peerAuthenticationOf(config({ peerSecretFile: undefined }, 1));
    assert.equal(alone.kind, 'secret', 'a one-member cluster gets DATA_DIR/peer-secret');
    assert.equal(statSync(join(dir, 'data', 'peer-secret')).mode & 0o777, 0o600);
  });
});

describe('server: the cluster secret file', () => {
  test('created once with mode 0600; members starting together read the same secret', () => {
    const file = join(dir, 'fresh', 'secret');
    const secrets = [1, 2, 3].map(() => readOrCreatePeerSecret(file));
    assert.ok(secrets.every((s) => s.equals(secrets[0]!)));
    assert.equal(secrets[0]!.length, 64);
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  test('a file others can read is refused, naming the mode and the fix', () => {
    const file = join(dir, 'open-secret');
    writeFileSync(file, `${'ab'.repeat(32)}\n`);
    chmodSync(file, 0o644);
    assert.throws(() => readOrCreatePeerSecret(file), (error: { code: string; message: string }) =>
      error.code === 'CONCLAVE_CONFIG_INVALID' && /mode 0644/.test(error.message) &&
      /chmod 600/.test(error.message));
  });

  test('a secret shorter than 32 bytes is refused', () => {
    const file = join(dir, 'short-secret');
    writeFileSync(file, 'tooshort\n', { mode: 0o600 });
    assert.throws(() => readOrCreatePeerSecret(file), /at least 32/);
  });
});

describe('cli: certs', () => {
  async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), exitCode: 0 };
    const code = await runCli(args, io);
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  test('init, member, client: the member URI and hosts in the SAN; keys 0600', async () => {
    const certs = join(dir, 'certs');
    assert.equal((await run(['certs', 'init', '--dir', certs])).code, 0);
    const member = await run(['certs', 'member', 'n7', '--dir', certs, '--host', '10.1.2.3',
      '--host', 'n7.example', '--json']);
    assert.equal(member.code, 0, member.err);
    const files = JSON.parse(member.out) as { cert: string; key: string; ca: string };
    const cert = new X509Certificate(readFileSync(files.cert));
    assert.match(cert.subjectAltName ?? '', /URI:urn:conclave:member:n7/);
    assert.match(cert.subjectAltName ?? '', /IP Address:10\.1\.2\.3/);
    assert.match(cert.subjectAltName ?? '', /DNS:n7\.example/);
    assert.ok(cert.verify(new X509Certificate(readFileSync(files.ca)).publicKey));
    assert.equal(statSync(files.key).mode & 0o777, 0o600);
    const client = await run(['certs', 'client', 'alice', '--dir', certs, '--json']);
    const clientCert = new X509Certificate(readFileSync(
      (JSON.parse(client.out) as { cert: string }).cert));
    assert.doesNotMatch(clientCert.subjectAltName ?? '', /conclave:member/);
    assert.match(clientCert.subject, /CN=alice/);
  });

  test('a second CA in one directory, a bad name, and a missing --dir exit 2', async () => {
    const certs = join(dir, 'certs2');
    assert.equal((await run(['certs', 'init', '--dir', certs])).code, 0);
    const again = await run(['certs', 'init', '--dir', certs]);
    assert.equal(again.code, 2);
    assert.match(again.err, /a CA already exists/);
    const bad = await run(['certs', 'member', 'no/slash', '--dir', certs]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /member name/);
    assert.equal((await run(['certs', 'member', 'n1'])).code, 2);
  });
});
