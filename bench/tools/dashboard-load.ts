/**
 * What the dashboard costs under load (issue 19's figures): a 5-member `conclave dev` cluster
 * with 1,000 leases (each with a key) and a steady put rate; the CPU time of every member over
 * a window with no page open, then over the same window with one Chromium page open on the
 * first member's /ui/ (cycling through the tabs); and the page's frame times in that window
 * (longest requestAnimationFrame gap and long tasks, from inside the page).
 * Usage: node --import tsx bench/tools/dashboard-load.ts [--window-s 20] [--puts-per-s 500]
 * Needs the built CLI (npm run build) and /usr/bin/chromium. Prints one JSON object.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { connect } from '../../src/client/index.js';

const BIN = fileURLToPath(new URL('../../bin/conclave.js', import.meta.url));
const { values } = parseArgs({ options: {
  'window-s': { type: 'string', default: '20' }, 'puts-per-s': { type: 'string', default: '500' },
  leases: { type: 'string', default: '1000' }, 'base-port': { type: 'string', default: '34100' },
} });
const windowMs = Number(values['window-s']) * 1000;
const putsPerS = Number(values['puts-per-s']);
const TICKS_PER_S = 100;

/** CPU seconds (user + system) a process has used, from /proc/PID/stat. */
function cpuS(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'conclave-dashboard-load-'));
  const dev = spawn(process.execPath, [BIN, 'dev', '--nodes', '5', '--base-port',
    values['base-port']!, '--data-dir', dataDir, '--json'],
  { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const ready = await readyLine(dev.stdout!);
    const client = connect({ endpoints: ready.endpoints });
    const leaseCount = Number(values['leases']);
    for (let i = 0; i < leaseCount; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, leaseCount - i) }, async (_, j) => {
        const lease = await client.grantLease({ ttlMs: 600_000, autoKeepAlive: false });
        await client.kv.put(`svc/${i + j}`, 'up', { lease: lease.id });
      }));
    }
    const load = putLoad(client, putsPerS);
    const pids = Object.values(ready.pids);
    const idle = await cpuOver(pids, windowMs);
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu'] });
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(ready.dashboard);
    await page.waitForSelector('tr[data-member]');
    await page.evaluate(FRAME_PROBE);
    const tabs = ['cluster', 'leadership', 'recipes', 'keys', 'throughput'];
    const cycling = (async () => {
      for (let i = 0; i < 1000; i++) {
        await page.click(`nav a[data-tab="${tabs[i % tabs.length]}"]`);
        await new Promise((r) => setTimeout(r, 2000));
      }
    })().catch(() => undefined);
    const watched = await cpuOver(pids, windowMs);
    const frames = await page.evaluate('window.__frames');
    await browser.close();
    void cycling;
    const putsDone = load.stop();
    console.log(JSON.stringify({ windowS: windowMs / 1000, putsPerSAsked: putsPerS,
      putsPerSDone: putsDone / ((2 * windowMs) / 1000), leases: leaseCount,
      cpuPercentNoPage: idle, cpuPercentWithPage: watched,
      feedPercentOfACore: watched.map((w, i) => +(w - idle[i]!).toFixed(2)), frames }));
    await client.close();
  } finally {
    dev.kill('SIGTERM');
    await new Promise((r) => dev.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Injected into the page: longest gap between animation frames, and long tasks (> 50 ms). */
const FRAME_PROBE = `(() => {
  const f = window.__frames = { frames: 0, maxGapMs: 0, over50Ms: 0, over100Ms: 0, longTasks: 0,
    longestTaskMs: 0 };
  let last = performance.now();
  const tick = (now) => { const gap = now - last; last = now; f.frames++;
    f.maxGapMs = Math.max(f.maxGapMs, Math.round(gap)); if (gap > 50) f.over50Ms++;
    if (gap > 100) f.over100Ms++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => { for (const e of list.getEntries()) { f.longTasks++;
    f.longestTaskMs = Math.max(f.longestTaskMs, Math.round(e.duration)); } })
    .observe({ type: 'longtask', buffered: false });
})()`;

async function cpuOver(pids: number[], ms: number): Promise<number[]> {
  const before = pids.map(cpuS);
  await new Promise((r) => setTimeout(r, ms));
  return pids.map((pid, i) => +((100 * (cpuS(pid) - before[i]!)) / (ms / 1000)).toFixed(2));
}

function putLoad(client: ReturnType<typeof connect>, perS: number): { stop(): number } {
  let done = 0;
  let sequence = 0;
  const timer = setInterval(() => {
    for (let i = 0; i < perS / 50; i++) {
      void client.kv.put(`load/${sequence++ % 500}`, String(sequence)).then(() => done++, () => {});
    }
  }, 20);
  return { stop: () => {
    clearInterval(timer);
    return done;
  } };
}

interface Ready { endpoints: string[]; dashboard: string; pids: Record<string, number> }

function readyLine(stdout: NodeJS.ReadableStream): Promise<Ready> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('no ready line in 120 s')), 120_000);
    stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split('\n').find((l) => l.includes('"ready"'));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve(JSON.parse(line) as Ready);
      }
    });
  });
}

await main();
