/**
 * A member's link to one peer's event feed (`/v1/dashboard/member` on the peer's client port,
 * over wss when the client port is TLS), so that one page connection shows the whole cluster
 * (the page never talks to more than one member). Reconnects with backoff while open; reports
 * `down` at once when the socket closes or errors (a kill -9 of the peer closes its sockets,
 * so the page sees it within a round trip), and `up` on the first frame after a connect.
 */
import { WebSocket } from 'ws';
import type { FeedFrame } from '../server/event-feed.js';

/** The frame types a member's feed sends. */
export type FeedFrameType = FeedFrame['type'];

/**
 * A peer's frame as received: its type and text. The text is forwarded to pages as it came
 * (not decoded and encoded again); `member` is the link's, checked against the frame's own.
 */
export interface PeerFrame {
  readonly type: FeedFrameType;
  readonly member: string;
  readonly text: string;
}

export interface PeerLinkOptions {
  readonly member: string;
  /** The peer's client URL (http://host:port or https://host:port). */
  readonly url: string;
  /** TLS material for wss: the CA to trust, and this member's certificate to present. */
  readonly tls?: { readonly ca?: string | Buffer; readonly cert?: string | Buffer;
    readonly key?: string | Buffer } | undefined;
  readonly onFrame: (frame: PeerFrame) => void;
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
  private leasesWanted = false;

  constructor(private readonly o: PeerLinkOptions) {
    this.connect();
  }

  get isUp(): boolean {
    return this.up;
  }

  /** Asks the peer for its lease list (it sends one while it leads), or to stop sending it. */
  wantLeases(wanted: boolean): void {
    this.leasesWanted = wanted;
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify({ leases: wanted }));
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
    socket.on('open', () => {
      if (this.leasesWanted) socket.send(JSON.stringify({ leases: true }));
    });
    socket.on('message', (data) => {
      const frame = parseFrame(data.toString(), this.o.member);
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

const KNOWN_TYPES: ReadonlySet<string> = new Set<FeedFrameType>(['history', 'raft-event', 'rates',
  'leases', 'sample']);
/** How every feed frame begins (event-feed.ts builds them with these two fields first). */
const FRAME_HEAD = /^\{"type":"([a-z-]+)","member":("(?:[^"\\]|\\.){1,200}"),/;

/**
 * A peer's frame, if it is one: a JSON object that opens with a known `type` and the member id
 * of the peer this link is to. Only that head is read here (the body goes on as text; whoever
 * needs more of a frame decodes it).
 */
export function parseFrame(text: string, member: string): PeerFrame | undefined {
  const head = FRAME_HEAD.exec(text);
  // A frame is one line (pages get several per message, one a line; JSON.stringify never
  // writes a raw newline).
  if (head === null || !KNOWN_TYPES.has(head[1]!) || !text.endsWith('}') ||
    text.includes('\n')) return undefined;
  try {
    if (JSON.parse(head[2]!) !== member) return undefined;
  } catch {
    return undefined;
  }
  return { type: head[1] as FeedFrameType, member, text };
}
