/**
 * snapshot: how long a member's event loop stalls while it snapshots a large store. In this
 * process: a KvStore of 1 M keys (256-byte values, etcd's benchmark value size), snapshotted
 * by the real RaftRuntime over the real write-ahead log on real files (fsync on), once in steps
 * (as the server does: copy-on-write capture, a section per turn, checksum and file a MiB per
 * turn) and once at once (the same encoding in one go, one file write: the approach before
 * steps). A probe timer every millisecond and monitorEventLoopDelay record the longest stall
 * of the event loop while each snapshot runs. Then the restore: decoding the snapshot and
 * rebuilding the store (what a follower does on InstallSnapshot and a restart does at start).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  constants, monitorEventLoopDelay, type PerformanceEntry, PerformanceObserver,
} from 'node:perf_hooks';
import { FileStorage } from '../../src/adapters/file-storage.js';
import { SystemClock } from '../../src/adapters/system-clock.js';
import { SystemRandom } from '../../src/adapters/system-random.js';
import { nodeId, type NodeId } from '../../src/core/ids.js';
import {
  decodeKvSnapshot, encodeKvSnapshot, KvStore, KV_STORE_DEFAULTS,
} from '../../src/core/kv/index.js';
import { RAFT_DEFAULTS_LAN, type RaftMessage } from '../../src/core/raft/index.js';
import type { Transport } from '../../src/ports/transport.js';
import { kvSnapshotSteps } from '../../src/runtime/core/kv-snapshots.js';
import {
  RAFT_RUNTIME_DEFAULTS, RaftRuntime, type SnapshotEvent, type StateMachine,
} from '../../src/runtime/raft/index.js';
import { openWal, WAL_DEFAULTS } from '../../src/runtime/wal/index.js';
import { barPanelsSvg } from '../lib/bar-panels.js';
import { SYSTEM_COLOURS } from '../lib/chart.js';
import type { BenchContext, Suite, SuiteOutcome } from '../lib/context.js';
import { fmt, ratio } from '../lib/stats.js';

const KEYS = 1_000_000;
const MIB = 2 ** 20;
const VALUE_BYTES = 256;

export interface SnapshotRun {
  readonly mode: 'in steps' | 'at once';
  /** From the proposal that triggers it until the snapshot file is durable. Unit: ms. */
  readonly durationMs: number;
  /** The longest gap between two runs of a 1 ms probe timer, minus the 1 ms. Unit: ms. */
  readonly stallMsMax: number;
  /** monitorEventLoopDelay (resolution 1 ms): the largest and the 99th percentile. Unit: ms. */
  readonly loopDelayMsMax: number;
  readonly loopDelayMsP99: number;
  readonly snapshotBytes: number;
  /** The longest garbage collection during the run (a 'gc' performance entry). Unit: ms. */
  readonly gcMsMax: number;
  /** Its kind: 'major' (mark-compact), 'minor' (scavenge), 'incremental', 'weakcb'. */
  readonly gcKindOfMax: string;
  /** Collection time that fell inside the longest stall (what of it GC explains). Unit: ms. */
  readonly gcMsInLongestStall: number;
}

export interface SnapshotFigures {
  readonly suite: 'snapshot';
  readonly keys: number;
  readonly valueBytes: number;
  readonly runs: readonly SnapshotRun[];
  /** Decode and rebuild of the store from the snapshot. Unit: ms. */
  readonly restoreMs: number;
  /** Filling the store (not measured against anything). Unit: ms. */
  readonly fillMs: number;
  /** The machine's 1-minute load average at the start and the end (2 cores: above 2 is busy). */
  readonly loadAverage: readonly [number, number];
}

export const snapshotSuite: Suite = {
  name: 'snapshot',
  summary: 'longest event-loop stall while a member snapshots 1 M keys, in steps vs at once',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const loadAtStart = loadavg()[0] ?? Number.NaN;
    const fillStart = performance.now();
    const store = filledStore(KEYS);
    const fillMs = performance.now() - fillStart;
    context.say(`snapshot: ${KEYS} keys of ${VALUE_BYTES} bytes filled in ${fmt(fillMs)} ms`);
    const runs: SnapshotRun[] = [];
    for (const mode of ['in steps', 'at once'] as const) {
      const dir = mkdtempSync(join(context.workDir, 'snapshot-'));
      try {
        const run = await snapshotOnce(store, mode, dir);
        context.say(`snapshot: ${mode}: ${fmt(run.durationMs)} ms, `
          + `${fmt(run.snapshotBytes / MIB)} MiB, longest stall ${fmt(run.stallMsMax)} ms `
          + `(event-loop delay max ${fmt(run.loopDelayMsMax)} ms); longest GC `
          + `${fmt(run.gcMsMax)} ms (${run.gcKindOfMax}), GC inside the longest stall `
          + `${fmt(run.gcMsInLongestStall)} ms`);
        runs.push(run);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const restoreMs = measureRestore(store);
    context.say(`snapshot: restore (decode + rebuild) ${fmt(restoreMs)} ms`);
    const figures: SnapshotFigures = { suite: 'snapshot', keys: KEYS, valueBytes: VALUE_BYTES,
      runs, restoreMs, fillMs, loadAverage: [loadAtStart, loadavg()[0] ?? Number.NaN] };
    return { finalLine: finalLine(figures), figures, chartSvg: chart(figures) };
  },
};

function filledStore(keys: number): KvStore {
  const store = new KvStore(KV_STORE_DEFAULTS);
  const value = 'v'.repeat(VALUE_BYTES);
  for (let i = 1; i <= keys; i++) {
    store.apply(i, { kind: 'put', clientId: `bench-${i % 1000}`, sequence: i, nowMs: 1_000_000,
      key: `key/${String(i).padStart(8, '0')}`, value });
  }
  return store;
}

/**
 * One snapshot through a single-member RaftRuntime: it elects itself, applies one entry (the
 * state machine ignores it; the store is the one filled beforehand) and snapshots, since
 * snapshotEntries is 1. Resolves when the snapshot is durable. The election's no-op entry
 * triggers a snapshot too: it is waited out before the measured one starts.
 */
async function snapshotOnce(store: KvStore, mode: SnapshotRun['mode'],
  dir: string): Promise<SnapshotRun> {
  const id = nodeId('n1');
  const clock = new SystemClock();
  const storage = new FileStorage(join(dir, 'wal'));
  const opened = openWal(storage, WAL_DEFAULTS, {
    snapshotStorage: new FileStorage(join(dir, 'snap')),
    ...(mode === 'in steps' ? { yieldTurn: (next: () => void) => void setTimeout(next, 0) } : {}),
  });
  if ('error' in opened) throw new Error(opened.error.message);
  const stateMachine: StateMachine<undefined> = {
    apply: () => undefined,
    restore: () => undefined,
    ...(mode === 'in steps' ? { beginSnapshot: () => kvSnapshotSteps(store) }
      : { snapshot: () => encodeKvSnapshot(store.toSnapshot()) }),
  };
  let saved: ((event: SnapshotEvent) => void) | undefined;
  let savedCount = 0;
  const runtime = new RaftRuntime<undefined>({ ...RAFT_DEFAULTS_LAN, id, voters: [id] }, {
    clock, timer: clock, transport: silentTransport(id), storage: opened.wal, stateMachine,
    random: new SystemRandom(),
    onSnapshot: (event) => {
      if (event.kind !== 'saved') return;
      savedCount++;
      saved?.(event);
    },
  }, { ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: 1 });
  await until(() => runtime.status().role === 'leader', 'the single member never led');
  // The election's no-op entry applies at once and (snapshotEntries 1) starts a first
  // snapshot: wait for it to be durable, so the one measured is the proposal's, whole.
  await until(() => savedCount >= 1, 'the first snapshot (of the no-op entry) was never saved');
  const probe = stallProbe();
  const gc = gcRecorder();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const startMs = performance.now();
  const event = await new Promise<SnapshotEvent>((resolve) => {
    saved = resolve;
    runtime.propose(new Uint8Array([1]), () => undefined);
  });
  const durationMs = performance.now() - startMs;
  delay.disable();
  const stall = probe.stop();
  const collections = gc.stop();
  runtime.stop();
  const longest = collections.reduce<GcEntry | undefined>(
    (worst, entry) => (worst === undefined || entry.ms > worst.ms ? entry : worst), undefined);
  const stallEndMs = stall.atMs + stall.ms + 1;
  const gcMsInLongestStall = collections.reduce((sum, entry) => sum + Math.max(0,
    Math.min(stallEndMs, entry.startMs + entry.ms) - Math.max(stall.atMs, entry.startMs)), 0);
  return { mode, durationMs, stallMsMax: stall.ms, loopDelayMsMax: delay.max / 1e6,
    loopDelayMsP99: delay.percentile(99) / 1e6, snapshotBytes: event.sizeBytes,
    gcMsMax: longest?.ms ?? 0, gcKindOfMax: longest?.kind ?? 'none', gcMsInLongestStall };
}

interface GcEntry {
  readonly startMs: number;
  readonly ms: number;
  readonly kind: string;
}

const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Every garbage collection from now until `stop()` (its start on performance.now()'s scale). */
function gcRecorder(): { stop(): GcEntry[] } {
  const entries: GcEntry[] = [];
  const take = (list: readonly PerformanceEntry[]): void => {
    for (const entry of list) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      entries.push({ startMs: entry.startTime, ms: entry.duration,
        kind: GC_KINDS[kind ?? 0] ?? String(kind) });
    }
  };
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return { stop: () => {
    take(observer.takeRecords());
    observer.disconnect();
    return entries;
  } };
}

/**
 * A timer every millisecond; `stop()` returns the longest extra gap between two runs (`ms`) and
 * when that gap began (`atMs`, on performance.now()'s scale).
 */
function stallProbe(): { stop(): { ms: number; atMs: number } } {
  let last = performance.now();
  let worst = 0;
  let worstAt = last;
  const note = (now: number): void => {
    if (now - last - 1 > worst) {
      worst = now - last - 1;
      worstAt = last;
    }
    last = now;
  };
  const timer = setInterval(() => note(performance.now()), 1);
  return { stop: () => {
    clearInterval(timer);
    note(performance.now());
    return { ms: worst, atMs: worstAt };
  } };
}

function measureRestore(store: KvStore): number {
  const bytes = encodeKvSnapshot(store.toSnapshot());
  const startMs = performance.now();
  const decoded = decodeKvSnapshot(bytes);
  if ('kind' in decoded) throw new Error(decoded.reason);
  KvStore.fromSnapshot(decoded);
  return performance.now() - startMs;
}

function silentTransport(id: NodeId): Transport<RaftMessage> {
  return { localId: id, send: () => undefined, sendDatagram: () => undefined,
    setHandler: () => undefined, close: () => undefined };
}

/** Waits for `condition`, polling every 10 ms; fails naming `what` after 120 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const endMs = performance.now() + 120_000;
  while (!condition()) {
    if (performance.now() > endMs) throw new Error(what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function finalLine(f: SnapshotFigures): string {
  const [stepped, once] = f.runs;
  const stallRatio = ratio(stepped?.stallMsMax, once?.stallMsMax);
  return `snapshot of ${f.keys / 1e6} M keys (${fmt((stepped?.snapshotBytes ?? 0) / MIB)} MiB): `
    + `longest event-loop stall in steps ${fmt(stepped?.stallMsMax)} ms `
    + `(GC inside it ${fmt(stepped?.gcMsInLongestStall)} ms), at once `
    + `${fmt(once?.stallMsMax)} ms, steps/once ${fmt(stallRatio)}; `
    + `snapshot took ${fmt(stepped?.durationMs)} ms in steps, ${fmt(once?.durationMs)} ms at once; `
    + `restore ${fmt(f.restoreMs)} ms; load average `
    + `${fmt(f.loadAverage[0])}/${fmt(f.loadAverage[1])}`;
}

function chart(f: SnapshotFigures): string {
  const modes = f.runs.map((r) => r.mode);
  return barPanelsSvg({
    title: `snapshot: ${f.keys / 1e6} M keys of ${f.valueBytes} bytes, one process, fsync on`,
    subtitle: 'stall: the longest gap of a 1 ms timer while the snapshot runs',
    series: [{ name: 'conclave', colour: SYSTEM_COLOURS.conclave }],
    panels: [
      { title: 'longest event-loop stall (ms, lower is better)', categories: modes,
        values: { conclave: f.runs.map((r) => r.stallMsMax) } },
      { title: 'snapshot duration (ms)', categories: modes,
        values: { conclave: f.runs.map((r) => r.durationMs) } },
    ],
  });
}
