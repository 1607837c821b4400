/**
 * etcd's two bidirectional streams behind the transport port's WatchStream and LeaseStream:
 * a Watch stream carrying one watcher (created with progress notifications and previous
 * key-values), and a LeaseKeepAlive stream shared by every lease of the client. The frames are
 * checked and translated here (etcd-wire.ts); a stream that breaks ends, and the client resumes
 * (a watch from its next revision) or retries (a keep-alive) as it does over HTTP.
 */
import type {
  KeepAliveAnswer, LeaseStream, StreamEnd, WatchFrame, WatchStream,
} from '../../ports/client-transport.js';
import { CoordError } from '../../errors.js';
import type { EtcdCallError, EtcdMessage, EtcdStream } from './etcd-connection.js';
import { leaseGoneError } from './etcd-outcomes.js';
import { eventOf, int, msOfSeconds, revisionOf } from './etcd-wire.js';

export type WatchOpened =
  | { readonly kind: 'created' }
  | { readonly kind: 'failed'; readonly error?: EtcdCallError }
  | { readonly kind: 'auth-refused' };

/** etcd's cancel reasons when a watcher's token is missing, expired or not permitted. */
const AUTH_REFUSED = /permission denied|auth token|invalid auth/i;

/**
 * A watch stream over one etcd watcher. Frames are queued until read, at most `framesMax`: a
 * consumer that falls further behind has its stream ended after the frames queued (every one of
 * them in order), and the client's watch reopens from its next revision, so nothing is skipped
 * and etcd is never read without bound.
 */
export class EtcdWatchStream implements WatchStream {
  private readonly queue: (WatchFrame | StreamEnd)[] = [];
  private waiter: ((frame: WatchFrame | StreamEnd) => void) | undefined;
  private ended = false;
  private settleOpening: ((result: WatchOpened) => void) | undefined;
  /**
   * Resolves at etcd's first answer (`created`), when the stream ended before it (`failed`,
   * the error; undefined when we ended it), or when etcd refused the watcher for its auth
   * token (`auth-refused`: the caller renews the token and opens another).
   */
  readonly opened: Promise<WatchOpened>;

  constructor(private readonly stream: EtcdStream, private readonly framesMax: number,
    /** etcd canceled the watcher for its auth token (expired): renew it before reopening. */
    private readonly onAuthRefused: () => void = () => undefined) {
    this.opened = new Promise((resolve) => (this.settleOpening = resolve));
    stream.onMessage((answer) => this.receive(answer));
    stream.onEnd((error) => {
      this.settleOpening?.({ kind: 'failed', ...(error === undefined ? {} : { error }) });
      this.finish({ kind: 'end' });
    });
  }

  next(): Promise<WatchFrame | StreamEnd> {
    const frame = this.queue.shift();
    if (frame !== undefined) return Promise.resolve(frame);
    if (this.ended) return Promise.resolve({ kind: 'end' });
    return new Promise((resolve) => (this.waiter = resolve));
  }

  close(): void {
    this.finish({ kind: 'end' });
    this.stream.end();
  }

  private receive(answer: EtcdMessage): void {
    if (this.ended) return;
    if (answer['canceled'] === true && AUTH_REFUSED.test(String(answer['cancel_reason']))) {
      this.onAuthRefused();
      this.settleOpening?.({ kind: 'auth-refused' });
      this.finish({ kind: 'end' }); // reopened by the client, with a new token
      this.stream.end();
      return;
    }
    this.settleOpening?.({ kind: 'created' });
    this.settleOpening = undefined;
    let frame: WatchFrame | StreamEnd;
    try {
      // etcd's first answer (`created`) carries its store revision: our first frame.
      frame = answer['created'] === true && answer['canceled'] !== true
        ? { kind: 'progress', revision: revisionOf(answer) } : watchFrameOf(answer);
    } catch (error) {
      frame = { kind: 'end', error: error instanceof CoordError ? error
        : new CoordError('CONCLAVE_PROTOCOL', String(error)) };
    }
    if (frame.kind === 'end' || frame.kind === 'compacted') {
      this.push(frame);
      this.finish({ kind: 'end' });
      this.stream.end();
      return;
    }
    if (this.queue.length >= this.framesMax) {
      this.finish({ kind: 'end' }); // resumed by the client from its next revision
      this.stream.end();
      return;
    }
    this.push(frame);
  }

  private push(frame: WatchFrame | StreamEnd): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter !== undefined) waiter(frame);
    else this.queue.push(frame);
  }

  private finish(end: StreamEnd): void {
    if (this.ended) return;
    this.ended = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(end);
  }
}

/** One WatchResponse after `created`, as a frame. */
export function watchFrameOf(answer: EtcdMessage): WatchFrame | StreamEnd {
  const compactRevision = int(answer['compact_revision'] ?? 0, 'compact_revision');
  if (compactRevision > 0) return { kind: 'compacted', compactRevision };
  if (answer['canceled'] === true) {
    const reason = String(answer['cancel_reason'] ?? '');
    return { kind: 'end', error: new CoordError('CONCLAVE_UNAVAILABLE',
      `etcd canceled the watch: ${reason.slice(0, 500) || 'no reason given'}`) };
  }
  const raw = answer['events'];
  const events = Array.isArray(raw) ? (raw as EtcdMessage[]).map(eventOf) : [];
  const revision = revisionOf(answer);
  if (events.length === 0) return { kind: 'progress', revision };
  // etcd never splits a revision across answers (without `fragment`): resume after the last.
  const last = events[events.length - 1]!.kv.modRevision;
  return { kind: 'events', events, nextRevision: last + 1 };
}

/**
 * Keep-alives over one LeaseKeepAlive stream: etcd answers each with the lease's id, in the
 * order sent, so answers are matched to the oldest keep-alive of that id still waiting. At most
 * `inflightMax` wait; beyond that a keep-alive answers `lost` at once (it promised nothing).
 */
export class EtcdLeaseStream implements LeaseStream {
  private readonly waiting = new Map<number, ((answer: KeepAliveAnswer) => void)[]>();
  private inflight = 0;
  private isOpen = true;

  constructor(private readonly stream: EtcdStream, private readonly endpoint: string,
    private readonly inflightMax: number) {
    stream.onMessage((answer) => this.receive(answer));
    stream.onEnd((error) => this.shut(error?.message ?? 'the keep-alive stream ended'));
  }

  get open(): boolean {
    return this.isOpen;
  }

  keepAlive(leaseId: number): Promise<KeepAliveAnswer> {
    if (!this.isOpen) return Promise.resolve({ kind: 'lost', detail: 'the stream is closed' });
    if (this.inflight >= this.inflightMax) {
      return Promise.resolve({ kind: 'lost', detail: `${this.inflightMax} keep-alives already `
        + 'wait for an answer on this stream' });
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(leaseId) ?? [];
      queue.push(resolve);
      this.waiting.set(leaseId, queue);
      this.inflight += 1;
      if (!this.stream.write({ ID: leaseId })) {
        // Buffered by gRPC (backpressure): the answer still comes; nothing to undo.
      }
    });
  }

  close(): void {
    this.shut('the stream was closed');
    this.stream.end();
  }

  private receive(answer: EtcdMessage): void {
    let leaseId: number;
    let ttlMs: number;
    try {
      leaseId = int(answer['ID'], 'ID');
      ttlMs = msOfSeconds(answer['TTL'], 'TTL');
    } catch (error) {
      this.shut(`etcd sent an unreadable keep-alive answer: ${String(error)}`);
      this.stream.end();
      return;
    }
    const queue = this.waiting.get(leaseId);
    const resolve = queue?.shift();
    if (resolve === undefined) return; // an answer to nothing we wait for: ignore it
    if (queue!.length === 0) this.waiting.delete(leaseId);
    this.inflight -= 1;
    // etcd answers a lease it does not hold with TTL 0 (<= 0).
    resolve(ttlMs <= 0 ? { kind: 'refused', error: leaseGoneError(leaseId, this.endpoint) }
      : { kind: 'ok', body: { leaseId, ttlMs, remainingMs: ttlMs } });
  }

  private shut(detail: string): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    const queues = [...this.waiting.values()];
    this.waiting.clear();
    this.inflight = 0;
    for (const resolve of queues.flat()) resolve({ kind: 'lost', detail });
  }
}
