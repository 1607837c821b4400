/**
 * Streams watch events to subscribers: each watcher remembers the next revision it needs and
 * pulls from the store's event history whenever the store moves on, so events go out in
 * revision order and none is skipped, even for a watcher that fell behind (it catches up from
 * the history; if the history no longer holds its revision it is told `compacted` and closed).
 */
import type { KvEvent, KvKeySelector } from '../core/kv/index.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';

/** Where a watcher's events go; `write` returns false when the consumer is slow (backpressure). */
export interface WatchSink {
  write(message: WatchMessage): boolean;
  onDrain(resume: () => void): void;
  close(): void;
}

export type WatchMessage =
  | { readonly kind: 'events'; readonly events: readonly KvEvent[]; readonly nextRevision: number }
  | { readonly kind: 'compacted'; readonly compactRevision: number }
  | { readonly kind: 'progress'; readonly revision: number };

interface Watcher {
  readonly selector: KvKeySelector;
  nextRevision: number;
  readonly sink: WatchSink;
  paused: boolean;
}

/** Events per pull; a slow watcher catches up in slices so one watcher cannot hog the loop. */
const EVENTS_PER_PULL = 1000;

export class WatchHub {
  private readonly watchers = new Set<Watcher>();

  constructor(private readonly core: ConsistentCore) {}

  get size(): number {
    return this.watchers.size;
  }

  /** Starts a watch from `fromRevision` (0: from the next change on). Returns a cancel function. */
  watch(selector: KvKeySelector, fromRevision: number, sink: WatchSink): () => void {
    const start = fromRevision > 0 ? fromRevision : this.core.store.revision + 1;
    const watcher: Watcher = { selector, nextRevision: start, sink, paused: false };
    this.watchers.add(watcher);
    sink.write({ kind: 'progress', revision: this.core.store.revision });
    this.pull(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** The store applied something: every watcher pulls what it has not seen. */
  notify(): void {
    for (const watcher of this.watchers) this.pull(watcher);
  }

  /** Tells every watcher the store's revision: proof of life on quiet streams (etcd's progress notify). */
  progressAll(): void {
    for (const watcher of this.watchers) {
      if (!watcher.paused) watcher.sink.write({ kind: 'progress', revision: this.core.store.revision });
    }
  }

  closeAll(): void {
    for (const watcher of this.watchers) watcher.sink.close();
    this.watchers.clear();
  }

  private pull(watcher: Watcher): void {
    while (!watcher.paused && this.watchers.has(watcher)) {
      if (watcher.nextRevision > this.core.store.revision) return;
      const page = this.core.eventsSince(watcher.nextRevision, watcher.selector, EVENTS_PER_PULL);
      if (page.kind === 'error') {
        const compactRevision = page.error.code === 'compacted' ? page.error.compactRevision : 0;
        watcher.sink.write({ kind: 'compacted', compactRevision });
        watcher.sink.close();
        this.watchers.delete(watcher);
        return;
      }
      watcher.nextRevision = page.nextRevision;
      if (page.events.length === 0) return;
      const flowing = watcher.sink.write({ kind: 'events', events: page.events, nextRevision: page.nextRevision });
      if (!flowing) {
        watcher.paused = true;
        watcher.sink.onDrain(() => {
          watcher.paused = false;
          this.pull(watcher);
        });
      }
      if (!page.more) return;
    }
  }
}
