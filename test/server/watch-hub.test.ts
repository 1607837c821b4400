/**
 * Goal: the watch hub never skips or repeats an event, bounds what it queues per watcher and in
 * all, cancels a live watcher that does not take its bytes (`slow`, with the revision to resume
 * from), and encodes each event once however many watchers it goes to. Method: a real KvStore
 * and sinks whose consumers take bytes only when the test says so; fixed cases, then fast-check
 * over random sequences of writes, subscriptions, closes, progress and partial reads, checking
 * after every step that nothing throws, that the byte accounting matches what the sinks hold,
 * and at the end that every stream (plus its resumption) delivered exactly the store's events.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { KvStore, type KvEvent, type KvKeySelector } from '../../src/core/kv/index.js';
import { WatchHub, type WatchSink } from '../../src/server/watch-hub.js';

const NOW = 1_700_000_000_000;
/** Runs the hub's fan-out turns at once, so each step of a test sees its effects. */
const now = (task: () => void): void => task();
const decoder = new TextDecoder();

/** A consumer that takes written chunks only when told to. */
class SlowSink implements WatchSink {
  readonly pending: { chunks: readonly Uint8Array[]; flushed: () => void }[] = [];
  text = '';
  ended = false;
  private last: Uint8Array | undefined;

  write(chunks: readonly Uint8Array[], flushed: () => void): void {
    this.pending.push({ chunks, flushed });
  }

  end(last?: Uint8Array): void {
    this.ended = true;
    this.last = last;
  }

  /** Takes up to `writes` queued writes (all by default). */
  take(writes = Infinity): void {
    for (let i = 0; i < writes && this.pending.length > 0; i++) {
      const next = this.pending.shift() as { chunks: readonly Uint8Array[]; flushed: () => void };
      for (const chunk of next.chunks) this.text += decoder.decode(chunk);
      next.flushed();
    }
    if (this.pending.length === 0 && this.ended && this.last !== undefined) {
      this.text += decoder.decode(this.last);
      this.last = undefined;
    }
  }

  messages(): Record<string, unknown>[] {
    return this.text.split('\n').filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

class Bench {
  readonly store = new KvStore();
  private index = 0;

  put(key: string, value: string): void {
    this.store.apply(++this.index, { kind: 'put', nowMs: NOW, key, value });
  }

  del(key: string, prefix: boolean): void {
    this.store.apply(++this.index, { kind: 'delete', nowMs: NOW, key, prefix });
  }
}

function eventsOf(messages: Record<string, unknown>[]): KvEvent[] {
  return messages.flatMap((m) => (m['kind'] === 'events' ? m['events'] as KvEvent[] : []));
}

const summary = (events: readonly KvEvent[]): string[] =>
  events.map((e) => `${e.kv.modRevision}:${e.type}:${e.kv.key}`);

describe('server: watch hub', () => {
  test('one encoding per event, whatever the number of watchers', () => {
    const bench = new Bench();
    const hub = new WatchHub(bench.store, { watcherBufferBytesMax: 1 << 22,
      watchBufferBytesMax: 1 << 24 }, now);
    const sinks = Array.from({ length: 500 }, () => new SlowSink());
    for (const sink of sinks) hub.watch({ key: 'k' }, 0, sink);
    bench.put('k', 'x'.repeat(100_000));
    hub.notify();
    assert.equal(hub.encodeCount, 1);
    // 500 queues hold the same 100 kB (counted once) plus a progress line and a tail each.
    assert.ok(hub.queuedBytes < 100_100 + 500 * 80, `${hub.queuedBytes}`);
    for (const sink of sinks) sink.take();
    assert.equal(hub.queuedBytes, 0);
    assert.equal(eventsOf(sinks[0]?.messages() ?? [])[0]?.kv.value.length, 100_000);
  });

  test('a live watcher that does not take its bytes is canceled slow; a resume misses nothing',
    () => {
      const bench = new Bench();
      const hub = new WatchHub(bench.store, { watcherBufferBytesMax: 4096,
        watchBufferBytesMax: 1 << 20 }, now);
      const slow = new SlowSink();
      const start = bench.store.revision + 1;
      hub.watch({ key: 'a/', prefix: true }, 0, slow);
      for (let i = 0; i < 40; i++) {
        bench.put(`a/${i}`, 'v'.repeat(200));
        hub.notify();
      }
      assert.equal(slow.ended, true);
      assert.equal(hub.canceledSlow, 1);
      slow.take();
      const messages = slow.messages();
      const canceled = messages[messages.length - 1];
      assert.equal(canceled?.['kind'], 'canceled');
      assert.equal(canceled?.['reason'], 'slow');
      const resumeFrom = canceled?.['nextRevision'] as number;
      const resumed = new SlowSink();
      hub.watch({ key: 'a/', prefix: true }, resumeFrom, resumed);
      resumed.take();
      const all = [...eventsOf(messages), ...eventsOf(resumed.messages())];
      const expected = bench.store.eventsSince(start, { key: 'a/', prefix: true });
      assert.ok(expected.kind === 'events');
      assert.deepEqual(summary(all), summary(expected.events));
    });

  test('a watcher catching up pulls only as fast as it takes bytes, and is not canceled', () => {
    const bench = new Bench();
    for (let i = 0; i < 200; i++) bench.put(`h/${i}`, 'v'.repeat(100));
    const hub = new WatchHub(bench.store, { watcherBufferBytesMax: 4096,
      watchBufferBytesMax: 1 << 20 }, now);
    const sink = new SlowSink();
    hub.watch({ key: 'h/', prefix: true }, 2, sink);
    assert.ok(hub.queuedBytes <= 4096, `${hub.queuedBytes}`);
    let rounds = 0;
    while (sink.pending.length > 0) {
      sink.take(1);
      assert.ok(hub.queuedBytes <= 4096 + 200, `${hub.queuedBytes}`);
      rounds++;
    }
    assert.equal(sink.ended, false);
    assert.ok(rounds > 5);
    assert.equal(eventsOf(sink.messages()).length, 200);
  });

  test('past the total bound the watchers with the most queued are canceled', () => {
    const bench = new Bench();
    const hub = new WatchHub(bench.store, { watcherBufferBytesMax: 1 << 20,
      watchBufferBytesMax: 10_000 }, now);
    const sinks = Array.from({ length: 5 }, (_, i) => {
      const sink = new SlowSink();
      hub.watch({ key: `t/${i}` }, 0, sink);
      return sink;
    });
    for (let i = 0; i < 5; i++) {
      bench.put(`t/${i}`, 'v'.repeat(3000));
      hub.notify();
    }
    const canceled = sinks.filter((s) => s.ended).length;
    assert.ok(canceled >= 2 && canceled < 5, `${canceled} canceled`);
  });
});

type Op =
  | { kind: 'put'; key: number; bytes: number }
  | { kind: 'delete'; key: number; prefix: boolean }
  | { kind: 'watch'; key: number; prefix: boolean; back: number }
  | { kind: 'take'; watcher: number; writes: number }
  | { kind: 'close'; watcher: number }
  | { kind: 'progress' };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('put' as const), key: fc.nat(5),
    bytes: fc.oneof(fc.nat(50), fc.nat(3000)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: fc.nat(5),
    prefix: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('watch' as const), key: fc.nat(5),
    prefix: fc.boolean(), back: fc.nat(10) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('take' as const), watcher: fc.nat(20),
    writes: fc.oneof(fc.constant(1), fc.constant(Infinity), fc.nat(5)) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), watcher: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'progress' as const }) },
);

interface Subscription {
  readonly selector: KvKeySelector;
  readonly from: number;
  readonly sink: SlowSink;
  readonly close: () => void;
  closed: boolean;
}

describe('server: watch hub under random slow consumers (property)', () => {
  test('never throws, accounts every queued byte, and streams plus resumes miss nothing', () => {
    let canceled = 0;
    let streams = 0;
    fc.assert(fc.property(fc.array(opArbitrary, { minLength: 20, maxLength: 120 }), (ops) => {
      const bench = new Bench();
      const limits = { watcherBufferBytesMax: 2048, watchBufferBytesMax: 12_000 };
      const hub = new WatchHub(bench.store, limits, now);
      const subs: Subscription[] = [];
      for (const op of ops) {
        step(bench, hub, subs, op);
        assert.equal(hub.queuedBytes, uniquePendingBytes(subs), 'queued bytes accounting');
      }
      for (const sub of subs) {
        if (!sub.closed) sub.sink.take();
      }
      for (const sub of subs) {
        if (sub.closed) continue;
        streams += 1;
        if (checkStream(bench, hub, sub)) canceled += 1;
      }
    }), { numRuns: 300 });
    // The runs exercised what they claim to: many streams, some of them canceled and resumed.
    assert.ok(streams > 600 && canceled > 50, `${streams} streams, ${canceled} canceled`);
  });
});

function step(bench: Bench, hub: WatchHub, subs: Subscription[], op: Op): void {
  switch (op.kind) {
    case 'put':
      bench.put(`k/${op.key}`, 'v'.repeat(op.bytes));
      return hub.notify();
    case 'delete':
      bench.del(`k/${op.prefix ? '' : op.key}`, op.prefix);
      return hub.notify();
    case 'watch': {
      const selector = op.prefix ? { key: 'k/', prefix: true } : { key: `k/${op.key}` };
      const from = Math.max(0, bench.store.revision + 1 - op.back);
      const sink = new SlowSink();
      const handle = hub.watch(selector, from, sink);
      subs.push({ selector, from: from === 0 ? bench.store.revision + 1 : from, sink,
        close: () => handle.close(), closed: false });
      return;
    }
    case 'take': {
      const sub = subs[op.watcher % Math.max(1, subs.length)];
      if (sub !== undefined && !sub.closed) sub.sink.take(op.writes);
      return;
    }
    case 'close': {
      const sub = subs[op.watcher % Math.max(1, subs.length)];
      if (sub !== undefined && !sub.closed) {
        sub.closed = true;
        sub.close();
      }
      return;
    }
    case 'progress':
      return hub.progressAll();
  }
}

/** Bytes the sinks still hold unflushed, each buffer once (what the hub must count). */
function uniquePendingBytes(subs: readonly Subscription[]): number {
  const held = new Set<Uint8Array>();
  for (const sub of subs) {
    if (sub.closed) continue;
    for (const write of sub.sink.pending) for (const chunk of write.chunks) held.add(chunk);
  }
  let bytes = 0;
  for (const chunk of held) bytes += chunk.length;
  return bytes;
}

/**
 * The stream, resumed from its `canceled` revision if it was canceled, is the store's events.
 * Returns whether it was canceled.
 */
function checkStream(bench: Bench, hub: WatchHub, sub: Subscription): boolean {
  const messages = sub.sink.messages();
  let events = eventsOf(messages);
  const last = messages[messages.length - 1];
  if (last?.['kind'] === 'canceled') {
    assert.equal(last['reason'], 'slow');
    const resumed = new SlowSink();
    hub.watch(sub.selector, last['nextRevision'] as number, resumed);
    resumed.take();
    events = [...events, ...eventsOf(resumed.messages())];
  }
  const expected = bench.store.eventsSince(sub.from, sub.selector);
  assert.ok(expected.kind === 'events');
  assert.deepEqual(summary(events), summary(expected.events));
  return last?.['kind'] === 'canceled';
}
