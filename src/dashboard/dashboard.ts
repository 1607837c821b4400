/**
 * The dashboard on one member's client port (docs/dashboard.md):
 *   GET /ui, /ui/app.js, /ui/app.css — the page (built by esbuild into dist/dashboard)
 *   WS  /ui/feed                     — the page's one connection: every member's frames,
 *                                      merged here, plus elections, locks and keys
 *   WS  /v1/dashboard/member         — this member's own feed, for its peers to gather
 *
 * Gathering happens server-side: while at least one page is open, this member holds a link
 * to each peer's member feed (peer-link.ts) and forwards their frames; with no page open it
 * holds none. So the browser keeps one connection whatever the cluster size, and a member
 * that dies shows as down the moment its link closes.
 *
 * What it costs a member (docs/dashboard.md, "What it costs"): with no page open, nothing (no
 * links, no samples taken). With pages open, peers' frames go on to the pages as the text they
 * came in (only the head is read; samples, most of the frames, are never decoded), each frame
 * is encoded once for every page, frames are sent to the pages once per `PAGE_WINDOW_MS`
 * (one message, one frame a line) with only each member's latest sample in it, and the
 * lease list travels only while a page shows it (then as deltas).
 *
 * Read-only: the page can browse, never write (auth is not built yet; when it is, writes will
 * need root). Bounds: `pagesMax` page connections, `bufferedBytesMax` queued per page (a page
 * that cannot keep up is closed with 1013 and reconnects), 4 KiB per request from the page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { KvStore } from '../core/kv/index.js';
import type { Logger } from '../ports/logger.js';
import type { EventFeed, FeedFrame } from '../server/event-feed.js';
import { changesSince, keysUnder, recipesOf } from './cluster-view.js';
import { loadAssets, type DashboardAssets } from './assets.js';
import { MEMBER_FEED_PATH, PeerLink, type PeerFrame, type PeerLinkOptions } from
  './peer-link.js';
import { MemberFrameCache } from './member-frame-cache.js';
import { parsePageRequest, type PageRequest } from './page-requests.js';

export interface DashboardOptions {
  readonly memberId: string;
  readonly feed: EventFeed;
  readonly store: KvStore;
  /** Every member's client URL (this one's included), by member id. */
  readonly clientUrls: ReadonlyMap<string, string>;
  readonly tls?: PeerLinkOptions['tls'];
  readonly logger: Logger;
  /** Shown on the page: the cluster's timings (what "a heartbeat" means here). */
  readonly heartbeatMs: number;
  readonly electionTimeoutMs: number;
  /** Page connections at once. Unit: connections. Default: 32. */
  readonly pagesMax?: number;
  /** Bytes queued to one page before it is cut off. Unit: bytes. Default: 8 MiB. */
  readonly bufferedBytesMax?: number;
}

/** Largest frame from a peer's feed (a leases frame of 2000 leases is ~300 KB). */
const PEER_FRAME_BYTES_MAX = 4 * 1024 * 1024;
/** Largest request from a page. Unit: bytes. */
const PAGE_REQUEST_BYTES_MAX = 4096;
/** How often elections, locks and the watched prefixes are looked at. Unit: ms. */
const CLUSTER_INTERVAL_MS = 1000;
/**
 * Members' frames go to the pages once per window, each member's latest sample only. Unit: ms.
 * Why 250: the page redraws four times a second (web/main.ts), so a sample more often is never
 * seen; a member's link going down is sent at once, not in the window.
 */
export const PAGE_WINDOW_MS = 250;
/** A member's feed sends its peers a sample at most this often (see PAGE_WINDOW_MS). Unit: ms. */
const MEMBER_SAMPLE_MS_MIN = PAGE_WINDOW_MS - 10;

interface Page {
  readonly socket: WebSocket;
  watch?: { prefix: string; nextRevision: number };
  /** Whether it shows the leases (its tab is in view): only then do they go to it. */
  leases: boolean;
}

/** The frames of one window, in order, samples kept only the latest per member. */
interface PageBatch {
  readonly lines: { text: string; leases: boolean }[];
  readonly sampleAt: Map<string, number>;
  /** UTF-16 code units of the lines other than samples (samples replace each other). */
  chars: number;
}

/**
 * Frames other than samples held for one window before they are sent at once. Unit: UTF-16
 * code units. Default: 4 Mi, one peer frame at its largest: a window normally holds a few KB,
 * and a burst past this is sent without waiting for the window to end.
 */
const PAGE_BATCH_CHARS_MAX = PEER_FRAME_BYTES_MAX;

export class Dashboard {
  private readonly pages = new Set<Page>();
  private readonly pageServer = new WebSocketServer({ noServer: true,
    maxPayload: PAGE_REQUEST_BYTES_MAX });
  private readonly memberServer = new WebSocketServer({ noServer: true, maxPayload: 1024 });
  private readonly links = new Map<string, PeerLink>();
  private readonly linkState = new Map<string, { up: boolean; reason: string; atMs: number }>();
  private readonly assets: DashboardAssets | undefined;
  private readonly cache = new MemberFrameCache();
  private unsubscribeLocal: (() => void) | undefined;
  private clusterTimer: NodeJS.Timeout | undefined;
  private batch: PageBatch = { lines: [], sampleAt: new Map(), chars: 0 };
  private batchTimer: NodeJS.Timeout | undefined;
  private leasesWanted = false;
  private readonly onLocalFrame = (frame: FeedFrame, json: () => string): void =>
    this.forward(frame.type, frame.member, json(), frame);

  constructor(private readonly o: DashboardOptions) {
    this.assets = loadAssets();
    if (this.assets === undefined) {
      o.logger.warn({}, 'dashboard assets not built (npm run build): /ui serves a notice');
    }
  }

  /** Serves GET /ui*; false when the request is not the dashboard's. */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET' || (path !== '/ui' && !path.startsWith('/ui/'))) return false;
    if (path === '/ui') {
      res.writeHead(301, { location: '/ui/' }).end();
      return true;
    }
    const asset = this.assets?.get(path === '/ui/' ? 'index.html' : path.slice(4));
    if (asset === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(this.assets === undefined
        ? 'dashboard not built: run npm run build\n' : 'not found\n');
      return true;
    }
    res.writeHead(200, { 'content-type': asset.contentType, 'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff' }).end(asset.body);
    return true;
  }

  /** Takes the dashboard's WebSocket upgrades; false when not one of them. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === MEMBER_FEED_PATH) {
      this.memberServer.handleUpgrade(req, socket, head, (ws) => this.serveMember(ws));
      return true;
    }
    if (path !== '/ui/feed') return false;
    if (this.pages.size >= (this.o.pagesMax ?? 32)) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n');
      return true;
    }
    this.pageServer.handleUpgrade(req, socket, head, (ws) => this.servePage(ws));
    return true;
  }

  close(): void {
    for (const page of this.pages) page.socket.close(1001, 'server stopping');
    this.stopGathering();
    this.memberServer.clients.forEach((ws) => ws.close(1001, 'server stopping'));
  }

  /** A peer gathering this member's frames. */
  private serveMember(ws: WebSocket): void {
    const bufferedMax = this.o.bufferedBytesMax ?? 8 * 1024 * 1024;
    ws.send(JSON.stringify(this.o.feed.history()));
    let sampleSentAtMs = -Infinity;
    const listener = (frame: FeedFrame, json: () => string): void => {
      if (ws.bufferedAmount > bufferedMax) return ws.close(1013, 'too slow');
      // The gathering member sends its pages one sample per window: no more are needed.
      if (frame.type === 'sample') {
        if (frame.atMs - sampleSentAtMs < MEMBER_SAMPLE_MS_MIN) return;
        sampleSentAtMs = frame.atMs;
      }
      ws.send(json());
    };
    const unsubscribe = this.o.feed.subscribe(listener);
    // The one thing a gathering member says: whether it wants the lease list.
    ws.on('message', (data) => {
      const wanted = parseLeasesWanted(data.toString());
      if (wanted !== undefined) this.o.feed.setLeasesWanted(listener, wanted);
    });
    ws.on('close', unsubscribe);
    ws.on('error', () => ws.terminate());
  }

  private servePage(socket: WebSocket): void {
    const page: Page = { socket, leases: false };
    this.pages.add(page);
    this.send(page, {
      type: 'hello', servedBy: this.o.memberId, members: [...this.o.clientUrls.keys()],
      clientUrls: Object.fromEntries(this.o.clientUrls),
      readOnly: true, writes: 'read-only: authentication is not built yet',
      heartbeatMs: this.o.heartbeatMs, electionTimeoutMs: this.o.electionTimeoutMs,
    });
    this.startGathering();
    this.sendLines(page, this.cache.textsForNewPage());
    for (const [member, state] of this.linkState) {
      this.send(page, { type: 'member-link', member, ...state });
    }
    this.sendCluster(page);
    socket.on('message', (data) => this.onPageMessage(page, data.toString()));
    socket.on('close', () => {
      this.pages.delete(page);
      if (this.pages.size === 0) this.stopGathering();
      else this.updateLeasesWanted();
    });
    socket.on('error', () => socket.terminate());
  }

  private startGathering(): void {
    if (this.unsubscribeLocal !== undefined) return;
    this.cache.note(this.o.feed.history());
    this.unsubscribeLocal = this.o.feed.subscribe(this.onLocalFrame);
    for (const [member, url] of this.o.clientUrls) {
      if (member === this.o.memberId) continue;
      this.links.set(member, new PeerLink({
        member, url, tls: this.o.tls, frameBytesMax: PEER_FRAME_BYTES_MAX,
        onFrame: (frame) => this.onPeerFrame(frame),
        onState: (up, reason) => this.onLinkState(member, up, reason),
      }));
    }
    this.clusterTimer = setInterval(() => this.tickCluster(), CLUSTER_INTERVAL_MS);
    this.batchTimer = setInterval(() => this.flush(), PAGE_WINDOW_MS);
  }

  private stopGathering(): void {
    this.unsubscribeLocal?.();
    this.unsubscribeLocal = undefined;
    for (const link of this.links.values()) link.close();
    this.links.clear();
    this.linkState.clear();
    this.cache.clear();
    clearInterval(this.clusterTimer);
    clearInterval(this.batchTimer);
    this.batch = { lines: [], sampleAt: new Map(), chars: 0 };
    this.leasesWanted = false;
  }

  /** Whether some page shows the leases: the leader's feed sends them only then. */
  private updateLeasesWanted(): void {
    const wanted = [...this.pages].some((page) => page.leases);
    if (wanted === this.leasesWanted || this.unsubscribeLocal === undefined) return;
    this.leasesWanted = wanted;
    if (!wanted) this.cache.clearLeases();
    this.o.feed.setLeasesWanted(this.onLocalFrame, wanted);
    for (const link of this.links.values()) link.wantLeases(wanted);
  }

  private onLinkState(member: string, up: boolean, reason: string): void {
    const previous = this.linkState.get(member);
    if (previous !== undefined && previous.up === up) return;
    const state = { up, reason, atMs: Date.now() };
    this.linkState.set(member, state);
    // At once, not in the window: the frames before it first, so that the order holds.
    this.flush();
    this.broadcast({ type: 'member-link', member, ...state });
  }

  private tickCluster(): void {
    for (const page of this.pages) this.sendCluster(page);
  }

  /** Elections and locks, and the watched prefix's changes, from this member's store. */
  private sendCluster(page: Page): void {
    const recipes = recipesOf(this.o.store);
    this.send(page, { type: 'recipes', atMs: Date.now(), member: this.o.memberId,
      revision: this.o.store.revision, recipes: recipes.rows, truncated: recipes.truncated });
    if (page.watch !== undefined) {
      const found = changesSince(this.o.store, page.watch.prefix, true, page.watch.nextRevision);
      page.watch.nextRevision = found.nextRevision;
      if (found.changes.length > 0) {
        this.send(page, { type: 'watch-changes', prefix: page.watch.prefix, ...found });
      }
    }
  }

  private onPageMessage(page: Page, text: string): void {
    const parsed = parsePageRequest(text);
    if (parsed.kind === 'invalid') {
      return this.send(page, { type: 'error', message: parsed.problem });
    }
    this.answer(page, parsed.request);
  }

  private answer(page: Page, request: PageRequest): void {
    const store = this.o.store;
    switch (request.type) {
      case 'keys':
        return this.send(page, { type: 'reply', id: request.id, prefix: request.prefix,
          ...keysUnder(store, request.prefix) });
      case 'key-history':
        return this.send(page, { type: 'reply', id: request.id, key: request.key,
          ...changesSince(store, request.key, false, 1) });
      case 'watch':
        page.watch = { prefix: request.prefix, nextRevision: store.revision + 1 };
        return this.send(page, { type: 'reply', id: request.id, watching: request.prefix,
          fromRevision: store.revision + 1 });
      case 'unwatch':
        delete page.watch;
        return this.send(page, { type: 'reply', id: request.id, watching: null });
      case 'view':
        return this.onView(page, request.leases);
    }
  }

  /** The page's tab changed; one that starts showing the leases gets the whole list first. */
  private onView(page: Page, leases: boolean): void {
    if (leases && !page.leases) {
      this.sendLines(page, this.cache.fullLeases().map((frame) => JSON.stringify(frame)));
    }
    page.leases = leases;
    this.updateLeasesWanted();
  }

  /** A peer's frame: samples go on as they came; the rest are decoded for the cache. */
  private onPeerFrame(frame: PeerFrame): void {
    if (frame.type === 'sample') return this.forward('sample', frame.member, frame.text);
    let decoded: FeedFrame;
    try {
      decoded = JSON.parse(frame.text) as FeedFrame;
    } catch {
      return;
    }
    this.forward(frame.type, frame.member, frame.text, decoded);
  }

  /**
   * A member's frame (its text, and the frame itself unless it is a sample): remembered for
   * pages that connect later, and queued for the pages' next window.
   */
  private forward(type: FeedFrame['type'], member: string, text: string, frame?: FeedFrame):
    void {
    if (type === 'sample') this.cache.noteSample(member, text);
    else if (frame !== undefined && frame.type !== 'sample') this.cache.note(frame);
    // A history comes when a link (re)connects: the page merges it with what it has.
    if (type !== 'sample') {
      this.batch.lines.push({ text, leases: type === 'leases' });
      this.batch.chars += text.length;
      if (this.batch.chars > PAGE_BATCH_CHARS_MAX) this.flush();
      return;
    }
    const at = this.batch.sampleAt.get(member);
    if (at !== undefined) this.batch.lines[at] = { text, leases: false };
    else this.batch.sampleAt.set(member, this.batch.lines.push({ text, leases: false }) - 1);
  }

  /** Sends the window's frames: one message to each page, one frame a line. */
  private flush(): void {
    const lines = this.batch.lines;
    if (lines.length === 0) return;
    this.batch = { lines: [], sampleAt: new Map(), chars: 0 };
    let all: string | undefined;
    let withoutLeases: string | undefined;
    for (const page of this.pages) {
      if (page.leases) all ??= lines.map((l) => l.text).join('\n');
      else withoutLeases ??= lines.filter((l) => !l.leases).map((l) => l.text).join('\n');
      const text = page.leases ? all : withoutLeases;
      if (text !== undefined && text !== '') this.sendText(page, text);
    }
  }

  private sendLines(page: Page, texts: readonly string[]): void {
    if (texts.length > 0) this.sendText(page, texts.join('\n'));
  }

  private broadcast(frame: FeedFrame | Record<string, unknown>): void {
    const text = JSON.stringify(frame);
    for (const page of this.pages) this.sendText(page, text);
  }

  private send(page: Page, frame: FeedFrame | Record<string, unknown>): void {
    this.sendText(page, JSON.stringify(frame));
  }

  private sendText(page: Page, text: string): void {
    if (page.socket.readyState !== page.socket.OPEN) return;
    if (page.socket.bufferedAmount > (this.o.bufferedBytesMax ?? 8 * 1024 * 1024)) {
      page.socket.close(1013, 'page too slow: reconnect');
      return;
    }
    page.socket.send(text);
  }
}

/** A gathering member's `{"leases": true|false}`, or undefined for anything else. */
function parseLeasesWanted(text: string): boolean | undefined {
  try {
    const value = JSON.parse(text) as { leases?: unknown } | null;
    return typeof value?.leases === 'boolean' ? value.leases : undefined;
  } catch {
    return undefined;
  }
}
