/**
 * Watches: an async iterator of key-value events that survives member failures.
 *
 * The server streams newline-delimited JSON: `progress` (its revision when the stream opened),
 * `events` (a batch, never splitting a revision, with the `nextRevision` to resume from) and
 * `compacted` (the history no longer holds the revision asked for). The client remembers the
 * next revision it needs; when a stream breaks, ends, or stays silent past `watchIdleMsMax`, it
 * reopens one on any endpoint with `fromRevision` = that revision. A partial line of a broken
 * stream is discarded, and an event below the next revision is dropped, so no event is ever
 * skipped or delivered twice. `compacted` ends the iteration with CONCLAVE_KV_COMPACTED.
 * `canceled` (the server cut a watcher that fell behind: reason `slow`) ends the stream after
 * every event below its `nextRevision`; the watch reopens from there, as after a break.
 */
import { assertNever } from '../core/assert.js';
import type { KvEvent } from '../core/kv/types.js';
import { randomInt, type Random } from '../core/random.js';
import type { Clock } from '../ports/clock.js';
import { CoordError } from '../errors.js';
import { pause } from './caller.js';
import type { ClientConfig } from './config.js';
import { classifyResponse } from './http-attempt.js';
import type { EndpointRouter } from './router.js';

/** One key, or every key starting with a prefix (the empty prefix: every key). */
export type WatchSelector = { readonly key: string } | { readonly prefix: string };

export interface WatchOptions {
  /**
   * First revision to deliver (events of earlier revisions are not). Default: the revision
   * after the store's current one when the first stream opens, i.e. changes from now on.
   */
  readonly fromRevision?: number;
  /** Ends the watch when aborted (as `close()`). */
  readonly signal?: AbortSignal;
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

type WatchMessage =
  | { readonly kind: 'events'; readonly events: readonly KvEvent[];
    readonly nextRevision: number }
  | { readonly kind: 'compacted'; readonly compactRevision: number }
  | { readonly kind: 'progress'; readonly revision: number }
  | { readonly kind: 'canceled'; readonly nextRevision: number }
  | { readonly kind: 'other' };

export interface WatchComponents {
  readonly clock: Clock;
  readonly random: Random;
  readonly router: EndpointRouter;
  /** The client's close signal. */
  readonly signal: AbortSignal;
  /** Called once when the watch ends, however it ends. */
  readonly onEnd?: (watch: Watch) => void;
}

export class Watch implements AsyncIterable<KvEvent> {
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private next: number;
  private iterated = false;

  constructor(private readonly selector: WatchSelector, options: WatchOptions,
    private readonly config: ClientConfig, private readonly c: WatchComponents) {
    const from = options.fromRevision ?? 0;
    if (!Number.isSafeInteger(from) || from < 0) {
      throw new CoordError('CONCLAVE_REQUEST_INVALID',
        `fromRevision must be an integer >= 0, got ${String(options.fromRevision)}`);
    }
    this.next = from;
    const signals = [this.stop.signal, c.signal];
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
        const url = this.c.router.next(false);
        const opened = await this.open(url);
        if ('error' in opened) {
          if (this.signal.aborted) return;
          if (!opened.retry) throw opened.error;
          failures += 1;
          this.giveUpIfLate(lastConnectedMs, opened.error);
          await pause(this.backoffMs(failures), this.signal);
          continue;
        }
        for await (const message of this.messages(opened.body, opened.abort)) {
          failures = 0;
          yield* this.deliver(message);
        }
        // The stream ended or broke: reopen at once on the next endpoint, then back off. The
        // deadline counts from here: it bounds the time without any member, not quiet time.
        lastConnectedMs = this.c.clock.monotonicMs();
        failures += 1;
        if (failures > 1) await pause(this.backoffMs(failures), this.signal);
      }
    } finally {
      this.stop.abort();
      this.c.onEnd?.(this);
    }
  }

  private *deliver(message: WatchMessage): Generator<KvEvent, void, undefined> {
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
    if (silentMs < this.config.retryDeadlineMs) return;
    throw new CoordError(error.code, `watch could not reconnect for ${Math.round(silentMs)} ms: ` +
      error.message, { cause: error });
  }

  private backoffMs(failures: number): number {
    const ceilingMs = Math.min(this.config.backoffMsMax,
      this.config.backoffMsMin * 2 ** Math.min(failures, 30));
    return randomInt(this.c.random, 0, Math.floor(ceilingMs) + 1);
  }

  /** Opens a stream at `url`; the caller reads `body` and aborts `abort` to drop it. */
  private async open(url: string): Promise<
    { body: ReadableStream<Uint8Array>; abort: AbortController } |
    { error: CoordError; retry: boolean }> {
    const abort = new AbortController();
    const signal = AbortSignal.any([abort.signal, this.signal]);
    const timer = setTimeout(() => abort.abort(), this.config.requestTimeoutMs);
    const query = new URLSearchParams({ key: 'key' in this.selector ? this.selector.key
      : this.selector.prefix, fromRevision: String(this.next) });
    if ('prefix' in this.selector) query.set('prefix', 'true');
    try {
      const response = await fetch(`${url}/v1/watch?${query.toString()}`, { signal });
      if (response.status === 200 && response.body !== null) {
        return { body: response.body, abort };
      }
      const result = classifyResponse(response.status, await response.text(), url);
      if (result.kind === 'error') return { error: result.error, retry: result.retry };
      return { error: new CoordError('CONCLAVE_PROTOCOL', `${url}: watch answered ` +
        `${response.status} without a stream`), retry: true };
    } catch (error) {
      const detail = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
      return { error: new CoordError('CONCLAVE_UNAVAILABLE', `cannot reach ${url}: ${detail}`,
        { cause: error }), retry: true };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Parsed messages of one stream, until it ends, breaks or stays silent too long. */
  private async *messages(body: ReadableStream<Uint8Array>, abort: AbortController):
    AsyncGenerator<WatchMessage, void, undefined> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for (;;) {
        const chunk = await this.readChunk(reader, abort);
        if (chunk === undefined) return;
        buffered += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line !== '') yield parseMessage(line);
        }
      }
    } finally {
      abort.abort();
      reader.releaseLock();
    }
  }

  /** The next chunk, or undefined when the stream ended, broke or idled out. */
  private async readChunk(reader: ReadableStreamDefaultReader<Uint8Array>,
    abort: AbortController): Promise<Uint8Array | undefined> {
    const idleMs = this.config.watchIdleMsMax;
    const timer = idleMs > 0 ? setTimeout(() => abort.abort(), idleMs) : undefined;
    try {
      const { done, value } = await reader.read();
      return done ? undefined : value;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** One stream line as a message; a malformed line is a protocol error (not a torn tail). */
function parseMessage(line: string): WatchMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new CoordError('CONCLAVE_PROTOCOL', `watch stream sent a line that is not JSON: ` +
      line.slice(0, 200));
  }
  const m = parsed as Record<string, unknown>;
  const bad = (): never => {
    throw new CoordError('CONCLAVE_PROTOCOL', `watch stream sent a malformed message: ` +
      line.slice(0, 200));
  };
  switch (m['kind']) {
    case 'progress':
      return isRevision(m['revision']) ? { kind: 'progress', revision: m['revision'] } : bad();
    case 'compacted':
      return isRevision(m['compactRevision'])
        ? { kind: 'compacted', compactRevision: m['compactRevision'] } : bad();
    case 'canceled':
      return isRevision(m['nextRevision'])
        ? { kind: 'canceled', nextRevision: m['nextRevision'] } : bad();
    case 'events': {
      const events = m['events'];
      if (!Array.isArray(events) || !isRevision(m['nextRevision'])
        || !events.every(isEvent)) return bad();
      return { kind: 'events', events, nextRevision: m['nextRevision'] };
    }
    default:
      return { kind: 'other' }; // a newer server's message: ignore it
  }
}

function isRevision(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isEvent(value: unknown): value is KvEvent {
  const event = value as { type?: unknown; kv?: { key?: unknown; modRevision?: unknown } };
  return (event?.type === 'put' || event?.type === 'delete') && typeof event.kv === 'object'
    && typeof event.kv?.key === 'string' && isRevision(event.kv?.modRevision);
}
