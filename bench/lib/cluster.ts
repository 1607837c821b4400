/**
 * A 3-member cluster of one system under test, as real processes on loopback: start, wait until
 * healthy, find the leader, kill -9 a member, restart it, pause and resume it (SIGSTOP, SIGCONT),
 * read each member's CPU, stop. The system-specific parts (command line, status endpoint) are
 * in conclave-cluster.ts and etcd-cluster.ts; everything else is shared so both systems are
 * handled the same way.
 */
import * as http from 'node:http';
import { mkdirSync, openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { get, post, type HttpAnswer } from './http.js';
import {
  cpuMsOf, freePorts, waitFor, type ProcessGroup, type TrackedProcess,
} from './processes.js';
import type { LeaderView, SystemName } from './wire.js';

export interface ClusterTiming {
  /** Leader heartbeat interval. Unit: ms. */
  readonly heartbeatMs: number;
  /** Election timeout (both systems draw each timeout from [T, 2T)). Unit: ms. */
  readonly electionTimeoutMs: number;
}

export interface BenchMember {
  /** n1..n3 for Conclave, e1..e3 for etcd. */
  readonly name: string;
  readonly clientHostPort: string;
  readonly peerHostPort: string;
  readonly dataDir: string;
  readonly logFile: string;
  process: TrackedProcess | undefined;
  /** The id the system reports for this member in its status (learned from the member). */
  reportedId: string | undefined;
}

export interface ClusterComponents {
  readonly processes: ProcessGroup;
  /** This cluster's own directory: members' data and logs (on disk: fsync costs what it costs). */
  readonly workDir: string;
  /** When set, Conclave's servers run under `node --cpu-prof` and write profiles here. */
  readonly cpuProfileDir?: string | undefined;
  /**
   * When set, peers talk mutual TLS with certificates made in this directory (bench/lib/
   * bench-certs.ts): Conclave's --peer-cert/--peer-key/--peer-ca, etcd's --peer-*-file flags.
   */
  readonly peerCertsDir?: string | undefined;
  /** More server flags, appended to every member's command line (e.g. `--snapshot-count`). */
  readonly serverArgs?: readonly string[];
}

/** How long a cluster may take to start or to settle after a restart. Unit: ms. */
const HEALTHY_DEADLINE_MS = 30_000;
const STOP_GRACE_MS = 3_000;
/**
 * The same under --cpu-prof. Unit: ms. A profiled process writes its profile as it exits; in
 * two read runs on a loaded machine (load average ~18) the leader's profile (the busiest
 * member's) was missing and the followers' were there: a SIGKILL 3 s after the SIGTERM is the
 * likely cause (not yet confirmed by a run with this longer grace).
 */
const PROFILE_STOP_GRACE_MS = 30_000;

export abstract class BenchCluster {
  abstract readonly system: SystemName;
  readonly members: BenchMember[] = [];
  protected readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

  constructor(readonly timing: ClusterTiming, protected readonly c: ClusterComponents) {}

  /** The command line that runs `member`. */
  protected abstract commandFor(member: BenchMember): { command: string; args: string[] };
  /** Parses what `statusPath` answers. */
  protected abstract parseStatus(answer: HttpAnswer): LeaderView | undefined;
  protected abstract readonly statusPath: { method: 'GET' | 'POST'; path: string };

  /** Starts `size` members and waits until they agree on a leader. */
  async start(size: number): Promise<BenchMember> {
    const ports = await freePorts(2 * size);
    const prefix = this.system === 'conclave' ? 'n' : 'e';
    for (let i = 0; i < size; i++) {
      const name = `${prefix}${i + 1}`;
      mkdirSync(this.c.workDir, { recursive: true });
      this.members.push({
        name,
        clientHostPort: `127.0.0.1:${ports[2 * i]!}`,
        peerHostPort: `127.0.0.1:${ports[2 * i + 1]!}`,
        dataDir: join(this.c.workDir, name),
        logFile: join(this.c.workDir, `${name}.log`),
        process: undefined,
        reportedId: undefined,
      });
    }
    for (const member of this.members) this.launch(member);
    return this.waitHealthy();
  }

  /** Starts (or restarts, on its existing data) one member. */
  launch(member: BenchMember): void {
    const { command, args: own } = this.commandFor(member);
    const args = [...own, ...(this.c.serverArgs ?? [])];
    const log = openSync(member.logFile, 'a');
    try {
      member.process = this.c.processes.spawn(`${this.system} ${member.name}`, command, args,
        { stdio: ['ignore', log, log] });
    } finally {
      closeSync(log);
    }
  }

  get running(): BenchMember[] {
    return this.members.filter((m) => m.process !== undefined);
  }

  async leaderView(member: BenchMember, timeoutMs = 500): Promise<LeaderView | undefined> {
    try {
      const answer = this.statusPath.method === 'GET'
        ? await get(member.clientHostPort, this.statusPath.path, this.agent, timeoutMs)
        : await post(member.clientHostPort, this.statusPath.path, '{}',
          { agent: this.agent, timeoutMs, keepBody: true });
      if (answer.status !== 200) return undefined;
      const view = this.parseStatus(answer);
      if (view !== undefined) member.reportedId = view.selfId;
      return view;
    } catch {
      return undefined;
    }
  }

  /**
   * Waits until every running member answers, all follow the same leader (one of them), and
   * all have applied the same index: a settled cluster, as before each measurement.
   */
  async waitHealthy(deadlineMs = HEALTHY_DEADLINE_MS): Promise<BenchMember> {
    return waitFor(async () => {
      const running = this.running;
      const views = await Promise.all(running.map((m) => this.leaderView(m)));
      if (views.some((v) => v === undefined)) return undefined;
      const leaderIds = new Set(views.map((v) => v!.leaderId));
      const indexes = new Set(views.map((v) => v!.index));
      if (leaderIds.size !== 1 || indexes.size !== 1) return undefined;
      return running.find((m) => m.reportedId !== undefined && m.reportedId === views[0]!.leaderId);
    }, deadlineMs, `${this.system}: every member following one leader, caught up`, 50);
  }

  async kill9(member: BenchMember): Promise<void> {
    const tracked = member.process;
    member.process = undefined;
    if (tracked !== undefined) await this.c.processes.kill9(tracked);
  }

  /** SIGSTOP: the member stays in `running`, frozen with its sockets open, until resume. */
  pause(member: BenchMember): void {
    if (member.process !== undefined) this.c.processes.pause(member.process);
  }

  /** SIGCONT to a member `pause` froze. */
  resume(member: BenchMember): void {
    if (member.process !== undefined) this.c.processes.resume(member.process);
  }

  /** CPU time used so far by each running member, by name. Unit: ms. */
  cpuMsByMember(): Map<string, number> {
    const cpu = new Map<string, number>();
    for (const member of this.running) {
      const ms = cpuMsOf(member.process!.pid);
      if (ms !== undefined) cpu.set(member.name, ms);
    }
    return cpu;
  }

  /** The last lines of a member's log, for error messages. */
  logTail(member: BenchMember, lines = 15): string {
    if (!existsSync(member.logFile)) return '';
    return readFileSync(member.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** SIGTERM to a member (a clean stop), waiting until it is gone. */
  async stopMember(member: BenchMember): Promise<void> {
    const tracked = member.process;
    member.process = undefined;
    if (tracked !== undefined) await this.c.processes.stop(tracked, this.stopGraceMs);
  }

  private get stopGraceMs(): number {
    return this.c.cpuProfileDir === undefined ? STOP_GRACE_MS : PROFILE_STOP_GRACE_MS;
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map(async (m) => {
      const tracked = m.process;
      m.process = undefined;
      if (tracked !== undefined) await this.c.processes.stop(tracked, this.stopGraceMs);
    }));
    this.agent.destroy();
  }
}
