/**
 * The dashboard page under load, seen from Chromium (Debian's, driven by playwright-core): one
 * page open on a member's /ui/, clicking through the tabs, while Chromium records a performance
 * trace (CDP Tracing) and the page itself records the gaps between animation frames and its long
 * tasks (PerformanceObserver `longtask`). What the trace says is the figure; the in-page probe
 * is its cross-check.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { sleep } from '../lib/processes.js';

const CHROMIUM = process.env['CONCLAVE_CHROMIUM'] ?? '/usr/bin/chromium';
const INSTALL = fileURLToPath(new URL('../../scripts/install-chromium.sh', import.meta.url));
/** The tabs of a live cluster, in the order the page lists them. */
const TABS = ['cluster', 'leadership', 'recipes', 'keys', 'throughput'] as const;
/** A main-thread task or a gap between frames longer than this is a visible stall. Unit: ms. */
export const STALL_MS = 100;
/** Chromium's own threshold for a long task (PerformanceObserver `longtask`). Unit: ms. */
const LONG_TASK_MS = 50;

export interface PageFigures {
  /** The page's window. Unit: ms. */
  readonly windowMs: number;
  /** From the trace: main-thread tasks of the page's renderer. */
  readonly trace: {
    readonly tasks: number;
    readonly tasksOver50Ms: number;
    /** Tasks longer than STALL_MS by the wall clock (a descheduled renderer counts too). */
    readonly tasksOverStallMs: number;
    /** Tasks whose own thread CPU time (the trace's `tdur`) is over STALL_MS. */
    readonly tasksOverStallMsByCpu: number;
    /** Unit: ms. */
    readonly longestTaskMs: number;
    /** The largest thread CPU time of one task. Unit: ms. */
    readonly longestTaskCpuMs: number;
    /**
     * Inside the tasks over 50 ms: the time of the events they contain, by name, the 6
     * largest (nested events count in each of their parents). Unit: ms.
     */
    readonly insideLongTasksMs: Readonly<Record<string, number>>;
  };
  /** From inside the page: animation frames and long tasks. */
  readonly probe: {
    readonly frames: number;
    /** Unit: ms. */
    readonly longestFrameGapMs: number;
    readonly frameGapsOverStallMs: number;
    readonly longTasks: number;
    /** Unit: ms. */
    readonly longestLongTaskMs: number;
  };
  readonly tabsShown: number;
}

/** Launches Chromium, installing it with apt-get first when it is missing. */
export async function launchChromium(say: (line: string) => void): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    say(`dashboard: ${CHROMIUM} missing; running scripts/install-chromium.sh`);
    const install = spawnSync('bash', [INSTALL], { encoding: 'utf8', timeout: 600_000 });
    if (install.status !== 0 || !existsSync(CHROMIUM)) {
      throw new Error(`chromium cannot be installed here: ${install.stderr || install.stdout}`);
    }
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
}

/**
 * Opens `url` in a fresh page, waits until it is live with every member listed, then over
 * `windowMs` cycles the tabs every `tabMs` under a trace. `during` runs alongside the window
 * (the caller measures the members' CPU there). The page is closed at the end.
 */
export async function watchPage(browser: Browser, url: string, members: number,
  windowMs: number, during: () => Promise<void>): Promise<PageFigures> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  try {
    await page.goto(url);
    await page.waitForSelector('[data-testid="connection"]:text("live")', { timeout: 30_000 });
    await page.waitForFunction(`document.querySelectorAll('tr[data-member]').length >= ${members}`,
      undefined, { timeout: 30_000 });
    await page.evaluate(FRAME_PROBE);
    await browser.startTracing(page, { categories: TRACE_CATEGORIES });
    const startMs = performance.now();
    const [tabsShown] = await Promise.all([cycleTabs(page, windowMs), during()]);
    const windowRealMs = performance.now() - startMs;
    const trace = JSON.parse((await browser.stopTracing()).toString('utf8')) as Trace;
    const probe = await page.evaluate('window.__frames') as PageFigures['probe'];
    return { windowMs: windowRealMs, trace: mainThreadTasks(trace), probe, tabsShown };
  } finally {
    await page.close();
  }
}

/** Clicks through the tabs, `windowMs / 10` on each (so each tab shows twice). */
async function cycleTabs(page: Page, windowMs: number): Promise<number> {
  const tabMs = Math.max(250, windowMs / (2 * TABS.length));
  const endMs = performance.now() + windowMs;
  let shown = 0;
  while (performance.now() + tabMs <= endMs + 1) {
    await page.click(`nav a[data-tab="${TABS[shown % TABS.length]}"]`);
    shown++;
    await sleep(tabMs);
  }
  return shown;
}

/** devtools.timeline gives the renderer's RunTask events, the "Task" rows of DevTools. */
const TRACE_CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline',
  'toplevel'];

interface TraceEvent {
  readonly name: string;
  readonly ph: string;
  readonly pid: number;
  readonly tid: number;
  readonly ts: number;
  readonly dur?: number;
  readonly tdur?: number;
  readonly args?: { readonly name?: string };
}
interface Trace { readonly traceEvents: readonly TraceEvent[] }

/** The renderer main threads' top-level tasks (RunTask), their count and the longest. */
export function mainThreadTasks(trace: Trace): PageFigures['trace'] {
  const mainThreads = new Set(trace.traceEvents
    .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
    .map((e) => `${e.pid}/${e.tid}`));
  const onMain = trace.traceEvents
    .filter((e) => e.ph === 'X' && mainThreads.has(`${e.pid}/${e.tid}`));
  const tasks = onMain.filter((e) => e.name === 'RunTask');
  const wallMs = tasks.map((e) => (e.dur ?? 0) / 1000);
  const cpuMs = tasks.map((e) => (e.tdur ?? e.dur ?? 0) / 1000);
  return {
    tasks: tasks.length,
    tasksOver50Ms: wallMs.filter((ms) => ms > LONG_TASK_MS).length,
    tasksOverStallMs: wallMs.filter((ms) => ms > STALL_MS).length,
    tasksOverStallMsByCpu: cpuMs.filter((ms) => ms > STALL_MS).length,
    longestTaskMs: Math.round(Math.max(0, ...wallMs)),
    longestTaskCpuMs: Math.round(Math.max(0, ...cpuMs)),
    insideLongTasksMs: insideLongTasks(tasks, onMain),
  };
}

/** What the long tasks were doing: the events inside them, by name, the largest first. */
function insideLongTasks(tasks: readonly TraceEvent[], onMain: readonly TraceEvent[]):
  Record<string, number> {
  const long = tasks.filter((e) => (e.dur ?? 0) / 1000 > LONG_TASK_MS);
  const byName = new Map<string, number>();
  for (const task of long) {
    const endUs = task.ts + (task.dur ?? 0);
    for (const e of onMain) {
      if (e.name === 'RunTask' || e.pid !== task.pid || e.tid !== task.tid) continue;
      if (e.ts < task.ts || e.ts >= endUs) continue;
      byName.set(e.name, (byName.get(e.name) ?? 0) + (e.dur ?? 0) / 1000);
    }
  }
  return Object.fromEntries([...byName].sort((x, y) => y[1] - x[1]).slice(0, 6)
    .map(([name, ms]) => [name, Math.round(ms)]));
}

/** Injected into the page: gaps between animation frames, and long tasks (> 50 ms). */
const FRAME_PROBE = `(() => {
  const f = window.__frames = { frames: 0, longestFrameGapMs: 0, frameGapsOverStallMs: 0,
    longTasks: 0, longestLongTaskMs: 0 };
  let last = performance.now();
  const tick = (now) => { const gap = now - last; last = now; f.frames++;
    f.longestFrameGapMs = Math.max(f.longestFrameGapMs, Math.round(gap));
    if (gap > ${STALL_MS}) f.frameGapsOverStallMs++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => { for (const e of list.getEntries()) { f.longTasks++;
    f.longestLongTaskMs = Math.max(f.longestLongTaskMs, Math.round(e.duration)); } })
    .observe({ type: 'longtask', buffered: false });
})()`;
