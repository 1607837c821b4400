/**
 * Real-process clusters for tests: N `conclave server` processes (the built bin, as users run
 * it) on loopback, each peer link through a FaultProxy so a test can cut links. Everything waits
 * on conditions with deadlines; `stop()` kills every process it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterDeadlines, patienceMs, type ClusterDeadlines } from './deadlines.js';
import { FaultProxy } from './fault-proxy.js';
import { freePort } from './ports.js';

export const BIN = fileURLToPath(new URL('../../bin/conclave.js', import.meta.url));
export const BUILT = existsSync(fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url)));

export interface MemberStatus {
  id: string;
  role: string;
  term: number;
  leaderId: string | null;
  commitIndex: number;
}

export interface RealMember {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  child: ChildProcess | undefined;
  stderr: string;
  /** How the last process ended, if it did on its own ("code 1", "signal SIGABRT"). */
  exited?: string | undefined;
}

export interface RealClusterOptions {
  readonly nodes: number;
  readonly heartbeatMs: number;
  readonly electionTimeoutMs: number;
  /** More `conclave server` flags, given to every member (e.g. `--snapshot-count 100`). */
  readonly serverArgs?: readonly string[];
  /** Runs once the members' names, ports and data dirs are known, before any starts. */
  readonly beforeLaunch?: (cluster: RealCluster) => Promise<void>;
}

export class RealCluster {
  readonly members: RealMember[] = [];
  /** proxies.get(`${from}>${to}`): the link from → to. */
  readonly proxies = new Map<string, FaultProxy>();
  readonly dataDir = mkdtempSync(join(tmpdir(), 'conclave-cluster-'));
  /** How long waits on this cluster may take, from its own timings (deadlines.ts). */
  readonly deadlines: ClusterDeadlines;
  /** Why each member's last status request failed (for timeout messages). */
  private readonly statusErrors = new Map<string, string>();

  private constructor(readonly options: RealClusterOptions) {
    this.deadlines = clusterDeadlines({
      heartbeatMs: options.heartbeatMs, electionTimeoutMs: options.electionTimeoutMs,
    });
  }

  static async start(options: RealClusterOptions): Promise<RealCluster> {
    const cluster = new RealCluster(options);
    for (let i = 0; i < options.nodes; i++) {
      cluster.members.push({ name: `n${i + 1}`, clientPort: await freePort(), peerPort: await freePort(), child: undefined, stderr: '' });
    }
    for (const from of cluster.members) {
      for (const to of cluster.members) {
        if (from !== to) cluster.proxies.set(`${from.name}>${to.name}`, await FaultProxy.start(to.peerPort));
      }
    }
    await options.beforeLaunch?.(cluster);
    for (const member of cluster.members) cluster.launch(member);
    return cluster;
  }

  endpoint(member: RealMember): string {
    return `127.0.0.1:${member.clientPort}`;
  }

  get endpoints(): string[] {
    return this.members.map((m) => this.endpoint(m));
  }

  /**
   * Starts (or restarts) a member's process on its data directory. `peers`: the members its
   * `--cluster` names (default: all; fewer to restart it with a flag that predates a change).
   */
  launch(member: RealMember, peers: readonly RealMember[] = this.members): void {
    // Each member reaches each peer through its own proxy, so links can be cut one by one.
    const cluster = peers.map((m) => `${m.name}=127.0.0.1:${m === member ? m.peerPort : this.proxies.get(`${member.name}>${m.name}`)!.port}`).join(',');
    const clientUrls = this.members.map((m) => `${m.name}=127.0.0.1:${m.clientPort}`).join(',');
    const child = spawn(process.execPath, [BIN, 'server', '--name', member.name, '--data-dir', join(this.dataDir, member.name),
      '--peer-addr', `127.0.0.1:${member.peerPort}`, '--client-addr', `127.0.0.1:${member.clientPort}`,
      '--cluster', cluster, '--client-urls', clientUrls, '--heartbeat-ms', String(this.options.heartbeatMs),
      '--election-timeout-ms', String(this.options.electionTimeoutMs), '--log-level', 'warn',
      // One cluster secret for all (created by the first member to start): peers authenticate.
      '--peer-secret-file', join(this.dataDir, 'peer-secret'),
      ...(this.options.serverArgs ?? [])], { stdio: ['ignore', 'ignore', 'pipe'] });
    member.stderr = '';
    member.exited = undefined;
    child.once('exit', (code, signal) => {
      if (member.child === child) member.exited = signal === null ? `code ${code}` : `signal ${signal}`;
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      member.stderr = (member.stderr + chunk.toString()).slice(-4000);
    });
    member.child = child;
  }

  kill9(member: RealMember): Promise<void> {
    const child = member.child;
    member.child = undefined;
    if (child === undefined || child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** Cuts every link to and from `member`, both directions. */
  isolate(member: RealMember): void {
    for (const [key, proxy] of this.proxies) {
      const [from, to] = key.split('>');
      if (from === member.name || to === member.name) proxy.block();
    }
  }

  async status(member: RealMember): Promise<MemberStatus | undefined> {
    try {
      const response = await fetch(`http://${this.endpoint(member)}/v1/status`,
        { signal: AbortSignal.timeout(patienceMs(200)) });
      return (await response.json()) as MemberStatus;
    } catch (error) {
      this.statusErrors.set(member.name, String((error as Error).cause ?? error));
      return undefined;
    }
  }

  /**
   * Waits until exactly one running member is leader and the running majority follows it.
   * Default deadline: from the cluster's timings (deadlines.leaderMs).
   */
  async waitForLeader(deadlineMs = this.deadlines.leaderMs,
    among: RealMember[] = this.members.filter((m) => m.child !== undefined)): Promise<RealMember> {
    let seen = 'no status yet';
    return waitFor(async () => {
      // A member that ended on its own will not come back: say so now, not after the deadline.
      const ended = among.find((m) => m.exited !== undefined);
      if (ended !== undefined) throw new Error(`${ended.name}: ${this.silence(ended)}`);
      const statuses = await Promise.all(among.map((m) => this.status(m)));
      // What each member said last, for the message if the wait times out.
      seen = among.map((m, i) => `${m.name}: ${statuses[i] === undefined ? this.silence(m)
        : `${statuses[i]!.role} term ${statuses[i]!.term} leader ${statuses[i]!.leaderId}`}`)
        .join('; ');
      const leaders = among.filter((_, i) => statuses[i]?.role === 'leader');
      const agree = statuses.filter((s) => s?.leaderId === leaders[0]?.name).length;
      return leaders.length === 1 && agree > this.members.length / 2 ? leaders[0] : undefined;
    }, deadlineMs, () => `a leader followed by a majority (last seen: ${seen})`);
  }

  /** Why a member gave no status: its process ended (with its last stderr), or no answer. */
  private silence(member: RealMember): string {
    if (member.exited === undefined) {
      return `no answer (process running; ${this.statusErrors.get(member.name) ?? '?'})`;
    }
    return `process ended (${member.exited}); stderr: ${member.stderr.slice(-600)}`;
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((m) => this.kill9(m)));
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Polls `probe` until it returns a value, or fails after `deadlineMs` naming what it waited for. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, deadlineMs: number,
  what: string | (() => string)): Promise<T> {
  const end = performance.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > end) {
      throw new Error(`timed out after ${deadlineMs} ms waiting for ${typeof what === 'string'
        ? what : what()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

