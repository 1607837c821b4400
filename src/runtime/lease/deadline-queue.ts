/**
 * A min-heap of (deadline, lease id) pairs: which lease may expire first. At most one entry per
 * lease: a keep-alive moves a deadline later without touching the heap, and the tracker pushes
 * the lease again when its stale (earlier) entry comes out, so a stream of keep-alives costs
 * nothing here.
 */
interface Item {
  readonly atMs: number;
  readonly leaseId: number;
}

export class DeadlineQueue {
  private readonly items: Item[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The earliest deadline held; Infinity when empty. */
  peekMs(): number {
    return this.items[0]?.atMs ?? Infinity;
  }

  push(atMs: number, leaseId: number): void {
    this.items.push({ atMs, leaseId });
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes and returns the earliest item. */
  pop(): Item | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (top === undefined || last === undefined || this.items.length === 0) return top;
    this.items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.items.length && this.less(left, smallest)) smallest = left;
      if (right < this.items.length && this.less(right, smallest)) smallest = right;
      if (smallest === i) return top;
      this.swap(i, smallest);
      i = smallest;
    }
  }

  /** Ties go to the lower lease id, so the order is the same on every run. */
  private less(a: number, b: number): boolean {
    const x = this.items[a] as Item;
    const y = this.items[b] as Item;
    return x.atMs < y.atMs || (x.atMs === y.atMs && x.leaseId < y.leaseId);
  }

  private swap(a: number, b: number): void {
    const x = this.items[a] as Item;
    this.items[a] = this.items[b] as Item;
    this.items[b] = x;
  }
}
