/**
 * Idempotency keys for requests that go through the log (writes and linearizable reads).
 *
 * The server's idempotent receiver keeps, per client id, the latest sequence applied, and
 * requires at most one request in flight per id (a later sequence applied first would make
 * the earlier one `duplicate-stale`). So the client keeps a pool of lanes, each a sub-client
 * id `${clientId}.${n}` with its own sequence: a request takes a free lane, uses the lane's
 * next sequence for every attempt (a retry repeats it, so the server applies it at most once)
 * and frees the lane when the call settles. At most `lanesMax` lanes exist; more requests wait
 * in FIFO order. Lanes are created only when needed, so a sequential client uses one id.
 *
 * A call that gave up with an unknown outcome may still be travelling to the leader. Its lane
 * is reused with a higher sequence; if the old request arrives later the server finds it
 * stale and does not apply it, which is within what `unknown` promised.
 */
import { assert } from '../core/assert.js';
import { CoordError } from '../errors.js';
import { abortedCall } from './context.js';

export interface LaneTicket {
  /** The sub-client id to send as `clientId`. */
  readonly clientId: string;
  /** The sequence to send, the same on every attempt of this request. */
  readonly sequence: number;
}

interface Lane {
  readonly clientId: string;
  sequence: number;
  busy: boolean;
}

interface Waiter {
  readonly resolve: (lane: Lane) => void;
  readonly reject: (e: Error) => void;
}

export class WriteLanes {
  private readonly lanes: Lane[] = [];
  private readonly waiters: Waiter[] = [];
  private closed = false;

  constructor(private readonly clientId: string, private readonly lanesMax: number) {
    assert(Number.isSafeInteger(lanesMax) && lanesMax >= 1, () => `lanesMax ${lanesMax}`);
  }

  /** Lanes in use right now (for tests and metrics). */
  get busyCount(): number {
    return this.lanes.filter((lane) => lane.busy).length;
  }

  /**
   * Runs `body` with a ticket of its own lane, freeing the lane when it settles. `signal`
   * aborting while the request waits for a lane rejects it (outcome `failed`: nothing left).
   */
  async with<T>(body: (ticket: LaneTicket) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const lane = await this.acquire(signal);
    lane.sequence += 1;
    try {
      return await body({ clientId: lane.clientId, sequence: lane.sequence });
    } finally {
      this.release(lane);
    }
  }

  /** Rejects every waiter; later requests reject at once. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(closedError());
  }

  private acquire(signal: AbortSignal | undefined): Promise<Lane> {
    if (this.closed) return Promise.reject(closedError());
    if (signal?.aborted === true) return Promise.reject(abortedCall(signal, false));
    const free = this.lanes.find((lane) => !lane.busy);
    const lane = free ?? (this.lanes.length < this.lanesMax ? this.addLane() : undefined);
    if (lane !== undefined) {
      lane.busy = true;
      return Promise.resolve(lane);
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(abortedCall(signal, false));
      };
      const waiter: Waiter = {
        resolve: (handed) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(handed);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private addLane(): Lane {
    const lane: Lane = { clientId: `${this.clientId}.${this.lanes.length}`, sequence: 0,
      busy: false };
    this.lanes.push(lane);
    return lane;
  }

  private release(lane: Lane): void {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) return waiter.resolve(lane); // handed over, still busy
    lane.busy = false;
  }
}

function closedError(): CoordError {
  return new CoordError('CONCLAVE_UNAVAILABLE', 'the client was closed', { outcome: 'failed' });
}
