/**
 * The first frames on a peer connection. The connecting side sends `hello` (who it claims to
 * be, which cluster, whom it means to reach); the accepting side answers `welcome` (with its own
 * id) or `refused` (with the reason, then closes). After `welcome`, frames flow one way only,
 * from the connecting side: each is one protocol message.
 *
 * Claims are proven by the port's authentication (tcp-transport-auth.ts): under TLS the
 * certificates were verified before the hello, and the hello's `from` must match the
 * connector's certificate. Under the cluster secret the hello carries the connector's nonce; the
 * acceptor answers `challenge` (its id, its nonce, its proof), the connector checks that proof and
 * answers `proof`; only then `welcome`. Nothing the cluster keeps to itself (its name) is told
 * to a peer before it has proven itself.
 */
import type { NodeId } from '../core/ids.js';
import { HANDSHAKE_NONCE_BYTES, HANDSHAKE_PROOF_BYTES } from './tcp-transport-auth.js';

/** Version of this handshake and frame layout; a peer with another version is refused. */
export const WIRE_VERSION = 1;

/** Largest frame accepted before the handshake completes. Unit: bytes. An unidentified peer
 * must not make us hold a full-size frame per connection. */
export const HANDSHAKE_FRAME_BYTES_MAX = 4096;

/** Longest cluster name, node id and address accepted in a handshake. Unit: characters. */
export const HANDSHAKE_TEXT_LENGTH_MAX = 255;

export interface Hello {
  readonly kind: 'conclave-hello';
  readonly version: number;
  readonly cluster: string;
  readonly from: NodeId;
  /** The id the sender expects to reach; absent when it knows only an address (a seed). */
  readonly to?: NodeId;
  /** Where the sender listens (`host:port`), for logs and address learning. */
  readonly address?: string;
  /** The connector's fresh nonce (cluster-secret authentication only). */
  readonly nonce?: Uint8Array;
}

/** The acceptor's half of the cluster-secret handshake (tcp-transport-auth.ts). */
export interface Challenge {
  readonly kind: 'conclave-challenge';
  readonly from: NodeId;
  readonly nonce: Uint8Array;
  readonly proof: Uint8Array;
}

/** The connector's answer to a challenge. */
export interface Proof {
  readonly kind: 'conclave-proof';
  readonly proof: Uint8Array;
}

export interface Welcome {
  readonly kind: 'conclave-welcome';
  readonly from: NodeId;
}

export interface Refused {
  readonly kind: 'conclave-refused';
  readonly reason: string;
}

export type HandshakeReply = Welcome | Refused | Challenge;

/** Checks a decoded value as a hello. Total: never throws. */
export function parseHello(value: unknown): Hello | { readonly error: string } {
  const v = asRecord(value);
  if (v === undefined || v['kind'] !== 'conclave-hello') {
    return { error: 'the first frame is not a conclave-hello' };
  }
  const version = v['version'];
  if (typeof version !== 'number' || !Number.isSafeInteger(version)) {
    return { error: 'hello.version must be an integer' };
  }
  const cluster = text(v['cluster']);
  const from = text(v['from']);
  if (cluster === undefined || from === undefined) {
    return {
      error: `hello.cluster and hello.from must be strings of 1..${HANDSHAKE_TEXT_LENGTH_MAX}`,
    };
  }
  const hello: { -readonly [K in keyof Hello]: Hello[K] } = {
    kind: 'conclave-hello', version, cluster, from: from as NodeId,
  };
  if (v['nonce'] !== undefined) {
    const nonce = bytes(v['nonce'], HANDSHAKE_NONCE_BYTES);
    if (nonce === undefined) {
      return { error: `hello.nonce must be ${HANDSHAKE_NONCE_BYTES} bytes when present` };
    }
    hello.nonce = nonce;
  }
  for (const field of ['to', 'address'] as const) {
    if (v[field] === undefined) continue;
    const value = text(v[field]);
    if (value === undefined) return { error: `hello.${field} must be a string when present` };
    if (field === 'to') hello.to = value as NodeId;
    else hello.address = value;
  }
  return hello;
}

/** Checks a decoded value as the answer to a hello. Total: never throws. */
export function parseHandshakeReply(value: unknown): HandshakeReply | { readonly error: string } {
  const v = asRecord(value);
  if (v?.['kind'] === 'conclave-welcome') {
    const from = text(v['from']);
    return from === undefined
      ? { error: 'welcome.from must be a string' }
      : { kind: 'conclave-welcome', from: from as NodeId };
  }
  if (v?.['kind'] === 'conclave-challenge') {
    const from = text(v['from']);
    const nonce = bytes(v['nonce'], HANDSHAKE_NONCE_BYTES);
    const proof = bytes(v['proof'], HANDSHAKE_PROOF_BYTES);
    if (from === undefined || nonce === undefined || proof === undefined) {
      return { error: 'challenge needs from (text), nonce and proof (32 bytes each)' };
    }
    return { kind: 'conclave-challenge', from: from as NodeId, nonce, proof };
  }
  if (v?.['kind'] === 'conclave-refused') {
    const reason = typeof v['reason'] === 'string' ? v['reason'].slice(0, 500) : 'no reason given';
    return { kind: 'conclave-refused', reason };
  }
  return { error: 'the answer to hello is not conclave-welcome, -challenge or -refused' };
}

/** Checks a decoded value as the connector's proof. Total: never throws. */
export function parseProof(value: unknown): Proof | { readonly error: string } {
  const v = asRecord(value);
  const proof = bytes(v?.['proof'], HANDSHAKE_PROOF_BYTES);
  if (v?.['kind'] !== 'conclave-proof' || proof === undefined) {
    return { error: `expected a conclave-proof with a ${HANDSHAKE_PROOF_BYTES}-byte proof` };
  }
  return { kind: 'conclave-proof', proof };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}

function bytes(value: unknown, length: number): Uint8Array | undefined {
  return value instanceof Uint8Array && value.length === length ? value : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= HANDSHAKE_TEXT_LENGTH_MAX
    ? value
    : undefined;
}
