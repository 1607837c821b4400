/**
 * Where a peer listens: a host (IP literal or DNS name) and a TCP/UDP port. The textual form is
 * `host:port`, with IPv6 literals in brackets (`[::1]:7000`), as on the command line
 * (`--peer-addr`, `--cluster n1=HOST:PORT`) and in gossip updates.
 */
import * as net from 'node:net';

export interface PeerAddress {
  /** An IPv4/IPv6 literal or a DNS name (resolved on each connect). */
  readonly host: string;
  /** Unit: port number in [0, 65535]; 0 only for listening (the OS picks a free port). */
  readonly port: number;
}

/** The loopback host transports listen on when none is given: nothing outside can connect. */
export const LOOPBACK_HOST = '127.0.0.1';

/** `host:port`, brackets around IPv6 literals so that the text parses back. */
export function formatPeerAddress(address: PeerAddress): string {
  const host = net.isIPv6(address.host) ? `[${address.host}]` : address.host;
  return `${host}:${address.port}`;
}

/**
 * Parses `host:port` or `[v6]:port`. Never throws: returns `{ error }` naming what is wrong.
 * Port 0 is refused (it is not an address a peer can be reached at).
 */
export function parsePeerAddress(text: string): PeerAddress | { readonly error: string } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text);
  if (match === null) {
    return { error: `not a host:port address: ${JSON.stringify(text.slice(0, 80))}` };
  }
  const host = match[1] ?? match[2] ?? '';
  const port = Number(match[3]);
  if (match[1] !== undefined && !net.isIPv6(host)) return { error: `not an IPv6 literal: ${host}` };
  if (!isPeerPort(port)) return { error: `port out of [1, 65535]: ${port}` };
  return { host, port };
}

/** A port a peer can be reached at. */
export function isPeerPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65_535;
}

export function samePeerAddress(a: PeerAddress | undefined, b: PeerAddress | undefined): boolean {
  return a?.host === b?.host && a?.port === b?.port;
}
