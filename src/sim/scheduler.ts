/**
 * Virtual time and the event queue. Events run in (time, insertion order): two runs that schedule
 * the same events in the same order run them identically. Nothing here reads a real clock.
 */
import { assert } from '../core/assert.js';
import type { SimRecorder } from './sim-recorder.js';

export interface ScheduledEvent {
  readonly atMs: number;
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

export class Scheduler {
  private heap: ScheduledEvent[] = [];
  private seqNext = 0;
  private nowMsValue = 0;
  /** Events run so far (cancelled ones not counted). */
  eventsRun = 0;

  /**
   * @param recorder Where the simulator's parts note what happens (`conclave sim --record`);
   *   undefined: nothing is recorded.
   */
  constructor(readonly recorder?: SimRecorder) {}

  /** The current virtual time in milliseconds since the start of the run. */
  get nowMs(): number {
    return this.nowMsValue;
  }

  get pending(): number {
    return this.heap.length;
  }

  /** The virtual time of the next event that will run, if any. Unit: ms. */
  get nextAtMs(): number | undefined {
    return this.peek()?.atMs;
  }

  /** Runs `run` at `nowMs + delayMs`; delays are clamped at 0. */
  schedule(delayMs: number, run: () => void): ScheduledEvent {
    assert(Number.isFinite(delayMs), () => `schedule: delay must be finite: ${delayMs}`);
    const event: ScheduledEvent = {
      atMs: this.nowMsValue + Math.max(0, delayMs),
      seq: this.seqNext++,
      run,
      cancelled: false,
    };
    this.push(event);
    return event;
  }

  /** Runs the next event; false when there is none. */
  step(): boolean {
    for (;;) {
      const event = this.pop();
      if (event === undefined) return false;
      if (event.cancelled) continue;
      assert(event.atMs >= this.nowMsValue,
        () => `time went backwards: event at ${event.atMs} < now ${this.nowMsValue}`);
      this.nowMsValue = event.atMs;
      this.eventsRun++;
      event.run();
      return true;
    }
  }

  /**
   * Runs events until virtual time would pass `untilMs` (then sets the time to `untilMs`), or
   * `stop()` returns true after an event. Returns true when stopped by `stop`.
   */
  runUntil(untilMs: number, stop?: () => boolean): boolean {
    for (;;) {
      const next = this.peek();
      if (next === undefined || next.atMs > untilMs) break;
      if (!this.step()) break;
      if (stop?.() === true) return true;
    }
    this.nowMsValue = Math.max(this.nowMsValue, untilMs);
    return false;
  }

  private peek(): ScheduledEvent | undefined {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
    return this.heap[0];
  }

  private push(event: ScheduledEvent): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): ScheduledEvent | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
    return top;
  }
}

function before(x: ScheduledEvent, y: ScheduledEvent): boolean {
  return x.atMs < y.atMs || (x.atMs === y.atMs && x.seq < y.seq);
}
