/**
 * The stall probe: a Node process that does what a lease holder's StallWatch does — a timer
 * every `tickIntervalMs` — and records how late each tick fired. Optionally it also lives like
 * a busy service: a heap of `retainedMb` kept alive and `garbageMbPerS` of short-lived objects
 * made in small batches every few ms, so its own GC pauses (young and full) count too. Reports
 * the figures to the harness over IPC and exits.
 *
 * Run by the stall suite as: node --import tsx bench/lib/stall-probe.ts '<StallProbeOptions JSON>'
 */
import { LatencyRecorder, type LatencySummary } from './stats.js';

export interface StallProbeOptions {
  /** Unit: ms. The client's StallWatch ticks every 100 ms (STALL_TICK_INTERVAL_MS). */
  readonly tickIntervalMs: number;
  /** How long to tick. Unit: ms. */
  readonly durationMs: number;
  /** Short-lived objects made per second, in batches every 5 ms. Unit: MB/s. 0: none. */
  readonly garbageMbPerS: number;
  /** Objects kept alive for the whole run (what full GCs must mark). Unit: MB. 0: none. */
  readonly retainedMb: number;
  /** Latenesses above each of these count separately (the margins a user might choose). */
  readonly thresholdsMs: readonly number[];
}

export interface StallProbeResult {
  readonly lateness: LatencySummary;
  /** Ticks later than each threshold, in the order given. */
  readonly overThreshold: readonly number[];
  readonly ticks: number;
}

/** About how many bytes one small object below takes on V8's heap. */
const OBJECT_BYTES = 64;
const GARBAGE_BATCH_MS = 5;

function makeObjects(count: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) out.push({ i, next: undefined, tag: 'x' });
  return out;
}

async function main(options: StallProbeOptions): Promise<void> {
  const retained = makeObjects((options.retainedMb * 1e6) / OBJECT_BYTES);
  const perBatch = (options.garbageMbPerS * 1e6 * GARBAGE_BATCH_MS / 1000) / OBJECT_BYTES;
  let garbage: unknown[] = [];
  const churn = perBatch > 0
    ? setInterval(() => (garbage = makeObjects(perBatch)), GARBAGE_BATCH_MS) : undefined;
  const recorder = new LatencyRecorder();
  const over = options.thresholdsMs.map(() => 0);
  const endMs = performance.now() + options.durationMs;
  let dueMs = performance.now() + options.tickIntervalMs;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const nowMs = performance.now();
      const lateMs = Math.max(0, nowMs - dueMs);
      recorder.record(lateMs);
      options.thresholdsMs.forEach((t, i) => { if (lateMs > t) over[i]!++; });
      if (nowMs >= endMs) return resolve();
      dueMs = nowMs + options.tickIntervalMs;
      setTimeout(tick, options.tickIntervalMs);
    };
    setTimeout(tick, options.tickIntervalMs);
  });
  clearInterval(churn);
  void garbage;
  void retained.length;
  const result: StallProbeResult = { lateness: recorder.summary(), overThreshold: over,
    ticks: recorder.size };
  process.send!({ kind: 'done', result }, undefined, {}, () => process.exit(0));
}

if (process.send === undefined) {
  process.stderr.write('stall-probe: run me from the stall suite (no IPC channel)\n');
  process.exit(2);
}
await main(JSON.parse(process.argv[2] ?? '{}') as StallProbeOptions);
