/**
 * The leases of the "Elections, locks, leases" tab: one bar per lease, the closest to expiring
 * first, at most LEASE_BARS_MAX. Rows are kept by lease id and updated in place, so a redraw
 * (four a second) rebuilds nothing that did not change: with 1,000 leases a rebuild of every
 * row on every redraw, each bar animating its width (a layout per animation frame), was what
 * made this tab the page's costliest (issue 19, docs/dashboard.md "What it costs").
 */
import type { LeaseRow } from '../../server/event-feed.js';
import { fill, h } from './dom.js';
import type { LeaseList } from './state.js';

/** Leases shown as bars (soonest to expire first); the count says how many there are. */
export const LEASE_BARS_MAX = 200;

interface ShownLease {
  readonly element: HTMLElement;
  readonly bar: HTMLElement;
  readonly ttl: Text;
  readonly keys: Text;
  row: LeaseRow;
  /** What the bar and the TTL text show now, so an unchanged value is not written again. */
  scaleText: string;
  ttlText: string;
}

export class LeaseBars {
  readonly element = h('div.leases');
  private readonly count = h('p.muted');
  private readonly list = h('div');
  private readonly shown = new Map<number, ShownLease>();
  /** The list whose order `order` holds (a new list object comes with every leases frame). */
  private sortedFrom: LeaseList | undefined;
  private order: number[] = [];

  constructor() {
    fill(this.element, this.count, this.list);
  }

  render(leases: LeaseList | undefined): void {
    if (leases === undefined) {
      this.clear();
      setText(this.count, 'no lease list yet (the leader sends one a second)');
      return;
    }
    if (leases !== this.sortedFrom) this.place(leases);
    // By the leader's clock, then what elapsed here since its list came.
    const nowLeaderMs = leases.atMs + (Date.now() - leases.receivedAtMs);
    for (const id of this.order) this.update(this.shown.get(id)!, nowLeaderMs);
  }

  /** A new list: which leases are shown, in which order; rows added, moved or removed. */
  private place(leases: LeaseList): void {
    this.sortedFrom = leases;
    // The soonest to expire first: the order of expiresAtMs (none, null, counts as expired).
    const order = [...leases.rows.values()]
      .sort((a, b) => (a.expiresAtMs ?? 0) - (b.expiresAtMs ?? 0))
      .slice(0, LEASE_BARS_MAX);
    setText(this.count, `${leases.total} leases` + (leases.total > order.length
      ? `, the ${order.length} closest to expiring shown` : ''));
    const wanted = new Set(order.map((row) => row.id));
    for (const [id, lease] of this.shown) {
      if (wanted.has(id)) continue;
      lease.element.remove();
      this.shown.delete(id);
    }
    for (const row of order) {
      const lease = this.shown.get(row.id);
      if (lease === undefined) this.shown.set(row.id, newLease(row));
      else if (lease.row !== row) refresh(lease, row);
    }
    const ids = order.map((row) => row.id);
    if (!sameOrder(ids, this.order)) {
      // Appending an element already in the list moves it: the rows end in `ids` order.
      this.list.append(...ids.map((id) => this.shown.get(id)!.element));
    }
    this.order = ids;
  }

  /**
   * The bar's length and the TTL text at `nowLeaderMs`. The bar is scaled, not resized: a
   * transform is drawn by the compositor without a layout of the list.
   */
  private update(lease: ShownLease, nowLeaderMs: number): void {
    const row = lease.row;
    const remainingMs = row.expiresAtMs === null ? 0 : Math.max(0, row.expiresAtMs - nowLeaderMs);
    const fraction = row.ttlMs > 0 ? Math.min(1, remainingMs / row.ttlMs) : 0;
    const scaleText = `scaleX(${fraction.toFixed(3)})`;
    if (scaleText !== lease.scaleText) {
      lease.bar.style.transform = scaleText;
      lease.scaleText = scaleText;
    }
    const ttlText = `${(remainingMs / 1000).toFixed(1)} / ${(row.ttlMs / 1000).toFixed(0)} s`;
    if (ttlText !== lease.ttlText) {
      lease.ttl.data = ttlText;
      lease.ttlText = ttlText;
    }
  }

  private clear(): void {
    this.list.replaceChildren();
    this.shown.clear();
    this.order = [];
    this.sortedFrom = undefined;
  }
}

function newLease(row: LeaseRow): ShownLease {
  const bar = h('span.bar');
  const ttl = document.createTextNode('');
  const keys = document.createTextNode(keysText(row));
  const element = h('div.lease', { 'data-lease': row.id },
    h('span.id', {}, row.id.toString(16)), h('span.track', {}, bar), h('span.ttl', {}, ttl),
    h('span.keys', {}, keys));
  return { element, bar, ttl, keys, row, scaleText: '', ttlText: '' };
}

/** The same lease, sent again (kept alive, or its keys changed). */
function refresh(lease: ShownLease, row: LeaseRow): void {
  lease.row = row;
  const text = keysText(row);
  if (lease.keys.data !== text) lease.keys.data = text;
}

function keysText(row: LeaseRow): string {
  if (row.keyCount === 0) return 'no keys';
  return row.keys.join(', ') +
    (row.keyCount > row.keys.length ? ` +${row.keyCount - row.keys.length}` : '');
}

function sameOrder(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function setText(element: HTMLElement, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}
