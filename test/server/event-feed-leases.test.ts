// The dashboard's feed sends the lease list only to listeners that ask for it, a full list
// first and then only what changed; and each frame is encoded once for every listener.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeId } from '../../src/core/ids.js';
import type { RaftStatus } from '../../src/core/raft/index.js';
import {
  EVENT_FEED_DEFAULTS, EventFeed, type FeedFrame, type LeaseRow, type LeasesFrame,
} from '../../src/server/event-feed.js';

function feedWith(leases: () => LeaseRow[] | undefined): EventFeed {
  const status = { role: 'leader', term: 1, leaderId: undefined, commitIndex: 0,
    appliedIndex: 0, lastIndex: 0, progress: [] } as unknown as RaftStatus;
  return new EventFeed({
    id: nodeId('n1'), status: () => status, revision: () => 0, leaseCount: () => 0,
    leases: () => {
      const rows = leases();
      return rows === undefined ? undefined : { rows, total: rows.length };
    },
  }, { monotonicMs: () => 0, wallMs: () => 1000 }, { nextUint32: () => 7 },
  EVENT_FEED_DEFAULTS);
}

const row = (id: number, expiresAtMs: number): LeaseRow =>
  ({ id, ttlMs: 10_000, remainingMs: expiresAtMs - 1000, expiresAtMs, keys: [], keyCount: 0 });

describe('server: the event feed\'s lease list', () => {
  it('goes only to listeners that ask; a full list, then the changes and the removals', () => {
    let rows: LeaseRow[] | undefined = [row(1, 5000), row(2, 6000)];
    const feed = feedWith(() => rows);
    const got: LeasesFrame[] = [];
    const others: FeedFrame[] = [];
    const listener = (frame: FeedFrame): void => {
      if (frame.type === 'leases') got.push(frame);
    };
    feed.subscribe(listener);
    feed.subscribe((frame) => others.push(frame), { leases: false });
    feed.closeSecond();
    assert.equal(got.length, 0, 'nobody asked: no lease list');
    feed.setLeasesWanted(listener, true);
    feed.closeSecond();
    assert.deepEqual(got.map((f) => [f.full, f.leases.map((l) => l.id)]), [[true, [1, 2]]]);
    // Lease 2 kept alive (its expiry moved), lease 1 expiring on time, lease 3 granted.
    rows = [row(1, 5100), row(2, 9000), row(3, 9500)];
    feed.closeSecond();
    assert.deepEqual([got[1]!.full, got[1]!.leases.map((l) => l.id), got[1]!.removed],
      [false, [2, 3], []]);
    rows = [row(2, 9000), row(3, 9500)];
    feed.closeSecond();
    assert.deepEqual([got[2]!.leases.length, got[2]!.removed], [0, [1]]);
    assert.ok(others.every((frame) => frame.type !== 'leases'));
    // No longer the leader, then the leader again: a full list, not a delta on a stale one.
    rows = undefined;
    feed.closeSecond();
    rows = [row(4, 9000)];
    feed.closeSecond();
    assert.deepEqual([got.length, got[3]!.full, got[3]!.leases.map((l) => l.id)], [4, true, [4]]);
  });

  it('encodes a frame once for all its listeners', () => {
    const feed = feedWith(() => undefined);
    const texts: string[] = [];
    const original = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
      calls++;
      return original(...args);
    }) as typeof JSON.stringify;
    try {
      for (let i = 0; i < 3; i++) feed.subscribe((_, json) => texts.push(json()));
      feed.sample();
    } finally {
      JSON.stringify = original;
    }
    assert.equal(texts.length, 3);
    assert.equal(calls, 1);
    assert.equal(new Set(texts).size, 1);
  });
});
