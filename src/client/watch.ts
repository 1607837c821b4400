/**
 * Watches: an async iterator of key-value events that survives member failures.
 *
 * A member streams frames (the transport port's WatchFrame): `progress` (its revision when the
 * stream opened, then now and then as proof of life), `events` (a batch, never splitting a
 * revision, with the `nextRevision` to resume from) and `compacted` (the history no longer
 * holds the revision asked for). The client remembers the next revision it needs; when a
 * stream breaks, ends, or stays silent past `watchIdleMsMax` (on the client's timer), it
 * reopens one on any endpoint with `fromRevision` = that revision. The transport drops a
 * partial frame of a broken stream, and an event below the next revision is dropped here, so
 * no event is ever skipped or delivered twice. `compacted` ends the iteration with
 * CONCLAVE_KV_COMPACTED. `canceled` (the member cut a watcher that fell behind: reason `slow`)
 * ends the stream after every event below its `nextRevision`; the watch reopens from there,
 * as after a break.
 */
import { assertNever } from '../core/assert.js';
import type { KvEvent } from '../core/kv/types.js';
import { randomInt } from '../core/random.js';
import type {
  StreamEnd, WatchFrame, WatchOpening, WatchStream,
} from '../ports/client-transport.js';
import type { TimerHandle } from '../ports/timer.js';
import { CoordError } from '../errors.js';
import { judge } from './caller.js';
import { pause, TimedSignal, type ClientContext } from './context.js';

/** One key, or every key starting with a prefix (the empty prefix: every key). */
export type WatchSelector = { readonly key: string } | { readonly prefix: string };

export interface WatchOptions {
  /**
   * First revision to deliver (events of earlier revisions are not). Default: the revision
   * after the store's current one when the first stream opens, i.e. changes from now on.
   */
  readonly fromRevision?: number;
  /** Ends the watch when aborted (as `close()`). */
  readonly signal?: AbortSignal | undefined;
}

/** CONCLAVE_KV_COMPACTED from a watch, with the revision the history was compacted through. */
export class WatchCompactedError extends CoordError {
  override name = 'WatchCompactedError';
  constructor(readonly compactRevision: number, readonly nextRevision: number) {
    super('CONCLAVE_KV_COMPACTED', `watch cannot resume at revision ${nextRevision}: the ` +
      `history was compacted through ${compactRevision}; read the keys again with kv.range ` +
      'and watch from the revision after the one it returns');
  }
}


export class Watch implements AsyncIterable<KvEvent> {
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private next: number;
  private iterated = false;

  constructor(private readonly selector: WatchSelector, options: WatchOptions,
    private readonly c: ClientContext,
    /** Called once when the watch ends, however it ends. */
    private readonly onEnd?: (watch: Watch) => void) {
    const from = options.fromRevision ?? 0;
    if (!Number.isSafeInteger(from) || from < 0) {
      throw new CoordError('CONCLAVE_REQUEST_INVALID',
        `fromRevision must be an integer >= 0, got ${String(options.fromRevision)}`);
    }
    this.next = from;
    const signals = [this.stop.signal, c.closing];
    if (options.signal !== undefined) signals.push(options.signal);
    this.signal = AbortSignal.any(signals);
  }

  /**
   * The revision the watch needs next: every matching event below it has been delivered (or
   * was before `fromRevision`); a new watch from here would continue this one exactly.
   * Undefined until the first stream told the start revision.
   */
  get nextRevision(): number | undefined {
    return this.next > 0 ? this.next : undefined;
  }

  /** Ends the iteration (a pending `next()` resolves done). */
  close(): void {
    this.stop.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<KvEvent> {
    if (this.iterated) {
      throw new CoordError('CONCLAVE_USAGE', 'a watch can be iterated only once');
    }
    this.iterated = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<KvEvent, void, undefined> {
    let failures = 0;
    let lastConnectedMs = this.c.clock.monotonicMs();
    try {
      while (!this.signal.aborted) {
        const opened = await this.open(this.c.router.next(false));
        if ('error' in opened) {
          if (this.signal.aborted) return;
          if (!opened.retry) throw opened.error;
          failures += 1;
          this.giveUpIfLate(lastConnectedMs, opened.error);
          await pause(this.c.timer, this.backoffMs(failures), this.signal);
          continue;
        }
        try {
          for (;;) {
            const frame = await this.nextFrame(opened.stream);
            if (frame.kind === 'end') {
              if (frame.error !== undefined) throw frame.error;
              break;
            }
            failures = 0;
            yield* this.deliver(frame);
          }
        } finally {
          opened.stream.close();
        }
        // The stream ended or broke: reopen at once on the next endpoint, then back off. The
        // deadline counts from here: it bounds the time without any member, not quiet time.
        lastConnectedMs = this.c.clock.monotonicMs();
        failures += 1;
        if (failures > 1) await pause(this.c.timer, this.backoffMs(failures), this.signal);
      }
    } finally {
      this.stop.abort();
      this.onEnd?.(this);
    }
  }

  private *deliver(message: WatchFrame): Generator<KvEvent, void, undefined> {
    switch (message.kind) {
      case 'progress':
        // The server starts a watch without fromRevision right after this revision.
        if (this.next === 0) this.next = message.revision + 1;
        return;
      case 'compacted':
        throw new WatchCompactedError(message.compactRevision, this.next);
      case 'canceled':
        // Every event below nextRevision came before it; the stream ends and reopens there.
        this.next = Math.max(this.next, message.nextRevision);
        return;
      case 'events': {
        // Below `next`: delivered before a reconnect. The batch is in memory, so no stream is
        // reopened before it is all delivered, and `next` can say what the consumer has seen.
        const fresh = message.events.filter((event) => event.kv.modRevision >= this.next);
        for (const [i, event] of fresh.entries()) {
          this.next = fresh[i + 1]?.kv.modRevision ?? Math.max(this.next, message.nextRevision);
          yield event;
        }
        this.next = Math.max(this.next, message.nextRevision);
        return;
      }
      case 'other':
        return;
      default:
        assertNever(message, 'watch message');
    }
  }

  private giveUpIfLate(lastConnectedMs: number, error: CoordError): void {
    const silentMs = this.c.clock.monotonicMs() - lastConnectedMs;
    if (silentMs < this.c.config.retryDeadlineMs) return;
    throw new CoordError(error.code, `watch could not reconnect for ${Math.round(silentMs)} ms: ` +
      error.message, { cause: error });
  }

  private backoffMs(failures: number): number {
    const { config } = this.c;
    const ceilingMs = Math.min(config.backoffMsMax,
      config.backoffMsMin * 2 ** Math.min(failures, 30));
    return randomInt(this.c.random, 0, Math.floor(ceilingMs) + 1);
  }

  /** Opens a stream at `endpoint` within `requestTimeoutMs`. */
  private async open(endpoint: string):
    Promise<{ stream: WatchStream } | { error: CoordError; retry: boolean }> {
    const { config, timer, transport } = this.c;
    const timed = new TimedSignal(timer, config.requestTimeoutMs, [this.signal]);
    let opening: WatchOpening;
    try {
      opening = await transport.openWatch(endpoint, {
        key: 'key' in this.selector ? this.selector.key : this.selector.prefix,
        prefix: 'prefix' in this.selector, fromRevision: this.next,
      }, { signal: timed.signal });
    } finally {
      timed.done();
    }
    if (opening.kind === 'open') {
      if (!this.signal.aborted) return { stream: opening.stream };
      opening.stream.close();
      return { error: new CoordError('CONCLAVE_UNAVAILABLE', 'the watch was closed'),
        retry: false };
    }
    const { error, retry } = judge(opening, timed.timedOut, config.requestTimeoutMs);
    return { error, retry };
  }

  /** The next frame of `stream`, or its end: it broke, idled out, or the watch closed. */
  private async nextFrame(stream: WatchStream): Promise<WatchFrame | StreamEnd> {
    if (this.signal.aborted) return { kind: 'end' };
    const idleMs = this.c.config.watchIdleMsMax;
    let idle: TimerHandle | undefined;
    const drop = (): void => stream.close(); // a pending next() then resolves `end`
    if (idleMs > 0) idle = this.c.timer.setTimer(idleMs, drop);
    this.signal.addEventListener('abort', drop, { once: true });
    try {
      return await stream.next();
    } finally {
      idle?.cancel();
      this.signal.removeEventListener('abort', drop);
    }
  }
}
