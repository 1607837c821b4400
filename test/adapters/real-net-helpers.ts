/**
 * Helpers for tests over real loopback sockets: waiting on a condition with a deadline (never
 * a fixed sleep), a seeded Random, and making connected transport pairs on ephemeral ports.
 */
import * as net from 'node:net';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import { NetTransport } from '../../src/adapters/net-transport.js';
import { TcpTransport, type TcpTransportOptions } from '../../src/adapters/tcp-transport.js';
import type { TcpTransportConfig } from '../../src/adapters/tcp-transport-config.js';
import type { PeerAuthentication } from '../../src/adapters/tcp-transport-auth.js';
import { Prng } from '../../src/sim/prng.js';
import { validateTestMessage, type TestMessage } from '../compliance/transport.suite.js';
import { DEADLINE_FLOOR_MS } from '../support/deadlines.js';
export { freePort } from '../support/ports.js';

/** Default wait: sized for a loaded 2-core machine (test/support/deadlines.ts). */
export const WAIT_MS_MAX = DEADLINE_FLOOR_MS;
const POLL_MS = 2;

/** Resolves once `done()` holds; rejects naming `what` after `timeoutMs`. */
export async function waitFor(
  done: () => boolean, what: string, timeoutMs = WAIT_MS_MAX,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Test configs: short delays so that reconnects and timeouts happen within a test. */
export const FAST_TCP_CONFIG: Partial<TcpTransportConfig> = {
  reconnectDelayMsMin: 5,
  reconnectDelayMsMax: 50,
  handshakeTimeoutMs: 1000,
};

export function tcpOptions(
  id: string, seed: number, config: Partial<TcpTransportConfig> = {},
  authentication?: PeerAuthentication,
): TcpTransportOptions<TestMessage> {
  return {
    localId: nodeId(id),
    validate: validateTestMessage,
    random: new Prng(seed),
    config: { ...FAST_TCP_CONFIG, ...config },
    ...(authentication === undefined ? {} : { authentication }),
  };
}

/** How each member of a test pair authenticates (by id); undefined: none. */
export type AuthFor = (id: string) => PeerAuthentication | undefined;

/** Two TCP transports on 127.0.0.1 ephemeral ports, each in the other's address book. */
export async function tcpPair(config: Partial<TcpTransportConfig> = {},
  authFor: AuthFor = () => undefined): Promise<{
  a: TcpTransport<TestMessage>; b: TcpTransport<TestMessage>;
}> {
  const a = await TcpTransport.listen(tcpOptions('a', 1, config, authFor('a')));
  const b = await TcpTransport.listen(tcpOptions('b', 2, config, authFor('b')));
  a.setPeerAddress(b.localId, b.address);
  b.setPeerAddress(a.localId, a.address);
  return { a, b };
}

export async function netPair(): Promise<{
  a: NetTransport<TestMessage>; b: NetTransport<TestMessage>;
}> {
  const a = await NetTransport.listen(tcpOptions('a', 1));
  const b = await NetTransport.listen(tcpOptions('b', 2));
  a.setPeerAddress(b.localId, b.address);
  b.setPeerAddress(a.localId, a.address);
  return { a, b };
}

/** A raw client socket that records what it receives and whether it was closed. */
export interface RawClient {
  readonly socket: net.Socket;
  received(): Buffer;
  readonly closed: () => boolean;
}

export async function rawClient(port: number): Promise<RawClient> {
  const socket = net.connect({ host: '127.0.0.1', port });
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, received: () => Buffer.concat(chunks), closed: () => closed };
}

export const NOBODY: NodeId = nodeId('nobody');
