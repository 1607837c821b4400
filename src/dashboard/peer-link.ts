/**
 * A member's link to one peer's event feed (`/v1/dashboard/member` on the peer's client port,
 * over wss when the client port is TLS), so that one page connection shows the whole cluster
 * (the page never talks to more than one member). Reconnects with backoff while open; reports
 * `down` at once when the socket closes or errors (a kill -9 of the peer closes its sockets,
 * so the page sees it within a round trip), and `up` on the first frame after a connect.
 */
import { WebSocket } from 'ws';
import type { FeedFrame } from '../server/event-feed.js';

export interface PeerLinkOptions {
  readonly member: string;
  /** The peer's client URL (http://host:port or https://host:port). */
  readonly url: string;
  /** TLS material for wss: the CA to trust, and this member's certificate to present. */
  readonly tls?: { readonly ca?: string | Buffer; readonly cert?: string | Buffer;
    readonly key?: string | Buffer } | undefined;
  readonly onFrame: (frame: FeedFrame) => void;
  readonly onState: (up: boolean, reason: string) => void;
  /** Largest frame accepted from the peer. Unit: bytes. */
  readonly frameBytesMax: number;
}

/** Waits between reconnects: from 100 ms doubling to 2 s. Unit: ms. */
const RETRY_MS_MIN = 100;
const RETRY_MS_MAX = 2000;

export const MEMBER_FEED_PATH = '/v1/dashboard/member';

export class PeerLink {
  private socket: WebSocket | undefined;
  private retryMs = RETRY_MS_MIN;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private up = false;

  constructor(private readonly o: PeerLinkOptions) {
    this.connect();
  }

  get isUp(): boolean {
    return this.up;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.socket?.terminate();
  }

  private connect(): void {
    const url = this.o.url.replace(/^http/, 'ws') + MEMBER_FEED_PATH;
    const socket = new WebSocket(url, {
      maxPayload: this.o.frameBytesMax, handshakeTimeout: 2000, ...(this.o.tls ?? {}),
    });
    this.socket = socket;
    socket.on('message', (data) => {
      const frame = parseFrame(data.toString());
      if (frame === undefined) return;
      if (!this.up) this.setUp(true, 'connected');
      this.retryMs = RETRY_MS_MIN;
      this.o.onFrame(frame);
    });
    socket.on('error', (error) => this.lost(`link error: ${error.message}`));
    socket.on('close', (code) => this.lost(`link closed (${code})`));
  }

  private lost(reason: string): void {
    if (this.socket === undefined) return;
    this.socket.removeAllListeners();
    this.socket.on('error', () => undefined);
    this.socket.terminate();
    this.socket = undefined;
    if (this.up) this.setUp(false, reason);
    else this.o.onState(false, reason);
    if (this.closed) return;
    this.retryTimer = setTimeout(() => this.connect(), this.retryMs);
    this.retryMs = Math.min(RETRY_MS_MAX, 2 * this.retryMs);
  }

  private setUp(up: boolean, reason: string): void {
    this.up = up;
    this.o.onState(up, reason);
  }
}

/** A peer's frame, if it is one: an object with a known `type` and a member id. */
function parseFrame(text: string): FeedFrame | undefined {
  try {
    const value = JSON.parse(text) as { type?: unknown; member?: unknown };
    const known = ['history', 'raft-event', 'rates', 'leases', 'sample'];
    if (typeof value !== 'object' || value === null || typeof value.member !== 'string' ||
      !known.includes(String(value.type))) return undefined;
    return value as FeedFrame;
  } catch {
    return undefined;
  }
}
