/**
 * A hostile peer for real-process tests: opens a TCP connection to a member's peer port, goes
 * through the handshake (`openPeerConnection`, the ONE place that knows how), then writes any
 * frames it is given, valid Raft messages or not. What the member answers is read and dropped
 * (after the handshake, frames flow one way: the member talks back on its own connections).
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { FrameDecoder, MessageCodec } from '../../src/adapters/frame-codec.js';
import {
  HANDSHAKE_FRAME_BYTES_MAX, WIRE_VERSION, parseHandshakeReply,
} from '../../src/adapters/tcp-handshake.js';
import { HANDSHAKE_NONCE_BYTES, handshakeProof } from '../../src/adapters/tcp-transport-auth.js';
import { nodeId } from '../../src/core/ids.js';

/** Frames up to 4 MiB, as the server accepts (PEER_FRAME_BYTES_MAX). */
const FRAME_BYTES_MAX = 4 * 1024 * 1024;

export interface PeerIdentity {
  /** The id to speak as: `evil` (a non-member), or a member's id (a spoofed hello). */
  readonly from: string;
  /** The id of the member dialled. */
  readonly to: string;
  readonly clusterName: string;
  /** The cluster secret (`--peer-secret-file`), when the members authenticate peers with it. */
  readonly secret?: Buffer;
}

export type PeerConnection =
  | {
    readonly kind: 'open';
    /** Writes one frame holding `value` (any value: the member must judge it). */
    send(value: unknown): void;
    /** Whether the member closed the connection (after an invalid frame, or a displacement). */
    readonly closed: () => boolean;
    close(): void;
  }
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * Connects to a member's peer port as `identity.from` and completes the handshake: the plain
 * hello of src/adapters/tcp-handshake.ts, and with `identity.secret` the cluster-secret
 * challenge of src/adapters/tcp-transport-auth.ts (which proves "holds the secret", not an id:
 * so the injector may speak as the non-member `evil`; a member may still refuse a claim of
 * another member's id, which the tests accept as an outcome).
 */
export async function openPeerConnection(port: number, identity: PeerIdentity,
  timeoutMs = 5000): Promise<PeerConnection> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  const codec = new MessageCodec();
  const decoder = new FrameDecoder(HANDSHAKE_FRAME_BYTES_MAX);
  let closed = false;
  const nonce = randomBytes(HANDSHAKE_NONCE_BYTES);
  socket.on('close', () => { closed = true; });
  const reply = await new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
    const timer = setTimeout(() => resolve({ ok: false, reason: 'no answer to hello' }), timeoutMs);
    socket.once('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: error.message });
    });
    socket.once('connect', () => {
      const hello = { kind: 'conclave-hello', version: WIRE_VERSION, cluster: identity.clusterName,
        from: identity.from, to: identity.to,
        ...(identity.secret === undefined ? {} : { nonce }) };
      const frame = codec.encodeFrame(hello, HANDSHAKE_FRAME_BYTES_MAX);
      if (frame.ok) socket.write(frame.bytes);
    });
    socket.on('data', (chunk: Buffer) => {
      for (const payload of decoder.push(chunk).payloads) {
        const decoded = codec.decodePayload(payload);
        const answer = decoded.ok
          ? parseHandshakeReply(decoded.value)
          : { error: 'undecodable reply' };
        if (!('error' in answer) && answer.kind === 'conclave-challenge') {
          if (identity.secret === undefined) {
            clearTimeout(timer);
            resolve({ ok: false, reason: 'challenged, and no secret to answer with' });
            return;
          }
          const proof = handshakeProof(identity.secret, 'connector', {
            version: WIRE_VERSION, cluster: identity.clusterName, connector: nodeId(identity.from),
            acceptor: answer.from, connectorNonce: nonce, acceptorNonce: answer.nonce,
          });
          const frame = codec.encodeFrame({ kind: 'conclave-proof', proof },
            HANDSHAKE_FRAME_BYTES_MAX);
          if (frame.ok) socket.write(frame.bytes);
          continue;
        }
        clearTimeout(timer);
        if ('error' in answer) resolve({ ok: false, reason: answer.error });
        else if (answer.kind === 'conclave-refused') resolve({ ok: false, reason: answer.reason });
        else resolve({ ok: true });
        return;
      }
    });
  });
  if (!reply.ok) {
    socket.destroy();
    return { kind: 'refused', reason: reply.reason };
  }
  socket.removeAllListeners('data');
  socket.on('data', () => undefined);
  socket.on('error', () => undefined);
  return {
    kind: 'open',
    send: (value) => {
      if (closed) return;
      const frame = codec.encodeFrame(value, FRAME_BYTES_MAX);
      if (frame.ok) socket.write(frame.bytes);
    },
    closed: () => closed,
    close: () => socket.destroy(),
  };
}
