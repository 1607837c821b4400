/**
 * Watchers and the watch-completeness check. Each watcher client watches the KV prefix with
 * the shipped client's Watch from revision 1, and now and then closes it and resumes from its
 * `nextRevision` (as a user resuming after a restart would); a watch that ends with an error
 * (a stream given up on) is resumed the same way. Checked on every event as it arrives: its
 * revision is not below the one before, and no (key, revision) comes twice. Checked at the
 * end, once the watcher caught up with the converged store: what it saw is exactly the
 * store's own event history for the prefix (KvStore.eventsSince from revision 1), in order:
 * every revision of its keys, exactly once, across every reconnect and resume.
 */
import { randomFloat } from '../../../core/random.js';
import type { KvEvent } from '../../../core/kv/index.js';
import { WatchCompactedError } from '../../../client/watch.js';
import type { ConsistentCore } from '../../../runtime/core/index.js';
import type { Prng } from '../../prng.js';
import type { Violation } from '../../scenario.js';
import type { SimClient } from '../lease/lease-world.js';

export interface WatchCounts {
  events: number;
  /** Watches closed and resumed from their nextRevision on purpose. */
  resumes: number;
  /** Watches that ended with an error and were resumed. */
  reconnects: number;
  /** Watchers compared with the store at the end. */
  compared: number;
  /** Watchers that could not be compared: the history was compacted under them. */
  compacted: number;
}

/** Mean time a watch runs before its watcher resumes it. Unit: ms (client clock). */
const RESUME_MS_MEAN = 1_500;
/** Events read from the store per page at the end (KvStore's own limit allows this). */
const PAGE = 1_000;

interface Watcher {
  readonly client: SimClient;
  readonly seen: string[];
  readonly keys: Set<string>;
  lastRevision: number;
  next: number;
  compacted: boolean;
}

export class WatchChecker {
  readonly counts: WatchCounts = { events: 0, resumes: 0, reconnects: 0, compared: 0,
    compacted: 0 };
  readonly violations: Violation[] = [];
  private readonly watchers: Watcher[];
  private stopped = false;

  constructor(
    private readonly prng: Prng,
    clients: readonly SimClient[],
    private readonly prefix: string,
    private readonly nowMs: () => number,
  ) {
    this.watchers = clients.map((client) => ({ client, seen: [], keys: new Set(),
      lastRevision: 0, next: 1, compacted: false }));
  }

  start(): void {
    for (const watcher of this.watchers) void this.watch(watcher);
  }

  stop(): void {
    this.stopped = true;
  }

  /** The revision of the store's last event under the prefix (0: none, or compacted). */
  lastRevision(core: ConsistentCore): number {
    const events = storeEvents(core, this.prefix);
    return events === undefined || events.length === 0 ? 0
      : Number(events[events.length - 1]!.split('@')[1]);
  }

  /** Every watcher has seen an event at `revision` or later (or stopped for compaction). */
  caughtUp(revision: number): boolean {
    return this.watchers.every((w) => w.compacted || w.lastRevision >= revision);
  }

  /** The end: each watcher's events against the store's history (see the file comment). */
  compare(core: ConsistentCore): void {
    const expected = storeEvents(core, this.prefix);
    for (const watcher of this.watchers) {
      if (watcher.compacted || expected === undefined) {
        this.counts.compacted++;
        continue;
      }
      this.counts.compared++;
      const diff = firstDifference(watcher.seen, expected);
      if (diff === undefined) continue;
      this.violations.push({ checker: 'watch-complete', atMs: this.nowMs(),
        message: `${watcher.client.id} saw ${watcher.seen.length} events, the store holds `
          + `${expected.length}; first difference at #${diff}: saw `
          + `${watcher.seen[diff] ?? 'nothing'}, the store has ${expected[diff] ?? 'nothing'}` });
    }
  }

  private async watch(watcher: Watcher): Promise<void> {
    while (!this.stopped && !watcher.compacted) {
      const watch = watcher.client.client.watch({ prefix: this.prefix },
        { fromRevision: watcher.next });
      const resumeMs = -Math.log(1 - randomFloat(this.prng)) * RESUME_MS_MEAN;
      const timer = watcher.client.host.processClock.setTimer(resumeMs, () => {
        this.counts.resumes++;
        watch.close();
      });
      try {
        for await (const event of watch) {
          this.observe(watcher, event);
          if (this.stopped) break;
        }
      } catch (error) {
        if (error instanceof WatchCompactedError) watcher.compacted = true;
        else this.counts.reconnects++;
      } finally {
        timer.cancel();
      }
      watcher.next = Math.max(watcher.next, watch.nextRevision ?? 0);
    }
  }

  private observe(watcher: Watcher, event: KvEvent): void {
    this.counts.events++;
    const revision = event.kv.modRevision;
    const id = describeEvent(event);
    if (revision < watcher.lastRevision || watcher.keys.has(id)) {
      this.violations.push({ checker: 'watch-order', atMs: this.nowMs(),
        message: `${watcher.client.id} got ${id} after revision ${watcher.lastRevision}`
          + (watcher.keys.has(id) ? ' (a second time)' : ' (out of order)') });
    }
    watcher.keys.add(id);
    watcher.seen.push(id);
    watcher.lastRevision = revision;
    watcher.next = Math.max(watcher.next, revision + 1);
  }
}

function describeEvent(event: KvEvent): string {
  return `${event.type} ${event.kv.key}@${event.kv.modRevision}`;
}

/** The store's events for the prefix from revision 1; undefined when compacted. */
function storeEvents(core: ConsistentCore, prefix: string): string[] | undefined {
  const events: string[] = [];
  let from = 1;
  for (;;) {
    const page = core.store.eventsSince(from, { key: prefix, prefix: true }, PAGE);
    if (page.kind === 'error') return undefined;
    events.push(...page.events.map(describeEvent));
    if (!page.more) return events;
    from = page.nextRevision;
  }
}

function firstDifference(a: readonly string[], b: readonly string[]): number | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return undefined;
}
