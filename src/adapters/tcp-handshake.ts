/**
 * The first frames on a peer connection. The connecting side sends `hello` (who it is, which
 * cluster, whom it means to reach); the accepting side answers `welcome` (with its own id) or
 * `refused` (with the reason, then closes). After `welcome`, frames flow one way only, from the
 * connecting side: each is one protocol message. Ids are claimed, not proven (no TLS yet).
 */
import type { NodeId } from '../core/ids.js';

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
}

export interface Welcome {
  readonly kind: 'conclave-welcome';
  readonly from: NodeId;
}

export interface Refused {
  readonly kind: 'conclave-refused';
  readonly reason: string;
}

export type HandshakeReply = Welcome | Refused;

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
  if (v?.['kind'] === 'conclave-refused') {
    const reason = typeof v['reason'] === 'string' ? v['reason'].slice(0, 500) : 'no reason given';
    return { kind: 'conclave-refused', reason };
  }
  return { error: 'the answer to hello is neither conclave-welcome nor conclave-refused' };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= HANDSHAKE_TEXT_LENGTH_MAX
    ? value
    : undefined;
}
