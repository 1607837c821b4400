/**
 * stall: how late a Node timer fires on this machine, idle and under CPU load, which is what a
 * lock or leadership holder's margin must cover (docs/elections.md, "Sizing the margin"). A
 * probe process ticks a 100 ms timer, as the client's StallWatch does, for a window per load
 * level: no extra load, then as many busy-loop processes as cores, then twice that; each level
 * once quiet and once living like a busy service (256 MB of live heap, 20 MB/s of garbage), so
 * its own GC pauses count.
 * Reported: lateness p50/p99/p99.9/max, and ticks later than 100/250/500/1000 ms per hour —
 * each of those is a leadership the client would give up at that margin. The reference is
 * the same probe on the same machine with no load (ratios against it).
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { barPanelsSvg } from '../lib/bar-panels.js';
import type { BenchContext, Suite, SuiteOutcome } from '../lib/context.js';
import type { StallProbeOptions, StallProbeResult } from '../lib/stall-probe.js';
import { fmt } from '../lib/stats.js';

const PROBE = fileURLToPath(new URL('../lib/stall-probe.ts', import.meta.url));
const TICK_INTERVAL_MS = 100;
/** Margins a holder might choose; 500 ms is the client's default (leaseMarginMs). */
const THRESHOLDS_MS = Object.freeze([100, 250, 500, 1000]);
/** A window shorter than this has too few ticks for a p99.9. Unit: ms. */
const WINDOW_MS_MIN = 30_000;
/** The "+ GC" levels: like a busy service holding a lock. */
const GARBAGE_MB_PER_S = 20;
const RETAINED_MB = 256;

export interface StallLevel {
  readonly burners: number;
  /** Whether the probe lived like a busy service (GARBAGE_MB_PER_S, RETAINED_MB). */
  readonly gc: boolean;
  readonly result: StallProbeResult;
  /** Ticks later than each threshold, per hour of ticking. */
  readonly overPerHour: readonly number[];
}

export const stallSuite: Suite = {
  name: 'stall',
  summary: 'timer lateness of a 100 ms tick (the lease holder\'s stall check), idle and loaded',
  async run(context: BenchContext): Promise<SuiteOutcome> {
    const cores = availableParallelism();
    const windowMs = Math.max(context.options.windowMs, WINDOW_MS_MIN);
    const levels: StallLevel[] = [];
    context.progress.plan(6);
    for (const burners of [0, cores, 2 * cores]) {
      for (const gc of [false, true]) {
        const level = await measureLevel(context, { burners, gc, windowMs });
        context.progress.step(`stall: ${describe(level)}`);
        levels.push(level);
      }
    }
    const figures = { suite: 'stall', tickIntervalMs: TICK_INTERVAL_MS, windowMs, cores,
      thresholdsMs: THRESHOLDS_MS, levels };
    return { finalLine: finalLine(levels, windowMs), figures, chartSvg: chart(levels) };
  },
};

async function measureLevel(context: BenchContext, level: { burners: number; gc: boolean;
  windowMs: number }): Promise<StallLevel> {
  const burners = Array.from({ length: level.burners }, (_, i) =>
    context.processes.spawn(`burner ${i}`, process.execPath, ['-e', 'for (;;) {}'],
      { stdio: 'ignore' }));
  try {
    const options: StallProbeOptions = { tickIntervalMs: TICK_INTERVAL_MS,
      durationMs: level.windowMs, garbageMbPerS: level.gc ? GARBAGE_MB_PER_S : 0,
      retainedMb: level.gc ? RETAINED_MB : 0, thresholdsMs: THRESHOLDS_MS };
    const probe = context.processes.spawn('stall probe', process.execPath,
      ['--import', 'tsx', PROBE, JSON.stringify(options)], { stdio: ['ignore', 'inherit',
        'inherit', 'ipc'] });
    const result = await new Promise<StallProbeResult>((resolve, reject) => {
      probe.child.once('message', (m: { kind: 'done'; result: StallProbeResult }) =>
        resolve(m.result));
      probe.child.once('exit', (code) => reject(new Error(`stall probe exited ${code}`)));
    });
    const hours = (result.ticks * TICK_INTERVAL_MS) / 3_600_000;
    return { burners: level.burners, gc: level.gc, result,
      overPerHour: result.overThreshold.map((n) => n / hours) };
  } finally {
    await Promise.all(burners.map((b) => context.processes.kill9(b)));
  }
}

function label(level: StallLevel): string {
  const load = level.burners === 0 ? 'no load' : `${level.burners} burners`;
  return level.gc ? `${load} + GC` : load;
}

function describe(level: StallLevel): string {
  const l = level.result.lateness;
  return `${label(level)}: late p50 ${fmt(l.p50Ms)} p99 ${fmt(l.p99Ms)} p99.9 ${fmt(l.p999Ms)} ` +
    `max ${fmt(l.maxMs)} ms; over ${THRESHOLDS_MS.join('/')} ms per hour ` +
    level.overPerHour.map(fmt).join('/');
}

/** `stall (...): no load p99.9/max a/b ms, ...; over 500 ms per hour ...; p99.9 vs no load x` */
function finalLine(levels: readonly StallLevel[], windowMs: number): string {
  const idle = levels[0]!.result.lateness.p999Ms;
  const margin = THRESHOLDS_MS.indexOf(500);
  const parts = levels.map((l) => `${label(l)} ${fmt(l.result.lateness.p999Ms)}/` +
    `${fmt(l.result.lateness.maxMs)}`);
  const over = levels.map((l) => fmt(l.overPerHour[margin]));
  const vsIdle = levels.map((l) => fmt(l.result.lateness.p999Ms / Math.max(idle, 0.001)));
  return `stall (${TICK_INTERVAL_MS} ms tick, ${windowMs / 1000} s per level): lateness ` +
    `p99.9/max ms ${parts.join(', ')}; ticks over the 500 ms default margin per hour ` +
    `${over.join('/')}; p99.9 / no load ${vsIdle.join('/')}`;
}

function chart(levels: readonly StallLevel[]): string {
  const categories = levels.map(label);
  return barPanelsSvg({
    title: 'Timer lateness of a 100 ms tick (the holder\'s stall check)',
    subtitle: 'one probe process; busy-loop burners beside it; "+ GC": 256 MB live heap, 20 MB/s garbage',
    series: [{ name: 'lateness', colour: '#3b7dd8' }],
    panels: [
      { title: 'p99.9 lateness, ms (lower is better)', categories,
        values: { lateness: levels.map((l) => l.result.lateness.p999Ms) } },
      { title: 'max lateness, ms (lower is better)', categories,
        values: { lateness: levels.map((l) => l.result.lateness.maxMs) } },
      { title: 'ticks over 500 ms per hour (false losses)', categories,
        values: { lateness: levels.map((l) => l.overPerHour[THRESHOLDS_MS.indexOf(500)]) } },
    ],
  });
}
