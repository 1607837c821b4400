/**
 * Streams watch events to subscribers, in revision order, never skipping or repeating one.
 *
 * Two ways a watcher gets events. Catching up (it asked for an older revision, or fell behind
 * while its connection was slow to take bytes): it pulls pages from the store's history, but
 * only while less than half of `watcherBufferBytesMax` is queued for it; it continues when its
 * connection has taken what was queued. Live (caught up): each new revision's events are pushed
 * to it as they apply. A live watcher whose queue passes `watcherBufferBytesMax` is canceled
 * `slow`: its stream ends with `{"kind":"canceled","reason":"slow","nextRevision":R}` after
 * the events already queued, and the client resumes from R (etcd cancels a watch with a reason
 * the same way; its slow "victim" watchers catch up from the store, as ours do from the
 * history, but without a bound on what waits in the server).
 *
 * Time: new events go out to live watchers in turns of at most `FANOUT_BYTES_PER_TURN`, the
 * event loop free in between (round robin over the watchers), so fanning a 1 MB event out to
 * thousands of watchers does not hold up heartbeats or other clients (writing to a socket
 * copies into the kernel's buffers: 1 MB to each of 5,000 unread sockets held a follower's
 * event loop for 30 s in one turn).
 *
 * Memory: an event is encoded once (JSON, as a byte buffer) and the same buffer is queued to
 * every watcher it goes to, so 5,000 watchers of a 1 MB event hold 1 MB, not 5 GB (issue #14:
 * one JSON.stringify per watcher exhausted a follower's heap). Encodings are cached by event up
 * to `ENCODED_EVENTS_BYTES_MAX`. The bytes queued to all watchers, each buffer counted once
 * however many queues hold it, are bounded by `watchBufferBytesMax`: past it the watchers with
 * the most queued are canceled `slow`.
 */
import { assert } from '../core/assert.js';
import type { KvErrorResult, KvEvent, KvEventsResult, KvKeySelector } from '../core/kv/index.js';

/** What the hub reads: the store's revision, compact revision and history. */
export interface WatchSource {
  readonly revision: number;
  eventsSince(fromRevision: number, selector: KvKeySelector, limit?: number):
    KvEventsResult | KvErrorResult;
}

/**
 * Where one watcher's bytes go (an HTTP response). `write` queues the chunks in order and
 * calls `flushed` once the connection has taken all of them (or is gone); `end` queues `last`
 * and ends the stream.
 */
export interface WatchSink {
  write(chunks: readonly Uint8Array[], flushed: () => void): void;
  end(last?: Uint8Array): void;
}

/** The wire messages, one JSON object per line. */
export type WatchMessage =
  | { readonly kind: 'events'; readonly events: readonly KvEvent[]; readonly nextRevision: number }
  | { readonly kind: 'compacted'; readonly compactRevision: number }
  | { readonly kind: 'progress'; readonly revision: number }
  | { readonly kind: 'canceled'; readonly reason: 'slow'; readonly nextRevision: number };

export interface WatchHubLimits {
  /** See ClientLimits.watcherBufferBytesMax. Unit: bytes. */
  readonly watcherBufferBytesMax: number;
  /** See ClientLimits.watchBufferBytesMax. Unit: bytes. */
  readonly watchBufferBytesMax: number;
}

/** Runs `task` later, on a later turn of the event loop. Default: setImmediate. */
export type Schedule = (task: () => void) => void;

/** A watcher's handle: `close()` when its client went away (frees what is queued for it). */
export interface WatchHandle {
  close(): void;
}

/** One write to a sink, released when the sink says it was taken. */
interface Queued {
  readonly chunks: readonly Uint8Array[];
  readonly bytes: number;
  released: boolean;
}

interface Watcher {
  readonly selector: KvKeySelector;
  nextRevision: number;
  readonly sink: WatchSink;
  readonly queue: Queued[];
  queuedBytes: number;
  live: boolean;
  /** Canceled, compacted, closed or ended: takes no more events. */
  done: boolean;
}

/** Events per history page while catching up. */
const EVENTS_PER_PULL = 1000;
/**
 * Bytes offered to live watchers' connections in one turn of the event loop before the rest
 * waits for the next turn. Unit: bytes. Default: 8 MiB: a few milliseconds of copying into
 * socket buffers, well under a heartbeat interval.
 */
const FANOUT_BYTES_PER_TURN = 8 * 1024 * 1024;
/**
 * Memory the cache of encoded events may hold. Unit: bytes. Default: 32 MiB, half the
 * history's own bound: recent events, which live watchers and slightly late ones share.
 */
const ENCODED_EVENTS_BYTES_MAX = 32 * 1024 * 1024;

const utf8 = new TextEncoder();
const EVENTS_HEAD = utf8.encode('{"kind":"events","events":[');
const COMMA = utf8.encode(',');

export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  /** Watchers removed from `watchers` whose queue still holds buffers. */
  private readonly draining = new Set<Watcher>();
  private readonly encoded = new Map<KvEvent, Uint8Array>();
  private encodedBytes = 0;
  /** How many queues hold each buffer; `queuedBytesValue` counts each held buffer once. */
  private readonly holders = new Map<Uint8Array, number>();
  private queuedBytesValue = 0;
  private encodeCountValue = 0;
  private canceledSlowValue = 0;
  /** The live watchers of the fan-out pass under way, and how far it got. */
  private pass: Watcher[] = [];
  private passAt = 0;
  private pumpScheduled = false;

  constructor(private readonly source: WatchSource, private readonly limits: WatchHubLimits,
    private readonly schedule: Schedule = setImmediate) {}

  /** Watchers streaming (not yet ended). */
  get size(): number {
    return this.watchers.size;
  }

  /** Bytes queued to all watchers, each buffer once. Unit: bytes. */
  get queuedBytes(): number {
    return this.queuedBytesValue;
  }

  /** Events encoded so far (one per event while the cache holds it; for tests and metrics). */
  get encodeCount(): number {
    return this.encodeCountValue;
  }

  /** Watchers canceled `slow` so far. */
  get canceledSlow(): number {
    return this.canceledSlowValue;
  }

  /**
   * Starts a watch from `fromRevision` (0: from the next change on); the caller checked the
   * request. The stream opens with a `progress` line (the store's revision).
   */
  watch(selector: KvKeySelector, fromRevision: number, sink: WatchSink): WatchHandle {
    const revision = this.source.revision;
    const watcher: Watcher = { selector, nextRevision: fromRevision > 0 ? fromRevision
      : revision + 1, sink, queue: [], queuedBytes: 0, live: false, done: false };
    this.watchers.add(watcher);
    this.send(watcher, [line({ kind: 'progress', revision })]);
    this.catchUp(watcher);
    this.enforceTotal();
    return { close: () => this.close(watcher) };
  }

  /** The store applied entries: live watchers get the new events, from the next turn on. */
  notify(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    this.schedule(() => this.pump());
  }

  /**
   * One turn of the fan-out: live watchers behind the store get their new events, round robin,
   * until `FANOUT_BYTES_PER_TURN` were offered (then the next turn goes on) or all are current.
   */
  private pump(): void {
    this.pumpScheduled = false;
    const revision = this.source.revision;
    const due = (w: Watcher): boolean => w.live && !w.done && w.nextRevision <= revision;
    let budget = FANOUT_BYTES_PER_TURN;
    while (budget > 0) {
      if (this.passAt >= this.pass.length) {
        this.pass = [...this.watchers].filter(due);
        this.passAt = 0;
        if (this.pass.length === 0) break;
      }
      const watcher = this.pass[this.passAt++] as Watcher;
      if (due(watcher)) budget -= this.push(watcher);
    }
    if (budget <= 0) this.notify();
    else this.pass = [];
    this.enforceTotal();
  }

  /** A live watcher's new events; past its bound it is canceled. Returns the bytes offered. */
  private push(watcher: Watcher): number {
    const page = this.source.eventsSince(watcher.nextRevision, watcher.selector);
    if (page.kind === 'error') {
      this.endOnError(watcher, page);
      return 0;
    }
    watcher.nextRevision = page.nextRevision;
    const before = watcher.queuedBytes;
    if (page.events.length > 0) this.sendEvents(watcher, page.events, page.nextRevision);
    const offered = watcher.queuedBytes - before;
    if (watcher.queuedBytes > this.limits.watcherBufferBytesMax) this.cancelSlow(watcher);
    return offered;
  }

  /** Proof of life on quiet streams (etcd's progress notify): live watchers hear the revision. */
  progressAll(): void {
    const revision = this.source.revision;
    for (const watcher of this.watchers) {
      if (watcher.live && watcher.queuedBytes === 0) {
        this.send(watcher, [line({ kind: 'progress', revision })]);
      }
    }
  }

  /** Ends every stream (the server is stopping). */
  closeAll(): void {
    for (const watcher of [...this.watchers]) this.finish(watcher, undefined);
  }

  /** Pulls history pages while the watcher's queue is under half its bound. */
  private catchUp(watcher: Watcher): void {
    const budget = this.limits.watcherBufferBytesMax / 2;
    while (!watcher.done && watcher.queuedBytes < budget) {
      if (watcher.nextRevision > this.source.revision) {
        watcher.live = true;
        return;
      }
      const page = this.source.eventsSince(watcher.nextRevision, watcher.selector,
        EVENTS_PER_PULL);
      if (page.kind === 'error') return this.endOnError(watcher, page);
      const { events, nextRevision } = this.fitPage(page.events, page.nextRevision,
        budget - watcher.queuedBytes);
      watcher.nextRevision = nextRevision;
      if (events.length > 0) this.sendEvents(watcher, events, nextRevision);
    }
    watcher.live = false;
  }

  /**
   * The longest prefix of `events` whose encodings fit `bytes`, cut between revisions (at
   * least one revision, however large), with the revision to continue from.
   */
  private fitPage(events: readonly KvEvent[], nextRevision: number, bytes: number):
    { events: readonly KvEvent[]; nextRevision: number } {
    let total = 0;
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as KvEvent;
      const previous = events[i - 1];
      if (previous !== undefined && previous.kv.modRevision !== event.kv.modRevision
        && total > bytes) {
        return { events: events.slice(0, i), nextRevision: event.kv.modRevision };
      }
      total += this.encode(event).length;
    }
    return { events, nextRevision };
  }

  private sendEvents(watcher: Watcher, events: readonly KvEvent[], nextRevision: number): void {
    const chunks: Uint8Array[] = [EVENTS_HEAD];
    events.forEach((event, i) => {
      if (i > 0) chunks.push(COMMA);
      chunks.push(this.encode(event));
    });
    chunks.push(utf8.encode(`],"nextRevision":${nextRevision}}\n`));
    this.send(watcher, chunks);
  }

  /** The event's JSON, encoded once while the cache holds it. */
  private encode(event: KvEvent): Uint8Array {
    const cached = this.encoded.get(event);
    if (cached !== undefined) return cached;
    const bytes = utf8.encode(JSON.stringify(event));
    this.encodeCountValue += 1;
    this.encoded.set(event, bytes);
    this.encodedBytes += bytes.length;
    for (const [old, oldBytes] of this.encoded) {
      if (this.encodedBytes <= ENCODED_EVENTS_BYTES_MAX || old === event) break;
      this.encoded.delete(old);
      this.encodedBytes -= oldBytes.length;
    }
    return bytes;
  }

  private send(watcher: Watcher, chunks: readonly Uint8Array[]): void {
    let bytes = 0;
    for (const chunk of chunks) {
      bytes += chunk.length;
      const held = this.holders.get(chunk) ?? 0;
      if (held === 0) this.queuedBytesValue += chunk.length;
      this.holders.set(chunk, held + 1);
    }
    const queued: Queued = { chunks, bytes, released: false };
    watcher.queue.push(queued);
    watcher.queuedBytes += bytes;
    watcher.sink.write(chunks, () => this.flushed(watcher, queued));
  }

  /** The sink took `queued` (writes are taken in order): release it and what came before. */
  private flushed(watcher: Watcher, queued: Queued): void {
    if (queued.released) return;
    while (watcher.queue.length > 0) {
      const first = watcher.queue.shift() as Queued;
      this.release(watcher, first);
      if (first === queued) break;
    }
    if (watcher.queue.length === 0) this.draining.delete(watcher);
    if (!watcher.done && !watcher.live) this.catchUp(watcher);
  }

  private release(watcher: Watcher, queued: Queued): void {
    if (queued.released) return;
    queued.released = true;
    watcher.queuedBytes -= queued.bytes;
    for (const chunk of queued.chunks) {
      const held = this.holders.get(chunk) ?? 0;
      assert(held > 0, () => 'watch hub: a released chunk was not held');
      if (held > 1) this.holders.set(chunk, held - 1);
      else {
        this.holders.delete(chunk);
        this.queuedBytesValue -= chunk.length;
      }
    }
  }

  private endOnError(watcher: Watcher, page: KvErrorResult): void {
    // The caller validated the request, so the only error left is a compacted history.
    const compactRevision = page.error.code === 'compacted' ? page.error.compactRevision : 0;
    this.finish(watcher, line({ kind: 'compacted', compactRevision }));
  }

  private cancelSlow(watcher: Watcher): void {
    this.canceledSlowValue += 1;
    this.finish(watcher, line({ kind: 'canceled', reason: 'slow',
      nextRevision: watcher.nextRevision }));
  }

  /** Ends the stream after what is queued; the queue drains (or the sink closes) later. */
  private finish(watcher: Watcher, last: Uint8Array | undefined): void {
    if (watcher.done) return;
    watcher.done = true;
    this.watchers.delete(watcher);
    if (watcher.queue.length > 0) this.draining.add(watcher);
    watcher.sink.end(last);
  }

  /** The client went away: whatever is queued for it is gone with its connection. */
  private close(watcher: Watcher): void {
    watcher.done = true;
    this.watchers.delete(watcher);
    this.draining.delete(watcher);
    for (const queued of watcher.queue) this.release(watcher, queued);
    watcher.queue.length = 0;
  }

  /**
   * Past the total bound: cancel the watchers with the most queued until what the others hold
   * is under it (a canceled watcher's queue goes when its connection takes it or is closed; the
   * server closes canceled streams that do not drain within a few seconds).
   */
  private enforceTotal(): void {
    let total = this.queuedBytesValue;
    for (const watcher of this.draining) total -= watcher.queuedBytes;
    if (total <= this.limits.watchBufferBytesMax) return;
    const byQueued = [...this.watchers].sort((a, b) => b.queuedBytes - a.queuedBytes);
    for (const watcher of byQueued) {
      if (total <= this.limits.watchBufferBytesMax || watcher.queuedBytes === 0) return;
      total -= watcher.queuedBytes;
      this.cancelSlow(watcher);
    }
  }
}

/** A control message as one JSON line. */
function line(message: Exclude<WatchMessage, { kind: 'events' }>): Uint8Array {
  return utf8.encode(`${JSON.stringify(message)}\n`);
}
