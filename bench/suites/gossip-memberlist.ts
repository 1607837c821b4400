/**
 * gossip --vs memberlist: Conclave's gossip membership and hashicorp/memberlist (Debian's
 * 0.2.2, driven by our bench/memberlist/main.go) side by side on this machine, in one run: N
 * real members of each on loopback (Conclave: 25 members per Node process, each with its own
 * UDP and TCP port; memberlist: one Go process), the same timings (Conclave's LOCAL profile,
 * memberlist configured to match), the same per-process datagram drop rate, the same kills.
 * The systems run one after the other, so neither steals the other's CPU.
 *
 * Per system: after the cluster formed, a quiet window, then K members closed one at a time
 * (no goodbye: memberlist Shutdown, Conclave close), each awaited until every live member
 * holds it dead. Measured from the members' own events: crash → first own suspicion, crash →
 * first death declaration, crash → dead everywhere, dissemination (everywhere − first
 * declaration), false deaths (lives of unkilled members ended) per member-hour, and
 * messages and bytes each member sent per second. Final line: both and their ratios.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SWIM_DEFAULTS_LOCAL, swimDeathDeclarationBoundMs, swimPushPullIntervalMs,
} from '../../dist/src/core/swim/index.js';
import type { BenchContext, SuiteOutcome } from '../lib/context.js';
import { GossipHosts, type MemberStats } from '../lib/gossip-hosts.js';
import { percentile, fmt, ratio } from '../lib/stats.js';
import { barPanelsSvg } from '../lib/bar-panels.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSTALL_SCRIPT = join(REPO_ROOT, 'scripts', 'install-memberlist.sh');
const GO_SOURCE = join(REPO_ROOT, 'bench', 'memberlist');
const CONCLAVE_HOST = join(REPO_ROOT, 'bench', 'gossip', 'member-host.ts');
/** Members per Conclave host process. */
const MEMBERS_PER_PROCESS = 25;
/** Quiet time after each kill's news reached everyone, before the next kill. Unit: ms. */
const KILL_GAP_MS = 3_000;

export type GossipSystem = 'conclave' | 'memberlist';

export interface KillSample {
  readonly victim: string;
  /** Kill → first own suspicion by any member. Unit: ms. */
  readonly firstSuspectMs: number | undefined;
  /** Kill → first member holding it dead. Unit: ms. */
  readonly firstDeadMs: number | undefined;
  /** Kill → every live member holds it dead. Unit: ms. */
  readonly everywhereMs: number;
}

export interface SystemFigures {
  readonly system: GossipSystem;
  readonly members: number;
  readonly kills: readonly KillSample[];
  readonly firstSuspectMsP50: number;
  readonly firstDeadMsP50: number;
  readonly everywhereMsP50: number;
  readonly everywhereMsMax: number;
  /** everywhere − first dead, per kill, p50. Unit: ms. */
  readonly disseminationMsP50: number;
  readonly memberHours: number;
  readonly falseDeadIncidents: number;
  readonly falseDeadViews: number;
  readonly falseDeadPerMemberHour: number;
  readonly messagesPerMemberPerS: number;
  readonly bytesPerMemberPerS: number;
  /** From the first start to every member seeing every other. Unit: ms. */
  readonly formedMs: number;
}

export async function gossipVsMemberlist(context: BenchContext): Promise<SuiteOutcome> {
  const members = context.options.gossipMembers;
  const loss = context.options.gossipLoss;
  const binary = buildMemberlistHost(context);
  const figures: SystemFigures[] = [];
  for (const system of ['conclave', 'memberlist'] as const) {
    context.say(`gossip --vs memberlist: ${system}, ${members} members, datagram loss ` +
      `${fmt(100 * loss)} %, ${context.options.kills} kills`);
    figures.push(await measure(system, context, binary));
    context.say(`gossip --vs memberlist: ${describe(figures.at(-1)!)}`);
  }
  const [conclave, memberlist] = figures as [SystemFigures, SystemFigures];
  return {
    finalLine: finalLine(conclave, memberlist, loss, context.options.kills),
    figures: { suite: 'gossip-memberlist', members, loss, conclave, memberlist,
      conclaveOverMemberlist: ratios(conclave, memberlist) },
    chartSvg: chart(conclave, memberlist),
    resultName: 'gossip-memberlist',
  };
}

/** Installs Go and memberlist with apt-get when missing, and builds the host program. */
function buildMemberlistHost(context: BenchContext): string {
  const install = spawnSync('bash', [INSTALL_SCRIPT], { encoding: 'utf8' });
  if (install.status !== 0) {
    throw new Error(`scripts/install-memberlist.sh failed:\n${install.stdout}${install.stderr}`);
  }
  context.say(install.stdout.trim().split('\n').at(-1) ?? 'memberlist installed');
  const binary = join(context.workDir, 'memberlist-host');
  context.say('gossip --vs memberlist: building bench/memberlist (go build, GO111MODULE=off)');
  const build = spawnSync('go', ['build', '-o', binary, '.'], {
    cwd: GO_SOURCE, encoding: 'utf8',
    env: { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off' },
  });
  if (build.status !== 0 || !existsSync(binary)) {
    throw new Error(`go build of bench/memberlist failed:\n${build.stdout}${build.stderr}`);
  }
  return binary;
}

async function measure(system: GossipSystem, context: BenchContext,
  binary: string): Promise<SystemFigures> {
  const n = context.options.gossipMembers;
  const hosts = new GossipHosts(context.processes, system);
  const startMs = Date.now();
  try {
    await startHosts(system, hosts, n, context.options.gossipLoss, binary);
    const formDeadlineMs = 60_000 + 500 * n;
    await hosts.until('every member admitted', formDeadlineMs,
      () => hosts.hosts.every((h) => h.ready));
    await hosts.until('every member sees every other', formDeadlineMs, () => hosts.converged());
    const formedMs = Date.now() - startMs;
    hosts.counting = true;
    const windowStartMs = Date.now();
    const before = await hosts.stats();
    await sleep(Math.max(context.options.windowMs, 30_000));
    const kills = await killSome(hosts, n, context.options.kills);
    const after = await hosts.stats();
    const seconds = (Date.now() - windowStartMs) / 1000;
    return figuresOf(system, n, kills, hosts, load(before, after, n, seconds), seconds, formedMs);
  } finally {
    for (const host of hosts.hosts) {
      if (host.process.child.exitCode === null) hosts.send(host, 'quit');
    }
    await Promise.all(hosts.hosts.map((h) => Promise.race([h.process.exited, sleep(5_000)])));
    await context.processes.stopAll(2_000);
  }
}

async function startHosts(system: GossipSystem, hosts: GossipHosts, n: number, loss: number,
  binary: string): Promise<void> {
  const c = SWIM_DEFAULTS_LOCAL;
  if (system === 'memberlist') {
    hosts.start('memberlist-host', binary, ['-members', String(n), '-drop', String(loss),
      '-prefix', 'g', '-probe-ms', String(c.probeIntervalMs),
      '-probe-timeout-ms', String(c.probeTimeoutMs), '-gossip-ms', String(c.gossipIntervalMs),
      '-gossip-nodes', String(c.gossipFanout), '-push-pull-ms', String(c.pushPullIntervalMs),
      '-gossip-to-the-dead-ms', String(c.gossipToTheDeadMs),
      '-indirect-checks', String(c.indirectChecks), '-suspicion-mult', String(c.suspicionMult),
      '-suspicion-max-timeout-mult', String(c.suspicionMaxTimeoutMult),
      '-retransmit-mult', String(c.retransmitMult), '-awareness-max', String(c.awarenessMax),
      '-join-spread-ms', String(20 * n)]);
    return;
  }
  const processes = Math.ceil(n / MEMBERS_PER_PROCESS);
  const names = Array.from({ length: n }, (_, i) => `c${String(i + 1).padStart(3, '0')}`);
  const common = ['--import', 'tsx', CONCLAVE_HOST, '--profile', 'local', '--drop', String(loss),
    '--cluster-name', 'bench-gossip-vs-memberlist'];
  const slice = (p: number): string => names.filter((_, i) => i % processes === p).join(',');
  hosts.start('conclave-host-1', process.execPath,
    [...common, '--names', slice(0), '--join-spread-ms', String(20 * n)]);
  await hosts.until('the first member listening', 60_000, () => hosts.addresses.has('c001'));
  const seed = hosts.addresses.get('c001')!;
  for (let p = 1; p < processes; p++) {
    hosts.start(`conclave-host-${p + 1}`, process.execPath,
      [...common, '--names', slice(p), '--seeds', seed, '--join-spread-ms', String(20 * n)]);
  }
}

/** Kills `count` members one at a time, spread over the member list, the seed's first. */
async function killSome(hosts: GossipHosts, n: number, count: number): Promise<KillSample[]> {
  const names = [...hosts.views.keys()].sort();
  const step = Math.max(1, Math.floor(names.length / count));
  // Generous: the bound on a crash's first declaration, plus time for everyone to hear it.
  const config = SWIM_DEFAULTS_LOCAL;
  const boundMs = swimDeathDeclarationBoundMs(config, n)
    + swimPushPullIntervalMs(config, n) + 30_000;
  const samples: KillSample[] = [];
  for (let k = 0; k < count && k * step + 1 < names.length; k++) {
    const victim = names[k * step + 1]!;
    const killedAtMs = hosts.kill([victim]);
    await hosts.until(`${victim} held dead by every live member`, boundMs,
      () => hosts.deadEverywhere(victim));
    const deadTimes = hosts.liveMembers.map((name) => hosts.deadAt.get(`${name}>${victim}`)!);
    const since = (t: number | undefined): number | undefined =>
      t === undefined ? undefined : t - killedAtMs;
    samples.push({
      victim,
      firstSuspectMs: since(hosts.firstSuspectSince(victim, killedAtMs)),
      firstDeadMs: since(Math.min(...deadTimes)),
      everywhereMs: Math.max(...deadTimes) - killedAtMs,
    });
    await sleep(KILL_GAP_MS);
  }
  return samples;
}

interface Load {
  readonly messagesPerMemberPerS: number;
  readonly bytesPerMemberPerS: number;
}

function load(before: readonly MemberStats[], after: readonly MemberStats[], n: number,
  seconds: number): Load {
  const sum = (rows: readonly MemberStats[], pick: (r: MemberStats) => number): number =>
    rows.reduce((s, r) => s + pick(r), 0);
  return {
    messagesPerMemberPerS: (sum(after, (r) => r.messages) - sum(before, (r) => r.messages))
      / n / seconds,
    bytesPerMemberPerS: (sum(after, (r) => r.bytes) - sum(before, (r) => r.bytes)) / n / seconds,
  };
}

function figuresOf(system: GossipSystem, n: number, kills: readonly KillSample[],
  hosts: GossipHosts, l: Load, seconds: number, formedMs: number): SystemFigures {
  const p50 = (values: readonly (number | undefined)[]): number => {
    const defined = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
    return defined.length === 0 ? Number.NaN : percentile(defined, 50);
  };
  const memberHours = (n * seconds) / 3600;
  return {
    system, members: n, kills,
    firstSuspectMsP50: p50(kills.map((k) => k.firstSuspectMs)),
    firstDeadMsP50: p50(kills.map((k) => k.firstDeadMs)),
    everywhereMsP50: p50(kills.map((k) => k.everywhereMs)),
    everywhereMsMax: Math.max(...kills.map((k) => k.everywhereMs)),
    disseminationMsP50: p50(kills.map((k) => k.everywhereMs - (k.firstDeadMs ?? 0))),
    memberHours,
    falseDeadIncidents: hosts.falseIncidents,
    falseDeadViews: hosts.falseDeaths.length,
    falseDeadPerMemberHour: hosts.falseIncidents / memberHours,
    ...l,
    formedMs,
  };
}

function ratios(a: SystemFigures, b: SystemFigures): Record<string, number> {
  return {
    firstSuspectMsP50: ratio(a.firstSuspectMsP50, b.firstSuspectMsP50),
    firstDeadMsP50: ratio(a.firstDeadMsP50, b.firstDeadMsP50),
    everywhereMsP50: ratio(a.everywhereMsP50, b.everywhereMsP50),
    disseminationMsP50: ratio(a.disseminationMsP50, b.disseminationMsP50),
    falseDeadPerMemberHour: ratio(a.falseDeadPerMemberHour, b.falseDeadPerMemberHour),
    messagesPerMemberPerS: ratio(a.messagesPerMemberPerS, b.messagesPerMemberPerS),
    bytesPerMemberPerS: ratio(a.bytesPerMemberPerS, b.bytesPerMemberPerS),
  };
}

function describe(f: SystemFigures): string {
  const s = (ms: number): string => fmt(ms / 1000);
  return `${f.system}: first suspect p50 ${s(f.firstSuspectMsP50)} s, first dead p50 ` +
    `${s(f.firstDeadMsP50)} s, dead everywhere p50 ${s(f.everywhereMsP50)} s (max ` +
    `${s(f.everywhereMsMax)} s), dissemination p50 ${s(f.disseminationMsP50)} s, false dead ` +
    `${f.falseDeadIncidents} (${fmt(f.falseDeadPerMemberHour)} per member-hour over ` +
    `${fmt(f.memberHours)} member-hours), ${fmt(f.messagesPerMemberPerS)} messages and ` +
    `${fmt(f.bytesPerMemberPerS)} B per member per s; formed in ${s(f.formedMs)} s`;
}

/** `gossip vs memberlist (...): detection ... (r×), ...` with Conclave/memberlist ratios. */
function finalLine(c: SystemFigures, m: SystemFigures, loss: number, kills: number): string {
  const s = (ms: number): string => fmt(ms / 1000);
  const pair = (label: string, a: number, b: number, unit: string, scale = 1): string =>
    `${label} ${fmt(a / scale)}${unit} vs ${fmt(b / scale)}${unit} (${fmt(ratio(a, b))}×)`;
  return `gossip vs memberlist (${c.members} real members each on loopback, LOCAL timings, ` +
    `datagram loss ${fmt(100 * loss)} %, ${kills} kills; Conclave vs memberlist, ratio ` +
    `Conclave/memberlist): ${pair('first suspect p50', c.firstSuspectMsP50, m.firstSuspectMsP50, ' s', 1000)}, ` +
    `${pair('first dead p50', c.firstDeadMsP50, m.firstDeadMsP50, ' s', 1000)}, ` +
    `${pair('dead everywhere p50', c.everywhereMsP50, m.everywhereMsP50, ' s', 1000)}, ` +
    `${pair('dissemination p50', c.disseminationMsP50, m.disseminationMsP50, ' s', 1000)}, ` +
    `false dead ${c.falseDeadIncidents} vs ${m.falseDeadIncidents} (` +
    `${fmt(c.falseDeadPerMemberHour)} vs ${fmt(m.falseDeadPerMemberHour)} per member-hour), ` +
    `${pair('bytes per member per s', c.bytesPerMemberPerS, m.bytesPerMemberPerS, '')}, ` +
    `${pair('messages per member per s', c.messagesPerMemberPerS, m.messagesPerMemberPerS, '')}` +
    ` (dead everywhere max ${s(c.everywhereMsMax)} vs ${s(m.everywhereMsMax)} s)`;
}

function chart(c: SystemFigures, m: SystemFigures): string {
  const values = (a: number, b: number): Record<string, readonly number[]> =>
    ({ conclave: [a], memberlist: [b] });
  return barPanelsSvg({
    title: `gossip vs memberlist: ${c.members} real members each on loopback`,
    subtitle: 'lower is better in every panel',
    series: [{ name: 'conclave', colour: '#2f6fb0' }, { name: 'memberlist', colour: '#9a9a9a' }],
    panels: [
      { title: 'kill → dead everywhere p50 (s)', categories: ['detection'],
        values: values(c.everywhereMsP50 / 1000, m.everywhereMsP50 / 1000) },
      { title: 'kill → first suspect p50 (s)', categories: ['suspect'],
        values: values(c.firstSuspectMsP50 / 1000, m.firstSuspectMsP50 / 1000) },
      { title: 'bytes per member per s', categories: ['load'],
        values: values(c.bytesPerMemberPerS, m.bytesPerMemberPerS) },
      { title: 'false dead per member-hour', categories: ['accuracy'],
        values: values(c.falseDeadPerMemberHour, m.falseDeadPerMemberHour) },
    ],
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
