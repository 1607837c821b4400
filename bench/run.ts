/**
 * The benchmark harness: `npm run bench -- <suite>... [--vs etcd]`. Each suite starts its own
 * clusters (real processes on loopback, fsync on), measures, stops every process it started by
 * pid, writes bench/results/<suite>.json and .svg, and prints one final line with both systems'
 * figures and their ratio. Progress goes to stderr, final lines to stdout. See bench/README.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  BENCH_DEFAULTS, FAILOVER_FAULTS, type BenchContext, type BenchOptions, type FailoverFault,
  type Reference,
} from './lib/context.js';
import { ensureBuilt, environment } from './lib/environment.js';
import { ensureEtcd } from './lib/etcd-cluster.js';
import { ProcessGroup } from './lib/processes.js';
import { RunProgress } from './lib/progress.js';
import type { SystemName } from './lib/wire.js';
import { LATER_SUITES, SUITES } from './suites/index.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * Time a stopping process gets between SIGTERM and SIGKILL. Unit: ms. Why 8 s: a Conclave leader
 * on SIGTERM first tries to hand leadership over, for up to 2 × its longest election timeout
 * (4 s at election 1000 ms), and its followers are stopping too; a SIGKILL before it exits
 * would lose its --cpu-prof profile.
 */
const STOP_GRACE_MS = 8_000;

const USAGE = `usage: npm run bench -- <suite>... [--vs etcd|memberlist] [options]

suites:
${[...SUITES.map((s) => `  ${s.name.padEnd(9)} ${s.summary}`),
  ...Object.entries(LATER_SUITES).map(([name, what]) => `  ${name.padEnd(9)} ${what}`)].join('\n')}

options:
  --vs etcd        also start a 3-member etcd cluster (installed with apt-get when missing)
                   and print Conclave/etcd ratios
  --vs memberlist  gossip only: N real members of Conclave and of hashicorp/memberlist
                   (Go and memberlist installed with apt-get when missing) through the same
                   loss, with Conclave/memberlist ratios
  --warmup-s S     warm-up before each window (default ${BENCH_DEFAULTS.warmupMs / 1000})
  --window-s S     measured window (default ${BENCH_DEFAULTS.windowMs / 1000};
                   the idle suite's default is ${BENCH_DEFAULTS.idleWindowMs / 1000})
  --inflight LIST  requests in flight for put (default ${BENCH_DEFAULTS.inflightLevels.join(',')})
  --kills N        leader kills (or pauses) per system and timing in failover
                   (default ${BENCH_DEFAULTS.kills})
  --fault F        how failover takes the leader out: kill (kill -9: sockets reset) or stop
                   (SIGSTOP: it goes silent, sockets open; results in failover-stop.json|svg)
                   (default ${BENCH_DEFAULTS.failoverFault})
  --members N      simulated members in gossip (default ${BENCH_DEFAULTS.gossipMembers};
                   with --vs memberlist: real members of each system, default 100;
                   gossip-processes: real members, default 100)
  --peer-tls       mutual TLS between peers of both systems (Conclave --peer-cert/-key/-ca,
                   etcd --peer-cert-file/--peer-key-file/--peer-trusted-ca-file and
                   --peer-client-cert-auth); put writes put-peer-tls.json|svg
  --auth           put, read: authentication on in both systems (a root user, auth enable),
                   every request with root's token; writes put-auth / read-auth.json|svg
  --loss P         gossip --vs memberlist: datagram loss ratio
                   (default ${BENCH_DEFAULTS.gossipLoss})
  --puts N         soak: puts in all, a multiple of 100000 (default ${BENCH_DEFAULTS.soakPuts})
  --out DIR        where results go (default bench/results)
  --keep-data      keep the members' data directories and logs
  --cpu-prof       run Conclave's servers under node --cpu-prof (profiles in <out>/profiles/)
  --json           print each suite's figures as one JSON line instead of its final line
                   (and no progress bar)
  -h, --help       this text

Each suite prints one final line; JSON and an SVG chart go to <out>/<suite>.json|svg.
On a terminal a progress bar shows the suite in progress, its steps and an ETA; Ctrl-C stops
every process the run started and prints the partial summary (suites done, steps measured).`;

interface Cli {
  readonly suites: readonly string[];
  readonly systems: readonly SystemName[];
  readonly reference: Reference | undefined;
  readonly options: BenchOptions;
  readonly outDir: string;
  readonly keepData: boolean;
  readonly cpuProfile: boolean;
  readonly json: boolean;
}

function parseCli(argv: readonly string[]): Cli | 'help' | string {
  const { values, positionals } = parseArgs({
    args: [...argv], allowPositionals: true, strict: true,
    options: {
      vs: { type: 'string' }, 'warmup-s': { type: 'string' }, 'window-s': { type: 'string' },
      inflight: { type: 'string' }, kills: { type: 'string' }, out: { type: 'string' },
      members: { type: 'string' }, fault: { type: 'string' }, loss: { type: 'string' },
      'keep-data': { type: 'boolean' }, 'cpu-prof': { type: 'boolean' },
      'peer-tls': { type: 'boolean' }, puts: { type: 'string' }, auth: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const problems: string[] = [];
  if (positionals.length === 0) problems.push('name a suite');
  for (const name of positionals) {
    if (name in LATER_SUITES) problems.push(`suite ${name} is planned but not written yet`);
    else if (!SUITES.some((s) => s.name === name)) problems.push(`no suite named ${name}`);
  }
  if (values.vs !== undefined && values.vs !== 'etcd' && values.vs !== 'memberlist') {
    problems.push(`--vs takes etcd or memberlist, not ${values.vs}`);
  }
  if (values.vs === 'memberlist' && positionals.some((name) => name !== 'gossip')) {
    problems.push('--vs memberlist compares the gossip suite only');
  }
  const reference = values.vs as Reference | undefined;
  const fault = values.fault ?? BENCH_DEFAULTS.failoverFault;
  if (!FAILOVER_FAULTS.includes(fault as FailoverFault)) {
    problems.push(`--fault takes ${FAILOVER_FAULTS.join(' or ')}, not ${fault}`);
  }
  const number = (flag: string, text: string | undefined, fallback: number,
    min: number): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value < min) {
      problems.push(`${flag} must be a number ≥ ${min}, not ${text}`);
    }
    return value;
  };
  const inflightLevels = values.inflight === undefined ? BENCH_DEFAULTS.inflightLevels
    : values.inflight.split(',').map((n) => number('--inflight', n, 1, 1));
  const windowMs =
    1000 * number('--window-s', values['window-s'], BENCH_DEFAULTS.windowMs / 1000, 0.5);
  const options: BenchOptions = {
    warmupMs: 1000 * number('--warmup-s', values['warmup-s'], BENCH_DEFAULTS.warmupMs / 1000, 0),
    windowMs,
    inflightLevels: inflightLevels.map(Math.round),
    kills: Math.round(number('--kills', values.kills, BENCH_DEFAULTS.kills, 1)),
    failoverFault: fault as FailoverFault,
    idleWindowMs: values['window-s'] === undefined ? BENCH_DEFAULTS.idleWindowMs : windowMs,
    // The gossip scenario's own bounds: at least 8 members, at most 5,000.
    // Real members (--vs memberlist, gossip-processes) default to 100; simulated ones to 1,000.
    gossipMembers: Math.round(number('--members', values.members,
      reference === 'memberlist' || positionals.every((name) => name === 'gossip-processes')
        ? 100 : BENCH_DEFAULTS.gossipMembers, 8)),
    gossipLoss: number('--loss', values.loss, BENCH_DEFAULTS.gossipLoss, 0),
    peerTls: values['peer-tls'] === true,
    soakPuts: number('--puts', values.puts, BENCH_DEFAULTS.soakPuts, 100_000),
    auth: values.auth === true,
  };
  if (options.soakPuts % 100_000 !== 0) problems.push('--puts must be a multiple of 100000');
  if (options.gossipLoss >= 0.9) problems.push('--loss must be below 0.9');
  if (problems.length > 0) return problems.join('; ');
  return {
    suites: positionals,
    systems: values.vs === 'etcd' ? ['conclave', 'etcd'] : ['conclave'],
    reference,
    options,
    outDir: resolve(values.out ?? join(REPO_ROOT, 'bench', 'results')),
    keepData: values['keep-data'] === true,
    cpuProfile: values['cpu-prof'] === true,
    json: values.json === true,
  };
}

async function main(argv: readonly string[]): Promise<number> {
  let cli: Cli | 'help' | string;
  try {
    cli = parseCli(argv);
  } catch (error) {
    cli = error instanceof Error ? error.message : String(error);
  }
  if (cli === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (typeof cli === 'string') {
    process.stderr.write(`bench: ${cli}\n\n${USAGE}\n`);
    return 2;
  }
  return runSuites(cli);
}

async function runSuites(cli: Cli): Promise<number> {
  const progress = new RunProgress(cli.suites.length, !cli.json);
  const say = (line: string): void => progress.say(`bench: ${line}`);
  ensureBuilt(REPO_ROOT, say);
  const etcdVersion = cli.systems.includes('etcd') ? ensureEtcd(say) : undefined;
  const processes = new ProcessGroup();
  const workDir = mkdtempSync(join(tmpdir(), 'conclave-bench-'));
  const cleanUp = (): void => {
    processes.killAllNow();
    if (!cli.keepData) rmSync(workDir, { recursive: true, force: true });
  };
  const interrupted = (signal: NodeJS.Signals): void => {
    progress.stop();
    say(`${signal}: stopping every process this run started`);
    cleanUp();
    const partial = progress.partialSummary();
    process.stdout.write(cli.json ? `${JSON.stringify({ interrupted: true, partial })}\n`
      : `${partial.join('\n')}\n`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  process.once('exit', () => processes.killAllNow());
  const cpuProfileDir = cli.cpuProfile ? join(cli.outDir, 'profiles') : undefined;
  const context: BenchContext = {
    processes, workDir, systems: cli.systems, reference: cli.reference, options: cli.options,
    cpuProfileDir, say, progress,
  };
  mkdirSync(cli.outDir, { recursive: true });
  try {
    for (const name of cli.suites) await runSuite(cli, context, progress, name, etcdVersion);
    return 0;
  } catch (error) {
    say(`failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    return 1;
  } finally {
    progress.stop();
    await processes.stopAll(STOP_GRACE_MS);
    if (cli.keepData) say(`data and logs kept in ${workDir}`);
    cleanUp();
  }
}

/** One suite: run it, write its JSON and SVG, print its final line (or its JSON). */
async function runSuite(cli: Cli, context: BenchContext, progress: RunProgress, name: string,
  etcdVersion: string | undefined): Promise<void> {
  const suite = SUITES.find((s) => s.name === name)!;
  const before = environment(REPO_ROOT, context.workDir, etcdVersion);
  progress.startSuite(name);
  const outcome = await suite.run(context);
  const json = {
    ...(outcome.figures as object), finalLine: outcome.finalLine, environment: before,
  };
  const file = outcome.resultName ?? name;
  writeFileSync(join(cli.outDir, `${file}.json`), `${JSON.stringify(json, undefined, 2)}\n`);
  writeFileSync(join(cli.outDir, `${file}.svg`), outcome.chartSvg);
  progress.endSuite(outcome.finalLine);
  context.say(`${name}: wrote ${join(cli.outDir, `${file}.json`)} and ${file}.svg`);
  process.stdout.write(cli.json ? `${JSON.stringify(json)}\n` : `${outcome.finalLine}\n`);
}

// Exit at once: every process is stopped, and no idle keep-alive socket should hold the run open.
process.exit(await main(process.argv.slice(2)));
