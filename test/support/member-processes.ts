/**
 * Real `conclave gossip --json` processes for tests (the built CLI, as users run it): each one's
 * JSON lines on stdout are collected, so a test can read its view (membership events, leader)
 * and, with `--metrics`, scrape its /metrics. Every wait is a condition with a deadline; every
 * process started is remembered so the test's `after` can kill it by pid (`killAll`).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { deadlineMs as loadedDeadlineMs, PROCESS_START_MS_IDLE } from './deadlines.js';
import { BIN } from './real-cluster.js';

/** One printed line: a membership event (or the 'listening' / 'metrics' line) with the time. */
export interface MemberLine {
  readonly kind: string;
  readonly time: string;
  readonly member?: string;
  readonly address?: string;
  readonly url?: string;
  readonly age?: number;
  readonly incarnation?: number;
  readonly reason?: string;
  readonly accusation?: string;
  readonly leader?: { readonly id: string; readonly generation: number };
}

/** Event kinds after which the member they name is live, or gone, in the printer's view. */
const LIVE_KINDS = new Set(['joined', 'alive', 'suspect']);
const GONE_KINDS = new Set(['dead', 'left']);

export class MemberProcess {
  readonly lines: MemberLine[] = [];
  stderr = '';
  exit: { code: number | null; signal: string | null } | undefined;
  private readonly child: ChildProcess;
  private partial = '';

  /** Starts `conclave gossip` on loopback (LOCAL profile) with `extraArgs` appended. */
  constructor(readonly name: string, seeds: readonly string[], clusterName: string,
    extraArgs: readonly string[] = []) {
    this.child = spawn(process.execPath, [BIN, 'gossip', '--name', name, '--bind', '127.0.0.1:0',
      '--seeds', seeds.join(','), '--profile', 'local', '--cluster-name', clusterName,
      '--json', ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.on('data', (chunk: Buffer) => this.onStdout(chunk.toString()));
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4000);
    });
    this.child.on('exit', (code, signal) => (this.exit = { code, signal }));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get address(): string | undefined {
    return this.lines.find((l) => l.kind === 'listening')?.address;
  }

  /** The URL of /metrics (with `--metrics`). */
  get metricsUrl(): string | undefined {
    return this.lines.find((l) => l.kind === 'metrics')?.url;
  }

  /** The leader in this member's view: the last leader-changed line. */
  get leader(): MemberLine['leader'] {
    return this.lines.filter((l) => l.kind === 'leader-changed').at(-1)?.leader;
  }

  joinedSelf(): boolean {
    return this.lines.some((l) => l.kind === 'joined' && l.member === this.name);
  }

  /** The members live in this member's view (from its events), sorted. */
  liveMembers(): string[] {
    const live = new Set<string>();
    for (const line of this.lines) {
      if (line.member === undefined) continue;
      if (LIVE_KINDS.has(line.kind)) live.add(line.member);
      else if (GONE_KINDS.has(line.kind)) live.delete(line.member);
    }
    return [...live].sort();
  }

  /** The ages this member printed for others when they joined (the last one wins). */
  ages(): Map<string, number> {
    const ages = new Map<string, number>();
    for (const line of this.lines) {
      if (line.kind === 'joined' && line.member !== undefined) ages.set(line.member, line.age ?? 0);
    }
    return ages;
  }

  /** Sends `signal` to the process by its pid, unless it has exited. */
  kill(signal: NodeJS.Signals): void {
    if (this.exit === undefined) this.child.kill(signal);
  }

  private onStdout(text: string): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const part of parts) {
      if (part.trim() !== '') this.lines.push(JSON.parse(part) as MemberLine);
    }
  }
}

/** Polls `condition` every 20 ms until it holds; fails naming `what()` after `deadlineMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>, deadlineMs: number, what: () => string,
): Promise<void> {
  const end = performance.now() + deadlineMs;
  while (!(await condition())) {
    if (performance.now() > end) throw new Error(`timed out after ${deadlineMs} ms: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Each member's leader, live members, exit and last stderr: for failure messages. */
export function views(members: readonly MemberProcess[]): string {
  return members.map((m) => `${m.name}: leader ${JSON.stringify(m.leader)} live `
    + `[${m.liveMembers().join(',')}]`
    + `${m.exit === undefined ? '' : ` exited ${JSON.stringify(m.exit)}`} ${m.stderr.slice(-300)}`)
    .join('\n');
}

/** Every member started by `launchMember`, for the test's `after` to kill by pid. */
export class MemberProcesses {
  readonly all: MemberProcess[] = [];

  constructor(private readonly clusterName: string) {}

  /** Starts one member and waits until it has joined (or bootstrapped). */
  async launch(name: string, seeds: readonly string[],
    extraArgs: readonly string[] = []): Promise<MemberProcess> {
    const member = new MemberProcess(name, seeds, this.clusterName, extraArgs);
    this.all.push(member);
    await waitUntil(() => member.joinedSelf() || member.exit !== undefined,
      loadedDeadlineMs(PROCESS_START_MS_IDLE),
      () => `${name} admitted\n${views([member])}`);
    assert.equal(member.exit, undefined, `${name} exited: ${member.stderr}`);
    return member;
  }

  /** Starts `names[0]` as the bootstrap member and the others through it, one at a time. */
  async launchCluster(names: readonly string[],
    extraArgs: readonly string[] = []): Promise<MemberProcess[]> {
    const first = await this.launch(names[0]!, [], extraArgs);
    const members = [first];
    for (const name of names.slice(1)) {
      members.push(await this.launch(name, [first.address!], extraArgs));
    }
    return members;
  }

  killAll(): void {
    for (const p of this.all) p.kill('SIGKILL');
  }
}

/** The oldest member among `ids` in `view`'s eyes: smallest age, then smallest id. */
export function oldest(view: MemberProcess, ids: readonly string[]): string {
  const ages = view.ages();
  const sorted = [...ids].sort((a, b) => (ages.get(a)! - ages.get(b)!) || (a < b ? -1 : 1));
  return sorted[0]!;
}
