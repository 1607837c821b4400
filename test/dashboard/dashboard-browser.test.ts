/**
 * dashboard: in a real browser (Debian's chromium driven by playwright-core), against one
 * `conclave dev` cluster shared by every test here:
 * - /ui shows every member live and names the leader;
 * - kill -9 of the leader: the page names the new leader and why its term started, within
 *   3 election timeouts (plus the page's own redraw and a loaded machine's slack);
 * - `conclave lock` and `conclave elect` held by processes: the page shows holder, leader and
 *   fencing tokens;
 * - a recorded `raft` seed of 5 nodes replays with every checker held;
 * - a recorded `gossip` seed of 32 members replays as a grid with standings and the leader;
 * - a recorded seed (raft-vote-restart, 5 nodes, seed 10, mutant voteNotPersisted) steps to the
 *   checker's verdict and shows the two leaders of the term the checker named;
 * - `conclave gossip --ui`: the membership tab shows both gossip members alive, then the
 *   kill -9'd one suspect or dead, with the suspicion on the timeline.
 * chromium is installed by scripts/install-chromium.sh when missing; where that cannot be done
 * the suite skips, saying so. CONCLAVE_SCREENSHOTS=DIR writes a screenshot of each tab there
 * (scripts/dashboard-screenshots.sh uses it for docs/images).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { clusterDeadlines, deadlineMs } from '../support/deadlines.js';
import type { SimRecording } from '../../src/sim/sim-recorder.js';
import { BIN, BUILT, waitFor } from '../support/real-cluster.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM = process.env['CONCLAVE_CHROMIUM'] ?? '/usr/bin/chromium';
const SCREENSHOTS = process.env['CONCLAVE_SCREENSHOTS'];
const ELECTION_TIMEOUT_MS = 1000;
const HEARTBEAT_MS = 100;
/** The page redraws the tab in view this often (web/main.ts). Unit: ms. */
const REDRAW_MS = 250;
/** Slack in the bound for a loaded 2-core machine (browser, 3 members). Unit: ms. */
const LOADED_SLACK_MS = 5000;
/** How long to wait (a failing run's time to fail): test/support/deadlines.ts. */
const DEADLINES = clusterDeadlines({ heartbeatMs: HEARTBEAT_MS,
  electionTimeoutMs: ELECTION_TIMEOUT_MS });
/**
 * From a kill -9 of the leader to a new leader on the page: an election timeout is drawn from
 * [T, 2T], and 3 of them cover a split vote or two; then the next sample and redraw.
 */
const NEW_LEADER_MS = 3 * 2 * ELECTION_TIMEOUT_MS + HEARTBEAT_MS + REDRAW_MS;
/**
 * From a kill -9 to its row turning DOWN: the serving member's link closes within a round trip,
 * or no frame came for 3 sample intervals (+500 ms, state.ts); then a redraw.
 */
const DOWN_SHOWN_MS = 3 * HEARTBEAT_MS + 500 + REDRAW_MS;

function chromiumProblem(): string | false {
  if (!BUILT) return 'dist/ not built (npm ci builds it)';
  if (existsSync(CHROMIUM)) return false;
  const install = spawnSync('bash', [join(ROOT, 'scripts', 'install-chromium.sh')],
    { encoding: 'utf8', timeout: 600_000 });
  if (install.status === 0 && existsSync(CHROMIUM)) return false;
  return `chromium cannot be installed here (scripts/install-chromium.sh: ${
    (install.stderr || install.stdout).trim().split('\n').pop() ?? 'failed'})`;
}

const skip = chromiumProblem();
const dataDir = mkdtempSync(join(tmpdir(), 'conclave-dashboard-'));
const children: ChildProcess[] = [];
let browser: BrowserContext | undefined;

interface Ready { endpoints: string[]; leader: string; dashboard: string;
  pids: Record<string, number> }

async function startDev(): Promise<Ready> {
  const basePort = 30_000 + (process.pid % 15_000) * 2;
  const dev = spawn(process.execPath, [BIN, 'dev', '--base-port', String(basePort),
    '--data-dir', dataDir, '--heartbeat-ms', String(HEARTBEAT_MS), '--election-timeout-ms',
    String(ELECTION_TIMEOUT_MS), '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(dev);
  let stdout = '';
  dev.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return waitFor(async () => {
    const line = stdout.split('\n').find((l) => l.includes('"ready"'));
    return line === undefined ? undefined : JSON.parse(line) as Ready;
  }, 60_000, 'the dev cluster\'s ready line');
}

/** A fresh profile each run (playwright passes it as --user-data-dir). */
const profileDir = mkdtempSync(join(tmpdir(), 'conclave-chromium-'));

async function launch(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1280, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A gossip member on loopback (port 0: the OS picks), fast local timings, JSON lines. */
function startMember(args: string[]): { child: ChildProcess; out(): string } {
  const child = spawn(process.execPath, [BIN, 'gossip', '--bind', '127.0.0.1:0', '--profile',
    'local', '--json', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, out: () => out };
}

async function shoot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS !== undefined) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** `conclave replay FILE` (stopped by pid at the end) opened in a new page. */
async function openReplay(file: string): Promise<Page> {
  const replay = spawn(process.execPath, [BIN, 'replay', file, '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(replay);
  let out = '';
  replay.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await waitFor(async () => /"url":"([^"]+)"/.exec(out)?.[1], 20_000, 'replay URL');
  const view = await browser!.newPage();
  await view.goto(url);
  return view;
}

async function openTab(page: Page, tab: string): Promise<void> {
  await page.click(`nav a[data-tab="${tab}"]`);
}

describe('dashboard: in a real browser', { skip }, () => {
  let ready: Ready;
  let page: Page;
  before(async () => {
    ready = await startDev();
    browser = await launch();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    // The dev cluster's members by pid too: SIGKILL of `conclave dev` leaves its members
    // running (reparented to pid 1), and they would hold their ports and data dirs.
    for (const pid of Object.values(ready?.pids ?? {})) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone (the leader killed by the test)
      }
    }
    for (const child of children) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profileDir, { recursive: true, force: true });
  });

  test('/ui shows every member live and names the leader', async () => {
    await page.goto(ready.dashboard);
    await page.waitForSelector('[data-testid="connection"]:text("live")');
    await waitFor(async () => await page.locator('tr[data-member]').count() === 3 || undefined,
      20_000, 'a row per member');
    await page.waitForSelector(`[data-testid="leader"]:text("${ready.leader}")`,
      { timeout: 20_000 });
    await shoot(page, 'cluster');
  });

  test('kill -9 of the leader: the page names the new leader and why, within 3 election ' +
    'timeouts', async () => {
    const old = ready.leader;
    await openTab(page, 'leadership');
    await page.waitForSelector(`td.leader:text("${old}")`, { timeout: 10_000 });
    // A second page on the cluster tab sees the row turn DOWN meanwhile: `conclave dev`
    // restarts a killed member within a second or two, and the row is DOWN only until then.
    const clusterPage = await browser!.newPage();
    await clusterPage.goto(`${ready.dashboard}#cluster`);
    await clusterPage.waitForSelector(`tr[data-member="${old}"]:not(.down)`,
      { timeout: deadlineMs(DOWN_SHOWN_MS) });
    const killedAtMs = performance.now();
    process.kill(ready.pids[old]!, 'SIGKILL');
    const downShown = clusterPage.waitForSelector(`tr.down[data-member="${old}"]`,
      { timeout: deadlineMs(DOWN_SHOWN_MS) }).then(() => shoot(clusterPage, 'cluster-down'));
    // The new leader's row: a term led by someone else, started by an election timeout.
    const row = page.locator('table.terms tbody tr').first();
    await waitFor(async () => {
      const leader = (await row.locator('td.leader').textContent())?.trim();
      return leader !== undefined && leader !== old && leader !== 'none' ? leader : undefined;
    }, DEADLINES.failoverMs, 'a new leader on the page');
    const elapsedMs = performance.now() - killedAtMs;
    const how = await row.locator('td.how').textContent();
    assert.match(how ?? '', /election timeout|link reset/);
    assert.ok(elapsedMs < NEW_LEADER_MS + LOADED_SLACK_MS,
      `the new leader showed after ${elapsedMs.toFixed(0)} ms`);
    // Why it moved: the old leader stopped answering. The line stays once it is back (dev
    // restarts it), so this waits only for the next redraw.
    await page.waitForSelector(`[data-outage="${old}"]:text("${old} stopped answering")`,
      { timeout: deadlineMs(2 * REDRAW_MS) });
    await shoot(page, 'leadership');
    await downShown;
    await clusterPage.close();
  });

  test('a lock held with `conclave lock` and an election held with `conclave elect` show ' +
    'their holder and fencing token', async () => {
    const endpoints = ready.endpoints.filter((_, i) => i !== 0 || ready.leader !== 'n1');
    const lock = spawn(process.execPath, [BIN, 'lock', 'nightly-report', '--id', 'reporter-1',
      '--endpoints', ready.endpoints.join(','), '--',
      process.execPath, '-e', 'console.log("token=" + process.env.CONCLAVE_FENCING_TOKEN); ' +
      'setTimeout(() => {}, 120000)'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(lock);
    assert.ok(endpoints.length > 0);
    let out = '';
    lock.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const token = await waitFor(async () => /token=(\d+)/.exec(out)?.[1], 30_000, 'the lock');
    await openTab(page, 'recipes');
    const row = page.locator('tr[data-recipe="lock/nightly-report"]');
    await row.waitFor({ timeout: 10_000 });
    await waitFor(async () => ((await row.locator('td.holder').textContent()) ?? '')
      .startsWith('reporter-1') ? true : undefined, 10_000, 'the holder');
    assert.equal((await row.locator('td.token').textContent())?.trim(), token);
    // An election held with `conclave elect`: its leader and fencing token on the same tab.
    const elect = spawn(process.execPath, [BIN, 'elect', 'report-scheduler', '--id', 'monitor-1',
      '--endpoints', ready.endpoints.join(',')], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(elect);
    let elected = '';
    elect.stdout!.on('data', (chunk: Buffer) => (elected += chunk.toString()));
    const electionToken = await waitFor(async () => /elected .*fencingToken=(\d+)/
      .exec(elected)?.[1], 30_000, 'the election');
    const election = page.locator('tr[data-recipe="election/report-scheduler"]');
    await election.waitFor({ timeout: 10_000 });
    await waitFor(async () => ((await election.locator('td.holder').textContent()) ?? '')
      .startsWith('monitor-1') ? true : undefined, 10_000, 'the election\'s leader');
    assert.equal((await election.locator('td.token').textContent())?.trim(), electionToken);
    await page.waitForSelector('div.lease', { timeout: 10_000 });
    await shoot(page, 'recipes');
    await openTab(page, 'keys');
    await page.waitForSelector('.key-list table');
    await shoot(page, 'keys');
    await openTab(page, 'throughput');
    await page.waitForSelector('[data-testid="rates-chart"] canvas');
    await shoot(page, 'throughput');
    lock.kill('SIGTERM');
    elect.kill('SIGTERM');
  });

  test('a recorded raft seed of 5 nodes replays: every node, and every checker held',
    async () => {
      const file = join(dataDir, 'raft-7.json');
      const sim = spawnSync(process.execPath, [BIN, 'sim', '--scenario', 'raft', '--nodes', '5',
        '--seed', '7', '--record', file], { encoding: 'utf8' });
      assert.equal(sim.status, 0, sim.stdout + sim.stderr);
      const view = await openReplay(file);
      await view.waitForSelector('[data-testid="replay-note"]:text("raft seed 7, 5 nodes")');
      await view.waitForSelector('[data-testid="replay-note"]:text("Every checker held")');
      await view.click('[data-testid="play"]');
      await waitFor(async () => await view.locator('li[data-term]').count() > 0 || undefined,
        20_000, 'a leader of some term while playing');
      await view.close();
    });

  test('a recorded seed steps to the checker\'s verdict: two leaders of one term', async () => {
    // The command of docs/dashboard.md: 5 nodes, the mutant, a seed that catches it.
    const file = join(dataDir, 'vote-restart.json');
    const sim = spawnSync(process.execPath, [BIN, 'sim', '--scenario', 'raft-vote-restart',
      '--nodes', '5', '--seed', '10', '--mutant', 'voteNotPersisted', '--record', file],
    { encoding: 'utf8' });
    assert.equal(sim.status, 1, sim.stdout + sim.stderr);
    const fired = new RegExp('VIOLATION election-safety at [\\d.]+ ms: ' +
      'two leaders in term (\\d+): (n\\d) and (n\\d)').exec(sim.stdout);
    assert.ok(fired, sim.stdout);
    const [, term, one, other] = fired;
    assert.match(sim.stdout, /recorded seed 10/);
    const view = await openReplay(file);
    await view.waitForSelector('[data-testid="replay-note"]:text("A checker fired")');
    // Scrub to the start, then step until the verdict shows, as a user pressing "step" would.
    await view.locator('[data-testid="scrub"]').fill('0');
    for (let i = 0; i < 500 && await view.locator('[data-testid="verdict"]').count() === 0; i++) {
      await view.click('[data-testid="step"]');
    }
    const verdict = view.locator('[data-testid="verdict"]');
    await verdict.waitFor();
    assert.match(await verdict.textContent() ?? '', /election-safety at [\d.]+ ms: two leaders/);
    // At that step the page lists both leaders under the one term the checker named.
    const twoLeaders = await view.locator(`li.two-leaders[data-term="${term}"]`).textContent();
    assert.match(twoLeaders ?? '', new RegExp(`term ${term}: (${one} and ${other}|${other} and ` +
      `${one}) — TWO LEADERS`));
    // And the stage draws both as leaders of that term at that instant (seed 10: the first,
    // cut off, has not yet stepped down when the second wins).
    assert.equal(await view.locator('svg.stage text.sub').allTextContents().then((texts) =>
      texts.filter((t) => t === `leader t${term}`).length), 2);
    await shoot(view, 'replay');
    await view.close();
  });

  test('a recorded gossip seed of 32 members replays: a grid, standings, the emergent leader',
    async () => {
      const file = join(dataDir, 'gossip-32.json');
      const sim = spawnSync(process.execPath, [BIN, 'sim', '--scenario', 'gossip', '--members',
        '32', '--seed', '3', '--record', file], { encoding: 'utf8' });
      assert.equal(sim.status, 0, sim.stdout + sim.stderr);
      const recording = JSON.parse(readFileSync(file, 'utf8')) as SimRecording;
      const view = await openReplay(file);
      await view.waitForSelector('[data-testid="replay-note"]:text("gossip seed 3, 32 nodes")');
      await view.waitForSelector('[data-testid="replay-note"]:text("Every checker held")');
      assert.equal(await view.locator('svg.stage circle.node').count(), 32);
      // Scrub to just after the first member another declared dead: it shows as dead or down.
      const dead = recording.events.find((e) => e.kind === 'member' && e.state === 'dead');
      assert.ok(dead !== undefined && dead.kind === 'member');
      await view.locator('[data-testid="scrub"]').fill(
        String(Math.ceil(1000 * dead.atMs / recording.simulatedMs)));
      await view.waitForSelector(`svg.stage circle[data-node="${dead.node}"].dead, ` +
        `svg.stage circle[data-node="${dead.node}"].down`);
      await view.waitForSelector('[data-testid="replay-standing"]');
      await view.waitForSelector('[data-testid="replay-leader"] li');
      await shoot(view, 'replay-gossip');
      await view.locator('[data-testid="scrub"]').fill('1000');
      await view.waitForSelector('[data-testid="replay-leader"] li.current:text("named by every ' +
        'member")');
      await view.close();
    });

  test('the gossip membership tab: members, states, and a kill -9 as a suspicion', async () => {
    const first = startMember(['--name', 'g1', '--ui', '127.0.0.1:0']);
    const url = await waitFor(async () => /"kind":"ui","url":"([^"]+)"/.exec(first.out())?.[1],
      20_000, 'the membership tab URL');
    const address = await waitFor(async () => /"address":"([^"]+)"/.exec(first.out())?.[1],
      20_000, 'g1 listening');
    const second = startMember(['--name', 'g2', '--seeds', address]);
    const view = await browser!.newPage();
    await view.goto(url);
    await view.waitForSelector('tr.alive[data-member="g2"]', { timeout: 20_000 });
    await view.waitForSelector('[data-testid="gossip-leader"]:text("g1")');
    process.kill(second.child.pid!, 'SIGKILL');
    // The local profile probes every 200 ms; suspicion and death follow within seconds.
    await view.waitForSelector('tr.suspect[data-member="g2"], tr.dead[data-member="g2"]',
      { timeout: 30_000 });
    await view.waitForSelector('div.event.suspect:has-text("g2")', { timeout: 10_000 });
    await shoot(view, 'membership');
    await view.close();
    first.child.kill('SIGTERM');
  });
});
