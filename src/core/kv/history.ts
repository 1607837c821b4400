/**
 * The store's bounded event log: every change in revision order, serving watchers
 * (`eventsSince`) and reads at older revisions (by undoing newer events on top of the current
 * state). Compaction drops whole revisions from the front.
 *
 * Invariants: events are in nondecreasing revision order; every event's revision is greater
 * than `compactRevision`; every revision in (compactRevision, newest] that changed something has
 * all its events here, so the state at any revision >= compactRevision can be rebuilt.
 */
import { assert } from '../assert.js';
import { KV_EVENT_OVERHEAD_BYTES } from './config.js';
import type { KvEvent, KvKeySelector } from './types.js';

/** Estimated memory of an event (see `KvStoreConfig.historyBytesMax`). */
export function eventSizeBytes(event: KvEvent): number {
  const units = event.kv.key.length + event.kv.value.length + (event.prevKv?.value.length ?? 0);
  return 2 * units + KV_EVENT_OVERHEAD_BYTES;
}

/** Whether `key` is covered by `selector`. */
export function selects(selector: KvKeySelector, key: string): boolean {
  return selector.prefix === true ? key.startsWith(selector.key) : key === selector.key;
}

export const revisionOf = (event: KvEvent): number => event.kv.modRevision;

export class EventHistory {
  /** Events; those before `start` are dropped (kept until a cheap moment to slice). */
  private events: KvEvent[] = [];
  private start = 0;
  private bytes = 0;
  private compactRevisionValue: number;

  constructor(compactRevision = 0, events: readonly KvEvent[] = []) {
    this.compactRevisionValue = compactRevision;
    for (const event of events) this.append([event]);
  }

  /** The highest revision whose events are gone: reads below it and watches at or below fail. */
  get compactRevision(): number {
    return this.compactRevisionValue;
  }

  get size(): number {
    return this.events.length - this.start;
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  /** Appends one revision's events (all with the same revision, above every held one). */
  append(events: readonly KvEvent[]): void {
    const last = this.events[this.events.length - 1];
    for (const event of events) {
      const revision = revisionOf(event);
      assert(revision > this.compactRevisionValue && (last === undefined
        || revision >= revisionOf(last)), () => `history: event at revision ${revision} after `
        + `${last === undefined ? 'none' : revisionOf(last)}, `
        + `compacted ${this.compactRevisionValue}`);
      this.events.push(event);
      this.bytes += eventSizeBytes(event);
    }
  }

  /** Drops every event of revision <= `revision`; the compact revision becomes `revision`. */
  compact(revision: number): void {
    assert(revision >= this.compactRevisionValue,
      () => `history: compact to ${revision} below ${this.compactRevisionValue}`);
    const end = this.firstIndexAbove(revision);
    for (let i = this.start; i < end; i++) this.bytes -= eventSizeBytes(this.events[i] as KvEvent);
    this.start = end;
    this.compactRevisionValue = revision;
    // Slice once the dead prefix is at least half the array: amortized O(1) per event.
    if (this.start > 0 && this.start * 2 >= this.events.length) {
      this.events = this.events.slice(this.start);
      this.start = 0;
    }
  }

  /**
   * Drops the oldest revisions while the history exceeds either bound, never the newest
   * revision (its events are what watchers need next, however many there are).
   */
  enforceBounds(eventsMax: number, bytesMax: number): void {
    while (this.size > eventsMax || this.bytes > bytesMax) {
      const oldest = this.events[this.start];
      const newest = this.events[this.events.length - 1];
      if (oldest === undefined || newest === undefined) return;
      if (revisionOf(oldest) === revisionOf(newest)) return;
      this.compact(revisionOf(oldest));
    }
  }

  /** Index (into `events`) of the first held event with revision > `revision`. */
  private firstIndexAbove(revision: number): number {
    let low = this.start;
    let high = this.events.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (revisionOf(this.events[mid] as KvEvent) <= revision) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /**
   * Events selected by `selector` with revision >= `fromRevision` (the caller checked it is
   * above the compact revision), at most `limit` (0: no limit) but never splitting a revision.
   * `nextRevision` is where the next call should start; `more` tells that `limit` cut it short.
   */
  since(
    fromRevision: number,
    selector: KvKeySelector,
    limit: number,
    currentRevision: number,
  ): { events: KvEvent[]; nextRevision: number; more: boolean } {
    assert(fromRevision > this.compactRevisionValue,
      () => `history: read from ${fromRevision} at or below ${this.compactRevisionValue}`);
    const out: KvEvent[] = [];
    for (let i = this.firstIndexAbove(fromRevision - 1); i < this.events.length; i++) {
      const event = this.events[i] as KvEvent;
      if (!selects(selector, event.kv.key)) continue;
      const last = out[out.length - 1];
      if (limit > 0 && out.length >= limit && last !== undefined
        && revisionOf(event) !== revisionOf(last)) {
        return { events: out, nextRevision: revisionOf(last) + 1, more: true };
      }
      out.push(event);
    }
    return { events: out, nextRevision: Math.max(currentRevision + 1, fromRevision), more: false };
  }

  /**
   * For reads at `revision`: the state at `revision` of every selected key that changed after
   * it (undefined: absent then). Keys not in the map are as they are now.
   */
  undoAfter(revision: number, selector: KvKeySelector): Map<string, KvEvent['prevKv']> {
    assert(revision >= this.compactRevisionValue,
      () => `history: undo to ${revision} below ${this.compactRevisionValue}`);
    const overlay = new Map<string, KvEvent['prevKv']>();
    const first = this.firstIndexAbove(revision);
    // Newest to oldest: the earliest change after `revision` wins, its prevKv is the old state.
    for (let i = this.events.length - 1; i >= first; i--) {
      const event = this.events[i] as KvEvent;
      if (selects(selector, event.kv.key)) overlay.set(event.kv.key, event.prevKv);
    }
    return overlay;
  }

  /** The held events, oldest first (for snapshots). */
  toArray(): KvEvent[] {
    return this.events.slice(this.start);
  }
}
