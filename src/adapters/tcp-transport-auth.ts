/**
 * How peers prove who they are on the peer port (docs/security.md):
 *
 * - `tls`: mutual TLS 1.3. Both sides present a certificate signed by the cluster's CA; a
 *   connection's member id is the one named in the verified certificate (the URI SAN
 *   `urn:conclave:member:<id>`), never what the hello claims. A hello whose `from` disagrees
 *   with the certificate is refused.
 * - `secret`: for loopback without certificates. Every member holds the same cluster secret;
 *   the handshake is a mutual HMAC-SHA256 challenge-response over fresh 32-byte nonces from both
 *   sides, so a recorded handshake cannot be replayed and the secret never crosses the wire.
 *   It proves "a holder of this cluster's secret" (any member may claim any member's id), and it
 *   authenticates the connection once, at open: frames after it are not signed (on loopback,
 *   only root can tamper with a TCP stream between two processes, and root can read the secret).
 * - `none`: no authentication (`--insecure`, gossip until its keyring lands).
 *
 * Why a URI SAN and not the subject CN for the member id: the CN is one free-text legacy field
 * (RFC 6125 deprecates it for names, and modern verifiers ignore it), while a typed SAN keeps
 * "who" (the member URI) apart from "where" (DNS/IP SANs, which HTTPS clients check), and a
 * client certificate (CN = user, as etcd maps client certificates to users) signed by the same
 * CA can never pass as a member, since only `conclave certs member` writes the member URI.
 */
import { X509Certificate, createHmac, createPrivateKey, timingSafeEqual } from 'node:crypto';
import { createSecureContext, type TLSSocket } from 'node:tls';
import type * as tls from 'node:tls';
import type { NodeId } from '../core/ids.js';
import { ConfigInvalidError } from '../errors.js';
import type { Logger, LogFields } from '../ports/logger.js';

export type PeerAuthentication =
  | { readonly kind: 'none' }
  | {
    readonly kind: 'tls';
    /** PEM: this member's certificate (naming its id), its private key, and the cluster CA. */
    readonly cert: string | Buffer;
    readonly key: string | Buffer;
    readonly ca: string | Buffer;
  }
  | {
    readonly kind: 'secret';
    /** The cluster secret shared by every member. At least `PEER_SECRET_BYTES_MIN` bytes. */
    readonly secret: Buffer;
  };

export const NO_PEER_AUTHENTICATION: PeerAuthentication = Object.freeze({ kind: 'none' });

/** The URI SAN prefix of a member certificate; the member id follows. */
export const MEMBER_URI_PREFIX = 'urn:conclave:member:';

/** Bytes of each handshake nonce (HMAC mode). 256 bits: never repeats by chance. */
export const HANDSHAKE_NONCE_BYTES = 32;
/** Bytes of an HMAC-SHA256 proof. */
export const HANDSHAKE_PROOF_BYTES = 32;
/** Shortest cluster secret accepted. Unit: bytes. 32 = the HMAC-SHA256 key size. */
export const PEER_SECRET_BYTES_MIN = 32;

/** Why a handshake was refused: the label of `conclave_peer_handshakes_refused_total`. */
export type HandshakeRefusalReason =
  /** No (complete) hello within `handshakeTimeoutMs`. */
  | 'timeout'
  /** The first frames are not a valid hello or proof. */
  | 'malformed'
  /** Another wire version. */
  | 'version'
  /** Another cluster name. */
  | 'cluster'
  /** The hello was meant for another member id (address book out of date). */
  | 'wrong-id'
  /** The TLS handshake itself failed (plain text on a TLS port, protocol mismatch). */
  | 'tls-failed'
  /** The peer's certificate did not verify (unknown CA, expired, no certificate). */
  | 'tls-untrusted'
  /** The certificate verified but names no member (a client certificate, say). */
  | 'tls-no-member-id'
  /** The hello claims another id than the certificate names. */
  | 'claim-mismatch'
  /** The HMAC proof was wrong: the peer does not hold this cluster's secret. */
  | 'hmac-mismatch'
  /** The hello's nonce was seen before: a replayed handshake. */
  | 'nonce-replayed'
  /** The peer did not take part in the authentication this port requires. */
  | 'auth-missing';

export const HANDSHAKE_REFUSAL_REASONS: readonly HandshakeRefusalReason[] = Object.freeze([
  'timeout', 'malformed', 'version', 'cluster', 'wrong-id', 'tls-failed', 'tls-untrusted',
  'tls-no-member-id', 'claim-mismatch', 'hmac-mismatch', 'nonce-replayed', 'auth-missing',
]);

export type RefusalCounts = Record<HandshakeRefusalReason, number>;

export function zeroRefusalCounts(): RefusalCounts {
  const counts = {} as RefusalCounts;
  for (const reason of HANDSHAKE_REFUSAL_REASONS) counts[reason] = 0;
  return counts;
}

/** The member id a verified peer certificate names, or why there is none. */
export function memberIdOfCertificate(
  socket: TLSSocket,
): { readonly id: NodeId } | { readonly reason: HandshakeRefusalReason; readonly error: string } {
  const certificate = socket.getPeerCertificate();
  if (certificate === null || Object.keys(certificate).length === 0) {
    return { reason: 'tls-untrusted',
      error: 'peer presented no certificate: it needs --peer-cert and --peer-key' };
  }
  if (!socket.authorized) {
    return { reason: 'tls-untrusted', error: describeTlsFailure(socket.authorizationError) };
  }
  const names = (certificate.subjectaltname ?? '').split(', ')
    .filter((name) => name.startsWith(`URI:${MEMBER_URI_PREFIX}`))
    .map((name) => name.slice(`URI:${MEMBER_URI_PREFIX}`.length));
  if (names.length !== 1 || names[0]!.length === 0) {
    const subject = certificate.subject?.CN ?? '?';
    return {
      reason: 'tls-no-member-id',
      error: names.length === 0
        ? `peer certificate (CN ${JSON.stringify(subject)}) names no member ` +
          `(no ${MEMBER_URI_PREFIX}<id> SAN): a client certificate, or not made by conclave certs`
        : `peer certificate names ${names.length} members: it must name exactly one`,
    };
  }
  return { id: names[0] as NodeId };
}

/** Words for OpenSSL's verification codes (tls.TLSSocket.authorizationError). */
export function describeTlsFailure(error: Error | string | undefined): string {
  const code = typeof error === 'string' ? error
    : (error as NodeJS.ErrnoException | undefined)?.code ?? error?.message ?? 'unknown';
  switch (code) {
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'CERT_SIGNATURE_FAILURE':
      return `peer certificate from an unknown CA (${code}): it is not signed by this ` +
        'cluster\'s --peer-ca';
    case 'CERT_HAS_EXPIRED':
      return `peer certificate has expired (${code})`;
    case 'CERT_NOT_YET_VALID':
      return `peer certificate is not valid yet (${code}): check the clocks`;
    case 'CERT_REVOKED':
      return `peer certificate is revoked (${code})`;
    case 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE':
    case 'UNABLE_TO_GET_CRL':
      return `peer presented no certificate (${code}): it needs --peer-cert and --peer-key`;
    default:
      return `peer certificate rejected (${code})`;
  }
}

/** Words for a failed TLS handshake on the accepting side (tls.Server 'tlsClientError'). */
export function describeTlsHandshakeError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code === 'ERR_SSL_HTTP_REQUEST') {
    return 'an HTTP request on the TLS peer port: use the client address';
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
      /wrong version number|packet length too long|unknown protocol/i.test(error.message)) {
    return 'not a TLS handshake: the peer speaks plain text to this TLS peer port ' +
      '(is it missing --peer-cert/--peer-key/--peer-ca?)';
  }
  if (/timed out/i.test(error.message) || code === 'ERR_TLS_HANDSHAKE_TIMEOUT') {
    return 'TLS handshake not completed in time';
  }
  return `TLS handshake failed: ${code === '' ? error.message : code}`;
}

/** What both proofs of one HMAC handshake cover: the hello's claims and both nonces. */
export interface HandshakeTranscript {
  readonly version: number;
  readonly cluster: string;
  /** The connecting side's claimed id and the accepting side's id. */
  readonly connector: NodeId;
  readonly acceptor: NodeId;
  readonly connectorNonce: Uint8Array;
  readonly acceptorNonce: Uint8Array;
}

/**
 * HMAC-SHA256 over the transcript, labelled with the prover's role so that a proof made by one
 * side can never be reflected back as the other side's. Each field is length-prefixed: no two
 * different transcripts encode to the same bytes.
 */
export function handshakeProof(secret: Buffer, role: 'acceptor' | 'connector',
  t: HandshakeTranscript): Buffer {
  const mac = createHmac('sha256', secret);
  const field = (bytes: Uint8Array): void => {
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(bytes.length);
    mac.update(length);
    mac.update(bytes);
  };
  for (const text of [`conclave-peer-handshake/${role}`, String(t.version), t.cluster,
    t.connector, t.acceptor]) {
    field(Buffer.from(text, 'utf8'));
  }
  field(t.connectorNonce);
  field(t.acceptorNonce);
  return mac.digest();
}

/** Constant-time comparison of a received proof with the expected one. */
export function proofMatches(received: Uint8Array | undefined, expected: Buffer): boolean {
  if (received === undefined || received.length !== expected.length) return false;
  return timingSafeEqual(received, expected);
}

/**
 * The nonces of recent hellos, to refuse a replayed one by name (the fresh acceptor nonce
 * already makes a replayed proof fail). Bounded: the oldest are forgotten first.
 */
export class NonceMemory {
  private readonly seen = new Set<string>();

  /** `countMax`: nonces remembered. Unit: nonces. */
  constructor(private readonly countMax: number) {}

  /** True if `nonce` was seen before; remembers it either way. */
  replayed(nonce: Uint8Array): boolean {
    const key = Buffer.from(nonce).toString('base64');
    if (this.seen.has(key)) return true;
    this.seen.add(key);
    if (this.seen.size > this.countMax) {
      this.seen.delete(this.seen.values().next().value as string);
    }
    return false;
  }
}

/**
 * One warn line per (reason, remote host) per interval: a peer that retries every second with
 * the wrong certificate yields one clear line, then a reminder with the count of repeats.
 * Bounded in keys; the oldest key is forgotten first.
 */
export class RateLimitedLog {
  private readonly last = new Map<string, { atMs: number; suppressed: number }>();

  constructor(private readonly log: Logger, private readonly nowMs: () => number,
    private readonly intervalMs: number, private readonly keysMax: number) {}

  warn(key: string, fields: LogFields, message: string): void {
    const now = this.nowMs();
    const entry = this.last.get(key);
    if (entry !== undefined && now - entry.atMs < this.intervalMs) {
      entry.suppressed++;
      return;
    }
    const repeats = entry?.suppressed ?? 0;
    this.last.delete(key);
    this.last.set(key, { atMs: now, suppressed: 0 });
    if (this.last.size > this.keysMax) {
      this.last.delete(this.last.keys().next().value as string);
    }
    this.log.warn(repeats > 0 ? { ...fields, repeatsSinceLastLine: repeats } : fields, message);
  }
}

/** What a TLS peer port needs: server options for accepting, a context for connecting. */
export interface PeerTlsSetup {
  readonly serverOptions: tls.TlsOptions;
  readonly clientContext: tls.SecureContext;
}

/**
 * Loads and checks this member's certificate before anything listens: it must parse, match
 * its key, and name `localId` as its member id. Throws CONCLAVE_CONFIG_INVALID naming the problem.
 */
export function peerTlsSetup(
  auth: Extract<PeerAuthentication, { kind: 'tls' }>, localId: NodeId, handshakeTimeoutMs: number,
): PeerTlsSetup {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(auth.cert);
  } catch (error) {
    throw new ConfigInvalidError(`peer certificate (--peer-cert) is not a PEM certificate: ${
      describe(error)}`);
  }
  try {
    if (!certificate.checkPrivateKey(createPrivateKey(auth.key))) {
      throw new ConfigInvalidError('peer key (--peer-key) does not belong to the peer ' +
        'certificate (--peer-cert)');
    }
  } catch (error) {
    if (error instanceof ConfigInvalidError) throw error;
    throw new ConfigInvalidError(`peer key (--peer-key) is not a PEM private key: ${
      describe(error)}`);
  }
  const names = (certificate.subjectAltName ?? '').split(', ')
    .filter((name) => name.startsWith(`URI:${MEMBER_URI_PREFIX}`))
    .map((name) => name.slice(`URI:${MEMBER_URI_PREFIX}`.length));
  if (names.length !== 1 || names[0] !== localId) {
    throw new ConfigInvalidError(`peer certificate (--peer-cert) names member ${
      names.length === 0 ? 'none' : names.join(', ')}, but this member is ${localId}: ` +
      `issue one with \`conclave certs member ${localId}\``);
  }
  // Every member accepts TLS 1.3 only: no downgrade, and the fastest handshake.
  const material = { cert: auth.cert, key: auth.key, ca: auth.ca, minVersion: 'TLSv1.3' } as const;
  let clientContext: tls.SecureContext;
  try {
    clientContext = createSecureContext(material);
  } catch (error) {
    throw new ConfigInvalidError(`peer TLS files cannot be used: ${describe(error)}`);
  }
  return {
    // Verification results are judged by the transport (memberIdOfCertificate), so that a
    // refusal is counted, logged with its reason, and told to the peer.
    serverOptions: { ...material, requestCert: true, rejectUnauthorized: false,
      handshakeTimeout: handshakeTimeoutMs },
    clientContext,
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
