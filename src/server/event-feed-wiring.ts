/**
 * How the server feeds its EventFeed (event-feed.ts): timers for the samples and the
 * per-second rates, and thin wrappers that time the requests this member serves (puts, reads,
 * keep-alives over HTTP and over the lease stream). Kept out of server.ts so that the server
 * only calls these.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { formatPeerAddress } from '../adapters/peer-address.js';
import type { NodeId } from '../core/ids.js';
import type { Random } from '../core/random.js';
import type { Clock } from '../ports/clock.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import { EVENT_FEED_DEFAULTS, EventFeed, type LeaseRow, type ServedKind } from './event-feed.js';
import type { ServerConfig } from './server-config.js';

/** Samples are never taken more often than this, whatever the heartbeat. Unit: ms. */
const SAMPLE_INTERVAL_MS_MIN = 50;
/** Keys listed per lease in the leases frame (the count says how many there are). */
const LEASE_KEYS_SHOWN_MAX = 3;

export function eventFeedOf(core: ConsistentCore, clock: Clock, random: Random,
  heartbeatMs: number): EventFeed {
  return new EventFeed({
    id: core.id,
    status: () => core.status(),
    revision: () => core.store.revision,
    leaseCount: () => core.store.leaseCount,
    leases: (max) => leaseRows(core, max, clock.wallMs()),
  }, clock, random, {
    ...EVENT_FEED_DEFAULTS, sampleIntervalMs: Math.max(SAMPLE_INTERVAL_MS_MIN, heartbeatMs),
  });
}

/** On the leader: each lease with the tracker's remaining TTL (the page animates the bars). */
function leaseRows(core: ConsistentCore, max: number, nowWallMs: number):
  { rows: LeaseRow[]; total: number } | undefined {
  if (core.leases.leaderTerm === undefined) return undefined;
  const all = core.store.leases();
  const rows = all.slice(0, max).map((lease) => {
    const remaining = core.leases.remainingMs(lease.id);
    const keys = core.store.leaseKeys(lease.id);
    const remainingMs = remaining === undefined ? null : Math.floor(remaining);
    return { id: lease.id, ttlMs: lease.ttlMs, remainingMs,
      expiresAtMs: remainingMs === null ? null : nowWallMs + remainingMs,
      keys: keys.slice(0, LEASE_KEYS_SHOWN_MAX), keyCount: keys.length };
  });
  return { rows, total: all.length };
}

/**
 * Samples only while someone listens: with no page open the sample timer does not run at all
 * (a member idles without waking every heartbeat for the dashboard). The per-second rates keep
 * running, so a page opened later gets the last five minutes of its charts.
 */
export function startEventFeedTimers(feed: EventFeed): { stop(): void } {
  let sampleTimer: NodeJS.Timeout | undefined;
  const stopSampling = (): void => {
    if (sampleTimer !== undefined) clearInterval(sampleTimer);
    sampleTimer = undefined;
  };
  const listenedChanged = (listened: boolean): void => {
    stopSampling();
    if (!listened) return;
    sampleTimer = setInterval(() => feed.sample(), feed.config.sampleIntervalMs);
    sampleTimer.unref();
  };
  feed.onListenedChange(listenedChanged);
  if (feed.subscriberCount > 0) listenedChanged(true);
  const secondTimer = setInterval(() => feed.closeSecond(), 1000);
  secondTimer.unref();
  return { stop: () => {
    stopSampling();
    clearInterval(secondTimer);
  } };
}

const SERVED_PATHS: ReadonlyMap<string, ServedKind> = new Map<string, ServedKind>([
  ['/v1/kv/put', 'put'], ['/v1/kv/delete', 'put'], ['/v1/kv/txn', 'put'],
  ['/v1/kv/range', 'read'], ['/v1/lease/keepalive', 'keepalive'],
]);

/** Times each API request this member answers itself (a redirect to the leader is not one). */
export function timedRequests(feed: EventFeed, clock: Clock, handler: RequestListener):
  RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const kind = req.method === 'POST' ? SERVED_PATHS.get(req.url ?? '') : undefined;
    if (kind !== undefined) {
      const startMs = clock.monotonicMs();
      res.once('finish', () => {
        if (res.statusCode === 200) feed.onServed(kind, clock.monotonicMs() - startMs);
      });
    }
    handler(req, res);
  };
}

/** The core as the lease stream sees it, with each answered keep-alive timed. */
export function servedKeepAlives(core: ConsistentCore, feed: EventFeed, clock: Clock):
  Pick<ConsistentCore, 'id' | 'status' | 'keepAlive'> {
  return {
    id: core.id,
    status: () => core.status(),
    keepAlive: (leaseId, done) => {
      const startMs = clock.monotonicMs();
      core.keepAlive(leaseId, (outcome) => {
        if (outcome.kind === 'ok') feed.onServed('keepalive', clock.monotonicMs() - startMs);
        done(outcome);
      });
    },
  };
}

/** Each member's client URL by id (the dashboard gathers their feeds); this one's always. */
export function clientUrlsOf(config: ServerConfig,
  clientUrlOf: (id: NodeId) => string | undefined): Map<string, string> {
  const urls = new Map<string, string>();
  for (const id of config.cluster.keys()) {
    const url = clientUrlOf(id);
    if (url !== undefined) urls.set(id, url);
  }
  if (!urls.has(config.name)) {
    const scheme = config.clientTls === undefined ? 'http' : 'https';
    urls.set(config.name, `${scheme}://${formatPeerAddress(config.clientAddress)}`);
  }
  return urls;
}
