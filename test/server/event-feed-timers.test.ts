// The dashboard's feed costs nothing while no page is open: its sample timer runs only while
// the feed has a listener (node's mocked timers drive the intervals; nothing sleeps).
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { nodeId } from '../../src/core/ids.js';
import type { RaftStatus } from '../../src/core/raft/index.js';
import { EVENT_FEED_DEFAULTS, EventFeed, type FeedFrame } from '../../src/server/event-feed.js';
import { startEventFeedTimers } from '../../src/server/event-feed-wiring.js';

function feedCountingStatus(): { feed: EventFeed; statusCalls: () => number } {
  let calls = 0;
  const status = { role: 'follower', term: 1, leaderId: undefined, commitIndex: 0,
    appliedIndex: 0, lastIndex: 0, progress: [] } as unknown as RaftStatus;
  const feed = new EventFeed({
    id: nodeId('n1'),
    status: () => { calls++; return status; },
    revision: () => 0, leaseCount: () => 0, leases: () => undefined,
  }, { monotonicMs: () => 0, wallMs: () => 0 }, { nextUint32: () => 7 },
  { ...EVENT_FEED_DEFAULTS, sampleIntervalMs: 100 });
  return { feed, statusCalls: () => calls };
}

describe('server: the event feed samples only while listened to', () => {
  it('takes no sample without a listener, samples with one, stops when it leaves', () => {
    mock.timers.enable({ apis: ['setInterval'] });
    const mockedSetInterval = globalThis.setInterval;
    let intervalsCreated = 0;
    globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
      intervalsCreated++;
      return mockedSetInterval(...args);
    }) as typeof setInterval;
    try {
      const { feed, statusCalls } = feedCountingStatus();
      const timers = startEventFeedTimers(feed);
      assert.equal(intervalsCreated, 1, 'no page open: only the per-second rates timer runs');
      mock.timers.tick(5_000);
      assert.equal(statusCalls(), 0, 'no page open: no status sample taken');
      const frames: FeedFrame[] = [];
      const unsubscribe = feed.subscribe((frame) => frames.push(frame));
      mock.timers.tick(1_000);
      assert.equal(statusCalls(), 10, 'one sample per 100 ms while listened to');
      assert.ok(frames.some((frame) => frame.type === 'sample'));
      unsubscribe();
      mock.timers.tick(5_000);
      assert.equal(statusCalls(), 10, 'the last listener left: sampling stopped');
      feed.subscribe(() => undefined);
      mock.timers.tick(300);
      assert.equal(statusCalls(), 13, 'a new listener restarts sampling');
      timers.stop();
      mock.timers.tick(1_000);
      assert.equal(statusCalls(), 13, 'stopped timers take no sample');
    } finally {
      globalThis.setInterval = mockedSetInterval;
      mock.timers.reset();
    }
  });
});
