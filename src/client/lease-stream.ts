/**
 * The client side of the pipelined keep-alive stream (src/server/lease-stream.ts): one stream
 * to the leader per client, shared by all its leases, many keep-alives in flight. It opens on
 * demand through the transport port, goes to the leader a follower names (up to
 * `redirectsMax` hops), moves on to the next endpoint when one fails, and fails every
 * keep-alive in flight when the stream drops (the caller retries: a keep-alive without an
 * answer promises nothing). Each keep-alive waits at most `requestTimeoutMs` on the client's
 * timer; a stream that lets one time out is presumed dead and closed.
 */
import type { LeaseStream } from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import { lostError } from './caller.js';
import { callSignal, TimedSignal, type ClientContext } from './context.js';

/** What a keep-alive's answer says. */
export interface LeaseKeepAliveResult {
  readonly leaseId: number;
  /** The granted TTL. Unit: ms. */
  readonly ttlMs: number;
  /** The leader's remaining TTL when it answered. Unit: ms. */
  readonly remainingMs: number;
}

export class LeaseStreamClient {
  /** The open stream; replaced when it closes. */
  private current: LeaseStream | undefined;
  /** The stream being opened, which every keep-alive meanwhile waits for. */
  private opening: Promise<LeaseStream> | undefined;

  constructor(private readonly c: ClientContext) {
    c.closing.addEventListener('abort', () => this.close(), { once: true });
  }

  /**
   * One keep-alive over the stream; rejects with a CoordError (outcome `failed`: a keep-alive
   * changes nothing a caller could count on without its answer).
   */
  async keepAlive(leaseId: number, signal?: AbortSignal): Promise<LeaseKeepAliveResult> {
    if (this.c.closing.aborted) throw closedError();
    const stream = await this.connect(signal);
    const timed = new TimedSignal(this.c.timer, this.c.config.requestTimeoutMs,
      [callSignal(this.c.closing, signal)]);
    const onTimeout = (): void => {
      if (timed.timedOut) stream.close(); // presumed dead: the next keep-alive reopens
    };
    timed.signal.addEventListener('abort', onTimeout, { once: true });
    try {
      const answer = await raceAbort(stream.keepAlive(leaseId), timed.signal);
      if (answer === undefined) {
        throw timed.timedOut ? new CoordError('CONCLAVE_TIMEOUT', 'no keep-alive answer '
          + `within ${this.c.config.requestTimeoutMs} ms`) : closedOrAborted(signal);
      }
      if (answer.kind === 'refused') throw answer.error;
      if (answer.kind === 'lost') {
        this.drop(stream);
        throw new CoordError('CONCLAVE_UNAVAILABLE', `the keep-alive stream closed (the `
          + `leader may have changed): ${answer.detail}`);
      }
      return keepAliveResult(answer.body);
    } finally {
      timed.done();
    }
  }

  close(): void {
    const { current, opening } = this;
    this.current = undefined;
    this.opening = undefined;
    current?.close();
    void opening?.then((s) => s.close(), () => undefined);
  }

  private drop(stream: LeaseStream): void {
    if (this.current === stream) this.current = undefined;
  }

  /** The open stream, or one opened now (a closed one is replaced). */
  private async connect(signal: AbortSignal | undefined): Promise<LeaseStream> {
    if (this.current?.open === true) return this.current;
    this.current = undefined;
    this.opening ??= this.open(signal).then((stream) => {
      this.opening = undefined;
      if (this.c.closing.aborted) stream.close();
      else this.current = stream;
      return stream;
    }, (error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return await this.opening;
  }

  /** Opens the stream at the leader (or the next endpoint), following named leaders. */
  private async open(signal: AbortSignal | undefined): Promise<LeaseStream> {
    const { router, config, transport, timer } = this.c;
    let endpoint = router.next(true);
    for (let hop = 0; ; hop++) {
      const timed = new TimedSignal(timer, config.requestTimeoutMs,
        [callSignal(this.c.closing, signal)]);
      let opening;
      try {
        opening = await transport.openLeaseStream(endpoint, { signal: timed.signal });
      } finally {
        timed.done();
      }
      if (opening.kind === 'open') {
        router.noteLeader(opening.servedBy);
        return opening.stream;
      }
      router.noteFailure(opening.servedBy);
      if (opening.kind === 'lost') {
        if (opening.aborted && !timed.timedOut) throw closedOrAborted(signal);
        throw new CoordError('CONCLAVE_UNAVAILABLE', 'cannot open the keep-alive stream: '
          + lostError(opening, timed.timedOut, config.requestTimeoutMs).message);
      }
      const leader = opening.leader;
      if (leader === undefined || leader === opening.servedBy || hop >= config.redirectsMax) {
        throw new CoordError(opening.error.code, `${opening.servedBy} refused the keep-alive `
          + `stream: ${opening.error.message}`);
      }
      router.noteLeader(leader);
      endpoint = leader;
    }
  }
}

/** Resolves with `work`, or with undefined as soon as `signal` aborts. */
function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

function keepAliveResult(body: unknown): LeaseKeepAliveResult {
  const { leaseId, ttlMs, remainingMs } = (body ?? {}) as Record<string, unknown>;
  if (typeof leaseId !== 'number' || typeof ttlMs !== 'number'
    || typeof remainingMs !== 'number') {
    throw new CoordError('CONCLAVE_PROTOCOL', 'unexpected keep-alive answer '
      + JSON.stringify(body).slice(0, 200));
  }
  return { leaseId, ttlMs, remainingMs };
}

function closedOrAborted(signal: AbortSignal | undefined): CoordError {
  if (signal?.aborted === true) {
    return new CoordError('CONCLAVE_UNAVAILABLE', 'the keep-alive was aborted',
      { cause: signal.reason });
  }
  return closedError();
}

function closedError(): CoordError {
  return new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed');
}
