/**
 * adapters: tcp transport: authentication. Goal: a peer proves who it is before its connection
 * counts: under mutual TLS the id is the verified certificate's (a certificate from another CA,
 * naming another member, naming no member, or a hello claiming another id than its certificate
 * are refused); under the cluster secret a wrong secret and a replayed handshake are refused;
 * neither lets a second connection displace an authenticated peer's link; the cluster name is
 * never told to an unauthenticated peer; every refusal is counted by reason and logged once.
 * Method: live transports and raw TLS/TCP clients on 127.0.0.1 ephemeral ports, certificates
 * from `conclave certs`' code (test/support/test-certs.ts); waits are conditions with deadlines.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { afterEach, describe, test } from 'node:test';
import { FrameDecoder, MessageCodec } from '../../src/adapters/frame-codec.js';
import { WIRE_VERSION } from '../../src/adapters/tcp-handshake.js';
import {
  handshakeProof, type PeerAuthentication,
} from '../../src/adapters/tcp-transport-auth.js';
import { TcpTransport } from '../../src/adapters/tcp-transport.js';
import { nodeId } from '../../src/core/ids.js';
import type { Logger, LogFields } from '../../src/ports/logger.js';
import { Recorder, testMessage, type TestMessage } from '../compliance/transport.suite.js';
import { testCerts } from '../support/test-certs.js';
import { tcpOptions, waitFor } from './real-net-helpers.js';

const codec = new MessageCodec();
const open: { close(): void }[] = [];
const sockets: net.Socket[] = [];
afterEach(() => {
  for (const t of open.splice(0)) t.close();
  for (const s of sockets.splice(0)) s.destroy();
});

interface LogLine { readonly level: string; readonly fields: LogFields; readonly message: string }

/** A Logger that keeps every line (children share the list). */
function recordingLogger(lines: LogLine[], base: LogFields = {}): Logger {
  const at = (level: string) => (fields: LogFields, message: string): void => {
    lines.push({ level, fields: { ...base, ...fields }, message });
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'),
    child: (fields) => recordingLogger(lines, { ...base, ...fields }) };
}

interface Member {
  readonly t: TcpTransport<TestMessage>;
  readonly r: Recorder;
  readonly log: LogLine[];
}

async function member(id: string, seed: number, auth: PeerAuthentication,
  config = {}): Promise<Member> {
  const log: LogLine[] = [];
  const t = await TcpTransport.listen({ ...tcpOptions(id, seed, config, auth),
    logger: recordingLogger(log) });
  open.push(t);
  const r = new Recorder();
  t.setHandler(r);
  return { t, r, log };
}

/** a and b, each in the other's address book. */
async function linked(authA: PeerAuthentication, authB: PeerAuthentication,
  config = {}): Promise<{ a: Member; b: Member }> {
  const a = await member('a', 1, authA, config);
  const b = await member('b', 2, authB, config);
  a.t.setPeerAddress(b.t.localId, b.t.address);
  b.t.setPeerAddress(a.t.localId, a.t.address);
  return { a, b };
}

async function delivered(from: Member, to: Member, seq: number): Promise<void> {
  await waitFor(() => {
    from.t.send(to.t.localId, testMessage(seq));
    return to.r.seqs().includes(seq);
  }, `message ${seq} from ${from.t.localId} at ${to.t.localId}`);
}

function frame(value: unknown): Buffer {
  const encoded = codec.encodeFrame(value, 1 << 16);
  assert.ok(encoded.ok);
  return encoded.bytes;
}

function hello(from: string, extra: Record<string, unknown> = {}): Buffer {
  return frame({ kind: 'conclave-hello', version: WIRE_VERSION, cluster: 'conclave', from,
    to: 'b', ...extra });
}

/** A raw client over TLS or TCP: what it received, decoded, and whether it was closed. */
interface Raw {
  readonly socket: net.Socket;
  frames(): Record<string, unknown>[];
  readonly closed: () => boolean;
}

function watch(socket: net.Socket): Raw {
  const decoder = new FrameDecoder(1 << 16);
  const frames: Record<string, unknown>[] = [];
  let closed = false;
  sockets.push(socket);
  socket.on('data', (chunk: Buffer) => {
    for (const payload of decoder.push(chunk).payloads) {
      const decoded = codec.decodePayload(payload);
      if (decoded.ok) frames.push(decoded.value as Record<string, unknown>);
    }
  });
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  return { socket, frames: () => frames, closed: () => closed };
}

async function rawTls(port: number, auth: Extract<PeerAuthentication, { kind: 'tls' }>):
  Promise<Raw> {
  const socket = tls.connect({ host: '127.0.0.1', port, cert: auth.cert, key: auth.key,
    ca: auth.ca, rejectUnauthorized: false, checkServerIdentity: () => undefined });
  const raw = watch(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', () => resolve());
    socket.once('error', reject);
  });
  return raw;
}

async function rawTcp(port: number): Promise<Raw> {
  const socket = net.connect({ host: '127.0.0.1', port });
  const raw = watch(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return raw;
}

function refusedReason(raw: Raw): string {
  const refusal = raw.frames().find((f) => f['kind'] === 'conclave-refused');
  assert.ok(refusal !== undefined, `no refusal in ${JSON.stringify(raw.frames())}`);
  return String(refusal['reason']);
}

function warnings(m: Member, pattern: RegExp): LogLine[] {
  return m.log.filter((l) => l.level === 'warn' && pattern.test(l.message));
}

describe('adapters: tcp transport: mutual TLS', () => {
  test('members of one CA exchange messages; ids are their certificates\'', async () => {
    const certs = testCerts();
    const { a, b } = await linked(certs.tls('a'), certs.tls('b'));
    await delivered(a, b, 1);
    await delivered(b, a, 2);
    assert.equal(b.r.messages[0]?.from, 'a');
  });

  test('a peer with a certificate from another CA is refused, counted, logged once', async () => {
    const certs = testCerts();
    const { a, b } = await linked(certs.tls('a', { foreign: true }), certs.tls('b'));
    // a keeps trying (as Raft heartbeats do), through several back-offs.
    await waitFor(() => {
      a.t.send(b.t.localId, testMessage(0));
      return b.t.metrics().handshakesRefusedByReason['tls-untrusted'] >= 3;
    }, 'three refusals at b');
    assert.deepEqual(b.r.messages, []);
    const lines = warnings(b, /unknown CA/);
    assert.equal(lines.length, 1, JSON.stringify(b.log.filter((l) => l.level === 'warn')));
    assert.match(lines[0]!.message, /peer certificate from an unknown CA/);
    // a does not trust b's certificate either: its own side of the story.
    assert.ok(a.t.metrics().outboundAuthFailures >= 1);
    assert.equal(warnings(a, /peer failed authentication: .*unknown CA/).length, 1);
  });

  test('the certificate at a peer\'s address naming another member is refused', async () => {
    const certs = testCerts();
    const a = await member('a', 1, certs.tls('a'));
    const c = await member('c', 3, certs.tls('c'));
    a.t.setPeerAddress(nodeId('b'), c.t.address); // a believes b listens there
    await waitFor(() => {
      a.t.send(nodeId('b'), testMessage(0));
      return a.t.metrics().outboundAuthFailures >= 1;
    }, 'a refuses the certificate');
    assert.deepEqual(c.r.messages, []);
    assert.equal(warnings(a, /names member c, not b/).length, 1);
  });

  test('a hello that claims another id than the certificate is refused and counted',
    async () => {
      const certs = testCerts();
      const { a, b } = await linked(certs.tls('a'), certs.tls('b'));
      await delivered(a, b, 1);
      const impostor = await rawTls(b.t.address.port, certs.tls('x'));
      impostor.socket.write(hello('a'));
      await waitFor(impostor.closed, 'b closes the impostor');
      assert.match(refusedReason(impostor), /claims to be a, but the peer certificate names x/);
      assert.equal(b.t.metrics().handshakesRefusedByReason['claim-mismatch'], 1);
      assert.equal(warnings(b, /claims to be a/).length, 1);
      // No displacement: a's link to b still carries messages; no reset was reported.
      await delivered(a, b, 2);
      assert.deepEqual(b.r.resets, []);
      assert.ok(b.r.messages.every((m) => m.from === 'a'));
    });

  test('a client certificate (no member id) is refused', async () => {
    const certs = testCerts();
    const b = await member('b', 2, certs.tls('b'));
    const client = await rawTls(b.t.address.port, certs.tls('alice'));
    await waitFor(client.closed, 'b closes the client');
    assert.match(refusedReason(client), /names no member/);
    assert.equal(b.t.metrics().handshakesRefusedByReason['tls-no-member-id'], 1);
  });

  test('plain TCP to a TLS peer port is refused with a reason in the log', async () => {
    const certs = testCerts();
    const b = await member('b', 2, certs.tls('b'));
    const plain = await rawTcp(b.t.address.port);
    plain.socket.write(hello('a'));
    await waitFor(plain.closed, 'b closes the plain client');
    await waitFor(() => b.t.metrics().handshakesRefusedByReason['tls-failed'] === 1,
      'the refusal counted');
    assert.equal(warnings(b, /not a TLS handshake/).length, 1);
  });

  test('a certificate naming another member than --name is refused at listen', async () => {
    const certs = testCerts();
    await assert.rejects(TcpTransport.listen(tcpOptions('a', 1, {}, certs.tls('b'))),
      (error: { code: string; message: string }) => error.code === 'CONCLAVE_CONFIG_INVALID' &&
        /names member b, but this member is a/.test(error.message));
  });
});

describe('adapters: tcp transport: cluster secret (HMAC)', () => {
  const secretOf = (secret: Buffer): PeerAuthentication => ({ kind: 'secret', secret });

  test('a wrong secret is refused on both sides, counted, logged once each', async () => {
    const { a, b } = await linked(secretOf(randomBytes(32)), secretOf(randomBytes(32)));
    await waitFor(() => {
      a.t.send(b.t.localId, testMessage(0));
      return b.t.metrics().handshakesRefusedByReason['hmac-mismatch'] >= 3;
    }, 'three HMAC refusals at b');
    assert.deepEqual(b.r.messages, []);
    assert.equal(warnings(b, /HMAC mismatch: wrong cluster secret/).length, 1);
    assert.equal(warnings(a, /HMAC mismatch: wrong cluster secret/).length, 1);
    assert.ok(a.t.metrics().outboundAuthFailures >= 3);
  });

  test('a stranger without the secret neither joins, displaces, nor learns the cluster name',
    async () => {
      const secret = randomBytes(32);
      const { a, b } = await linked(secretOf(secret), secretOf(secret),
        { clusterName: 'secret-name' });
      await delivered(a, b, 1);
      const stranger = await rawTcp(b.t.address.port);
      stranger.socket.write(hello('a', { nonce: randomBytes(32), cluster: 'guess' }));
      await waitFor(() => stranger.frames().length === 1, 'the challenge');
      const challenge = stranger.frames()[0]!;
      assert.equal(challenge['kind'], 'conclave-challenge');
      stranger.socket.write(frame({ kind: 'conclave-proof', proof: randomBytes(32) }));
      await waitFor(stranger.closed, 'b closes the stranger');
      assert.match(refusedReason(stranger), /HMAC mismatch/);
      const said = JSON.stringify(stranger.frames());
      assert.ok(!said.includes('secret-name'), `the cluster name was told: ${said}`);
      assert.equal(b.t.metrics().handshakesRefusedByReason['hmac-mismatch'], 1);
      await delivered(a, b, 2);
      assert.deepEqual(b.r.resets, []);
    });

  test('a hello without a nonce is refused: the port requires the handshake', async () => {
    const b = await member('b', 2, secretOf(randomBytes(32)));
    const plain = await rawTcp(b.t.address.port);
    plain.socket.write(hello('a'));
    await waitFor(plain.closed, 'b closes');
    assert.match(refusedReason(plain), /requires the cluster-secret handshake/);
    assert.equal(b.t.metrics().handshakesRefusedByReason['auth-missing'], 1);
  });

  test('a replayed handshake is refused: the same nonce, or an old proof', async () => {
    const secret = randomBytes(32);
    const b = await member('b', 2, secretOf(secret));
    // A genuine handshake as member x, recorded.
    const nonce = randomBytes(32);
    const first = await rawTcp(b.t.address.port);
    first.socket.write(hello('x', { nonce }));
    await waitFor(() => first.frames().length === 1, 'the challenge');
    const challenge = first.frames()[0]!;
    const proof = handshakeProof(secret, 'connector', { version: WIRE_VERSION,
      cluster: 'conclave', connector: nodeId('x'), acceptor: nodeId('b'),
      connectorNonce: nonce, acceptorNonce: challenge['nonce'] as Uint8Array });
    first.socket.write(frame({ kind: 'conclave-proof', proof }));
    await waitFor(() => first.frames().some((f) => f['kind'] === 'conclave-welcome'), 'welcome');
    // The recording replayed: the nonce is known.
    const replay = await rawTcp(b.t.address.port);
    replay.socket.write(Buffer.concat([hello('x', { nonce }),
      frame({ kind: 'conclave-proof', proof })]));
    await waitFor(replay.closed, 'b closes the replay');
    assert.match(refusedReason(replay), /replayed handshake/);
    assert.equal(b.t.metrics().handshakesRefusedByReason['nonce-replayed'], 1);
    // The old proof with a fresh nonce: b's own nonce is fresh, so the proof cannot match.
    const reused = await rawTcp(b.t.address.port);
    reused.socket.write(Buffer.concat([hello('x', { nonce: randomBytes(32) }),
      frame({ kind: 'conclave-proof', proof })]));
    await waitFor(reused.closed, 'b closes the reused proof');
    assert.match(refusedReason(reused), /HMAC mismatch/);
    // The genuine connection is still x's link.
    first.socket.write(frame(testMessage(9)));
    await waitFor(() => b.r.seqs().includes(9), 'a message on the genuine connection');
    assert.equal(first.closed(), false);
  });

  test('a fake acceptor replaying a recorded challenge is refused by the connector',
    async () => {
      const secret = randomBytes(32);
      const b = await member('b', 2, secretOf(secret));
      const recorder = await rawTcp(b.t.address.port);
      recorder.socket.write(hello('x', { nonce: randomBytes(32) }));
      await waitFor(() => recorder.frames().length === 1, 'a genuine challenge');
      const recorded = frame(recorder.frames()[0]);
      // The fake b answers every hello with the recorded challenge.
      const fake = net.createServer((s) => {
        sockets.push(s);
        s.on('error', () => undefined);
        s.once('data', () => s.write(recorded));
      });
      await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
      open.push({ close: () => fake.close() });
      const a = await member('a', 1, secretOf(secret));
      a.t.setPeerAddress(nodeId('b'), { host: '127.0.0.1',
        port: (fake.address() as net.AddressInfo).port });
      await waitFor(() => {
        a.t.send(nodeId('b'), testMessage(0));
        return a.t.metrics().outboundAuthFailures >= 1;
      }, 'a refuses the replayed challenge');
      assert.equal(a.t.metrics().connectsSucceeded, 0);
      assert.equal(warnings(a, /HMAC mismatch/).length, 1);
    });

  test('an authenticated second connection for the same id replaces the first', async () => {
    const secret = randomBytes(32);
    const { a, b } = await linked(secretOf(secret), secretOf(secret));
    await delivered(a, b, 1);
    // a's link is closed on purpose (address change), and reopened: b keeps one link from a.
    a.t.setPeerAddress(b.t.localId, { ...b.t.address });
    a.t.setPeerAddress(b.t.localId, b.t.address, { anyId: true });
    await delivered(a, b, 2);
    await waitFor(() => b.t.metrics().inboundConnections === 1, 'one inbound link at b');
  });
});

describe('adapters: tcp transport: no authentication', () => {
  test('another cluster\'s name is not told to an unauthenticated peer, but logged', async () => {
    const { b } = await linked({ kind: 'none' }, { kind: 'none' }, { clusterName: 'green' });
    const client = await rawTcp(b.t.address.port);
    client.socket.write(hello('x', { cluster: 'blue' }));
    await waitFor(client.closed, 'b closes the client');
    const reason = refusedReason(client);
    assert.match(reason, /cluster name mismatch/);
    assert.ok(!reason.includes('green'), reason);
    assert.equal(warnings(b, /"green".*"blue"/).length, 1);
    assert.equal(b.t.metrics().handshakesRefusedByReason['cluster'], 1);
  });
});
