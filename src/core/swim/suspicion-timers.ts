/**
 * The suspicion timers of one member: one `Suspicion` per suspected member, and a binary
 * min-heap of their deadlines, so that the next deadline costs O(1) and each expiry or
 * confirmation O(log S) for S suspicions, instead of a scan of every suspicion whenever the
 * earliest one goes (a loss burst over 1,000 members gives each member hundreds at once).
 *
 * The heap is lazy: a confirmation that brings a deadline forward pushes a new entry, and an
 * entry whose suspicion was dropped, replaced or moved is discarded when it reaches the top.
 * Each suspicion has at most `wanted + 1` entries (one per deadline it ever had), so the heap
 * holds O(S × suspicionMult) entries at most; `compact` rebuilds it when stale entries
 * outnumber live ones.
 */
import { assert } from '../assert.js';
import type { NodeId } from '../ids.js';
import type { Suspicion } from './suspicion.js';

interface HeapEntry {
  readonly deadlineMs: number;
  readonly member: NodeId;
  readonly suspicion: Suspicion;
}

export class SuspicionTimers {
  private readonly byMember = new Map<NodeId, Suspicion>();
  private heap: HeapEntry[] = [];

  get size(): number {
    return this.byMember.size;
  }

  get(member: NodeId): Suspicion | undefined {
    return this.byMember.get(member);
  }

  has(member: NodeId): boolean {
    return this.byMember.has(member);
  }

  /** Starts (or replaces) the timer of `member`. */
  set(member: NodeId, suspicion: Suspicion): void {
    this.byMember.set(member, suspicion);
    this.push({ deadlineMs: suspicion.deadlineMs, member, suspicion });
  }

  /**
   * Counts `accuser` as a confirmation of the suspicion of `member` (see `Suspicion.confirm`);
   * returns whether it counted.
   */
  confirm(member: NodeId, accuser: NodeId): boolean {
    const suspicion = this.byMember.get(member);
    if (suspicion === undefined) return false;
    const beforeMs = suspicion.deadlineMs;
    if (!suspicion.confirm(accuser)) return false;
    if (suspicion.deadlineMs !== beforeMs) {
      this.push({ deadlineMs: suspicion.deadlineMs, member, suspicion });
    }
    return true;
  }

  delete(member: NodeId): void {
    this.byMember.delete(member);
    if (this.heap.length > 64 && this.heap.length > 4 * this.byMember.size) this.compact();
  }

  clear(): void {
    this.byMember.clear();
    this.heap = [];
  }

  /** The earliest deadline of a live timer; Infinity when there is none. */
  nextDeadlineMs(): number {
    this.dropStale();
    return this.heap[0]?.deadlineMs ?? Infinity;
  }

  /**
   * Removes and returns the timers due at `nowMs`, earliest first. The caller decides what
   * each one means (the member may have refuted meanwhile).
   */
  takeExpired(nowMs: number): [NodeId, Suspicion][] {
    const out: [NodeId, Suspicion][] = [];
    for (;;) {
      this.dropStale();
      const top = this.heap[0];
      if (top === undefined || top.deadlineMs > nowMs) return out;
      this.pop();
      this.byMember.delete(top.member);
      out.push([top.member, top.suspicion]);
    }
  }

  /** Pops entries whose timer is gone or has another deadline now. */
  private dropStale(): void {
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || this.isLive(top)) return;
      this.pop();
    }
  }

  private isLive(entry: HeapEntry): boolean {
    return this.byMember.get(entry.member) === entry.suspicion
      && entry.suspicion.deadlineMs === entry.deadlineMs;
  }

  private compact(): void {
    const live = this.heap.filter((entry) => this.isLive(entry));
    this.heap = [];
    for (const entry of live) this.push(entry);
    assert(this.heap.length <= this.byMember.size,
      () => `suspicion heap ${this.heap.length} > timers ${this.byMember.size}`);
  }

  private push(entry: HeapEntry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(entry, heap[parent] as HeapEntry)) break;
      heap[i] = heap[parent] as HeapEntry;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length
        && earlier(heap[right] as HeapEntry, heap[left] as HeapEntry)
        ? right : left;
      if (!earlier(heap[child] as HeapEntry, last)) break;
      heap[i] = heap[child] as HeapEntry;
      i = child;
    }
    heap[i] = last;
  }
}

/** Deadline order, then member id, so that expiries come out in one deterministic order. */
function earlier(a: HeapEntry, b: HeapEntry): boolean {
  return a.deadlineMs < b.deadlineMs || (a.deadlineMs === b.deadlineMs && a.member < b.member);
}
