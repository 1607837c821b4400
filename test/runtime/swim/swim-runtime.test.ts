/**
 * runtime: swim — the SWIM runtime drives the pure member through the ports.
 * Goal: the runtime's duties hold (every input drained; messages on their channel; events
 * published to the callback and subscribers in order; one timer, armed at the member's next
 * deadline; invalid inbound messages counted and dropped; nothing after stop()), and the
 * protocol works end to end over them: joins converge, a crash is detected and the leader moves
 * on, a leave is seen as such.
 * Method: four runtimes on SimHosts over the simulated network (the same ports the real
 * adapters give), with recording wrappers around the transport and the timer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeId, type NodeId } from '../../../src/core/ids.js';
import {
  SWIM_DEFAULTS_LOCAL, swimDeathDeclarationBoundMs, type MembershipEvent, type SwimChannel,
  type SwimMessage,
} from '../../../src/core/swim/index.js';
import type { Timer, TimerHandle } from '../../../src/ports/timer.js';
import type { Transport } from '../../../src/ports/transport.js';
import { SwimRuntime } from '../../../src/runtime/swim/index.js';
import { Prng } from '../../../src/sim/prng.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimHost } from '../../../src/sim/sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../../../src/sim/sim-network.js';
import { SIM_STORAGE_DEFAULTS } from '../../../src/sim/sim-storage.js';
import { TraceHash } from '../../../src/sim/trace-hash.js';

interface Sent {
  readonly from: NodeId;
  readonly kind: SwimMessage['kind'];
  readonly channel: SwimChannel;
  readonly atMs: number;
}

interface Proc {
  readonly runtime: SwimRuntime;
  readonly events: MembershipEvent[];
  halt(): void;
}

/** Four members n1..n4 (n1 bootstraps, the others join through it), with everything recorded. */
class Cluster {
  readonly scheduler = new Scheduler();
  readonly network: SimNetwork<SwimMessage>;
  readonly hosts = new Map<NodeId, SimHost<SwimMessage, Proc>>();
  readonly sent: Sent[] = [];
  /** Timers armed and neither fired nor cancelled, per member. */
  readonly timersLive = new Map<NodeId, number>();
  timersLiveMax = 0;

  constructor(count = 4, seed = 1) {
    const prng = new Prng(seed);
    this.network = new SimNetwork<SwimMessage>(this.scheduler, prng.fork(), new TraceHash(), {
      faults: NETWORK_FAULTS_NONE,
      // Total: the rogue test sends values that are not messages at all.
      describe: (m) => String((m as { kind?: unknown } | null)?.kind),
      sizeBytes: () => 0,
    });
    for (let i = 1; i <= count; i++) {
      const id = nodeId(`n${i}`);
      const host = new SimHost<SwimMessage, Proc>(id, this.scheduler, this.network, prng.fork(), {
        clock: { driftRate: 0, monotonicOffsetMs: 1000 * i, wallOffsetMs: 0 },
        storage: SIM_STORAGE_DEFAULTS,
      }, (context) => {
        const events: MembershipEvent[] = [];
        const options = { id, address: `${id}:7946`, config: SWIM_DEFAULTS_LOCAL };
        const runtime = new SwimRuntime(options, {
          clock: context.clock,
          timer: this.countingTimer(id, context.timer),
          transport: this.recordingTransport(id, context.transport),
          random: context.random,
          onEvent: (event) => events.push(event),
        });
        return { runtime, events, halt: () => runtime.stop() };
      });
      this.hosts.set(id, host);
    }
  }

  runtime(name: string): SwimRuntime {
    const runtime = this.hosts.get(nodeId(name))?.process?.runtime;
    assert.ok(runtime !== undefined, `${name} is not running`);
    return runtime;
  }

  events(name: string): MembershipEvent[] {
    const process = this.hosts.get(nodeId(name))?.process;
    assert.ok(process !== undefined);
    return process.events;
  }

  /** n1 bootstraps; the others join through it 50 ms apart. */
  start(): void {
    this.runtime('n1').join([]);
    let i = 0;
    for (const [id, host] of this.hosts) {
      if (id === 'n1') continue;
      this.scheduler.schedule(50 * ++i, () => host.process?.runtime.join([nodeId('n1')]));
    }
  }

  runFor(ms: number): void {
    this.scheduler.runUntil(this.scheduler.nowMs + ms);
  }

  private recordingTransport(id: NodeId, inner: Transport<SwimMessage>): Transport<SwimMessage> {
    return {
      localId: inner.localId,
      send: (to, message) => {
        this.sent.push({
          from: id, kind: message.kind, channel: 'stream', atMs: this.scheduler.nowMs,
        });
        inner.send(to, message);
      },
      sendDatagram: (to, message) => {
        this.sent.push({
          from: id, kind: message.kind, channel: 'datagram', atMs: this.scheduler.nowMs,
        });
        inner.sendDatagram(to, message);
      },
      setHandler: (handler) => inner.setHandler(handler),
      close: () => inner.close(),
    };
  }

  private countingTimer(id: NodeId, inner: Timer): Timer {
    const change = (delta: number): void => {
      const live = (this.timersLive.get(id) ?? 0) + delta;
      this.timersLive.set(id, live);
      this.timersLiveMax = Math.max(this.timersLiveMax, live);
    };
    return {
      setTimer: (delayMs, callback): TimerHandle => {
        let live = true;
        change(1);
        const handle = inner.setTimer(delayMs, () => {
          if (live) change(-1);
          live = false;
          callback();
        });
        return {
          cancel: () => {
            if (live) change(-1);
            live = false;
            handle.cancel();
          },
        };
      },
    };
  }
}

function liveView(runtime: SwimRuntime): string {
  return runtime.members().filter((m) => m.state === 'alive' || m.state === 'suspect')
    .map((m) => m.id).sort().join(',');
}

describe('runtime: swim', () => {
  test('members joining through one seed agree on the view and on n1 as the leader', () => {
    const c = new Cluster();
    c.start();
    c.runFor(3000);
    for (const name of ['n1', 'n2', 'n3', 'n4']) {
      const runtime = c.runtime(name);
      assert.equal(liveView(runtime), 'n1,n2,n3,n4', name);
      assert.equal(runtime.leader()?.id, 'n1', name);
      assert.equal(runtime.status().phase, 'member');
      const kinds = c.events(name).map((e) => e.kind);
      assert.ok(kinds.includes('joined') && kinds.includes('leader-changed'), kinds.join());
    }
    assert.equal(c.runtime('n1').leader()?.generation, c.runtime('n4').leader()?.generation);
  });

  test('events reach the callback and every subscriber, in order; unsubscribe stops them', () => {
    const c = new Cluster();
    const seen: MembershipEvent[] = [];
    const unsubscribe = c.runtime('n2').subscribe((event) => seen.push(event));
    c.start();
    c.runFor(2000);
    assert.ok(seen.length > 3);
    assert.deepEqual(seen, c.events('n2'));
    unsubscribe();
    c.runtime('n3').leave();
    c.runFor(2000);
    assert.ok(c.events('n2').length > seen.length, 'n2 saw n3 leave, the subscriber did not');
  });

  test('each message goes out on its channel: join, join-ack, push-pull on the stream', () => {
    const c = new Cluster();
    c.start();
    c.runFor(5000);
    const byChannel = (channel: SwimChannel): Set<string> =>
      new Set(c.sent.filter((s) => s.channel === channel).map((s) => s.kind));
    assert.deepEqual([...byChannel('stream')].sort(), ['join', 'join-ack', 'push-pull']);
    const datagrams = byChannel('datagram');
    for (const kind of ['ping', 'ack', 'gossip']) assert.ok(datagrams.has(kind), kind);
    for (const kind of ['join', 'join-ack', 'push-pull']) assert.ok(!datagrams.has(kind), kind);
  });

  test('one timer per member at most, and it keeps the member probing', () => {
    const c = new Cluster();
    c.start();
    c.runFor(4000);
    assert.equal(c.timersLiveMax, 1);
    const probes = c.runtime('n3').status().counters.probes;
    // One probe per 200 ms period, once joined (about 3.8 s).
    assert.ok(probes >= 15 && probes <= 21, `${probes} probes`);
  });

  test('invalid inbound messages are counted and dropped, and never reach the member', () => {
    const c = new Cluster();
    c.start();
    c.runFor(1000);
    const rogue = c.network.attach(nodeId('x'));
    const garbage: unknown[] = [
      null, 'hello', { kind: 'ping', seq: -1, target: 'n1', updates: [] },
      { kind: 'gossip', updates: [{ member: 'x', state: 'zombie', incarnation: 1, age: 1 }] },
    ];
    // One at a time, so the last one dropped is the last sent (the network may reorder).
    for (const message of garbage) {
      rogue.sendDatagram(nodeId('n1'), message as SwimMessage);
      c.runFor(250);
    }
    const status = c.runtime('n1').status();
    assert.equal(status.invalidMessagesDropped, garbage.length);
    assert.match(status.invalidMessageLast ?? '', /state/);
    assert.equal(c.runtime('n1').member(nodeId('x')), undefined);
    assert.equal(liveView(c.runtime('n1')), 'n1,n2,n3,n4');
  });

  test('a crashed coordinator is declared dead by everyone and the next oldest leads', () => {
    const c = new Cluster();
    c.start();
    c.runFor(3000);
    c.hosts.get(nodeId('n1'))?.crash();
    c.runFor(swimDeathDeclarationBoundMs(SWIM_DEFAULTS_LOCAL, 4) + 1000);
    for (const name of ['n2', 'n3', 'n4']) {
      assert.equal(c.runtime(name).member(nodeId('n1'))?.state, 'dead', name);
      assert.equal(c.runtime(name).leader()?.id, 'n2', name);
    }
  });

  test('after stop() nothing is sent and no event is published', () => {
    const c = new Cluster();
    c.start();
    c.runFor(2000);
    const runtime = c.runtime('n3');
    const events = c.events('n3').length;
    runtime.stop();
    const stoppedAtMs = c.scheduler.nowMs;
    runtime.join([nodeId('n1')]);
    runtime.leave();
    c.runFor(3000);
    assert.equal(c.sent.filter((s) => s.from === 'n3' && s.atMs >= stoppedAtMs).length, 0);
    assert.equal(c.events('n3').length, events);
    assert.equal(runtime.status().stopped, true);
    assert.equal(runtime.idle, true);
    assert.equal(c.timersLive.get(nodeId('n3')), 0);
  });

  test('a member that leaves is seen as left by the others, then goes idle', () => {
    const c = new Cluster();
    c.start();
    c.runFor(2000);
    c.runtime('n4').leave();
    assert.equal(c.runtime('n4').idle, false);
    c.runFor(3000);
    for (const name of ['n1', 'n2', 'n3']) {
      assert.equal(c.runtime(name).member(nodeId('n4'))?.state, 'left', name);
    }
    assert.equal(c.runtime('n4').status().phase, 'left');
    assert.equal(c.runtime('n4').idle, true);
    assert.equal(c.runtime('n4').leader(), undefined);
  });
});
