/**
 * Gossip members in host processes (bench/gossip/member-host.ts for Conclave,
 * bench/memberlist/main.go for memberlist), read through one line protocol: this file starts
 * the hosts, keeps every member's view (whom it holds alive, whom dead), and measures from it
 * what both systems are compared on: detection, dissemination, false deaths and load.
 */
import type { TrackedProcess } from './processes.js';
import type { ProcessGroup } from './processes.js';

/** One line a host prints (see the hosts' headers). */
export interface HostLine {
  readonly kind: string;
  readonly t?: number;
  readonly self?: string;
  readonly member?: string;
  readonly address?: string;
  readonly age?: number;
  readonly leader?: string | null;
  readonly generation?: number | null;
  readonly members?: number | readonly MemberStats[];
}

export interface MemberStats {
  readonly self: string;
  readonly messages: number;
  readonly bytes: number;
  readonly up: boolean;
}

interface View {
  readonly alive: Set<string>;
  readonly dead: Set<string>;
  leader: string | null | undefined;
}

/** A false death: a member not killed, held dead by someone. */
export interface FalseDeath {
  readonly atMs: number;
  readonly victim: string;
  readonly by: string;
}

export interface Host {
  readonly label: string;
  readonly process: TrackedProcess;
  readonly names: Set<string>;
  ready: boolean;
  stderr: string;
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

export class GossipHosts {
  readonly hosts: Host[] = [];
  readonly views = new Map<string, View>();
  readonly addresses = new Map<string, string>();
  readonly ages = new Map<string, number>();
  /** The generation of the leader each member names. */
  readonly generations = new Map<string, number | undefined>();
  /** Members stopped on purpose (closed, or their process killed). */
  readonly killed = new Set<string>();
  /** Every own suspicion and own death declaration of each member (epoch ms, in order). */
  readonly suspectedAt = new Map<string, number[]>();
  readonly declaredAt = new Map<string, number[]>();
  /** When each observer came to hold each member dead (key `observer>member`). */
  readonly deadAt = new Map<string, number>();
  readonly falseDeaths: FalseDeath[] = [];
  /** Lives of unkilled members wrongly ended: the first observer to hold one dead. */
  falseIncidents = 0;
  private readonly waiters = new Set<() => void>();
  private statsWaiter: ((rows: MemberStats[]) => void) | undefined;
  private statsRows: MemberStats[] = [];
  private statsPending = 0;
  /** Whether false deaths count yet (only once the cluster has formed). */
  counting = false;

  constructor(private readonly processes: ProcessGroup, private readonly system: string) {}

  /** Starts a host process; its lines feed the views. */
  start(label: string, command: string, args: readonly string[]): Host {
    const tracked = this.processes.spawn(`${this.system} ${label}`, command, args,
      { stdio: ['pipe', 'pipe', 'pipe'] });
    const host: Host = { label, process: tracked, names: new Set(), ready: false, stderr: '' };
    this.hosts.push(host);
    let partial = '';
    tracked.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') this.onLine(host, JSON.parse(line));
    });
    tracked.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      host.stderr = (host.stderr + chunk).slice(-4000);
    });
    return host;
  }

  get liveMembers(): string[] {
    return [...this.views.keys()].filter((name) => !this.killed.has(name));
  }

  /** Resolves once `condition()` holds (checked after every line), or rejects at the deadline. */
  async until(what: string, deadlineMs: number, condition: () => boolean): Promise<number> {
    const startMs = Date.now();
    if (condition()) return 0;
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!condition()) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        const tails = this.hosts.map((h) => `${h.label}: ${h.stderr.slice(-400)}`).join('\n');
        reject(new Error(
          `${this.system}: ${what} did not happen within ${deadlineMs} ms\n${tails}`));
      }, deadlineMs);
      this.waiters.add(check);
    });
    return Date.now() - startMs;
  }

  /** Every live member holds every other live member alive and every killed one dead. */
  converged(): boolean {
    const live = this.liveMembers;
    for (const name of live) {
      const view = this.views.get(name)!;
      if (view.alive.size !== live.length - 1) return false;
      for (const other of this.killed) if (view.alive.has(other)) return false;
    }
    return live.length > 0;
  }

  /** Whether every live member holds `victim` dead. */
  deadEverywhere(victim: string): boolean {
    return this.liveMembers.every((name) => this.views.get(name)!.dead.has(victim));
  }

  send(host: Host, command: string): void {
    host.process.child.stdin!.write(`${command}\n`);
  }

  /** Closes `names` in their hosts (memberlist Shutdown, Conclave close: no goodbye). */
  kill(names: readonly string[]): number {
    const atMs = Date.now();
    for (const name of names) this.killed.add(name);
    for (const host of this.hosts) {
      const mine = names.filter((n) => host.names.has(n));
      if (mine.length > 0) this.send(host, `kill ${mine.join(' ')}`);
    }
    return atMs;
  }

  /** Every member's counters, from every host. */
  async stats(): Promise<MemberStats[]> {
    const live = this.hosts.filter((h) => h.process.child.exitCode === null);
    this.statsRows = [];
    this.statsPending = live.length;
    const rows = new Promise<MemberStats[]>((resolve) => (this.statsWaiter = resolve));
    for (const host of live) this.send(host, 'stats');
    return rows;
  }

  private onLine(host: Host, line: HostLine): void {
    switch (line.kind) {
      case 'listening':
        host.names.add(line.self!);
        this.addresses.set(line.self!, line.address!);
        this.viewOf(line.self!);
        break;
      case 'ready':
        host.ready = true;
        break;
      case 'stats':
        this.statsRows.push(...(line.members as MemberStats[]));
        if (--this.statsPending === 0) this.statsWaiter?.(this.statsRows);
        break;
      default:
        this.onEvent(line);
    }
    for (const check of [...this.waiters]) check();
  }

  private onEvent(line: HostLine): void {
    const self = line.self;
    const member = line.member;
    if (self === undefined || this.killed.has(self)) return;
    const view = this.viewOf(self);
    const t = line.t ?? Date.now();
    switch (line.kind) {
      case 'alive':
        if (member === undefined) return;
        if (line.age !== undefined) this.ages.set(member, line.age);
        view.dead.delete(member);
        view.alive.add(member);
        return;
      case 'dead':
      case 'left':
        if (member === undefined) return;
        view.alive.delete(member);
        if (view.dead.has(member)) return;
        view.dead.add(member);
        this.deadAt.set(`${self}>${member}`, t);
        if (line.kind === 'dead' && this.counting && !this.killed.has(member)) {
          this.noteFalseDeath(t, member, self);
        }
        return;
      case 'suspect':
        if (member !== undefined) push(this.suspectedAt, member, t);
        return;
      case 'declared':
        if (member !== undefined) push(this.declaredAt, member, t);
        return;
      case 'leader':
        view.leader = line.leader ?? null;
        this.generations.set(self, line.generation ?? undefined);
        return;
      default:
    }
  }

  /** The first own suspicion of `member` at or after `sinceMs`. */
  firstSuspectSince(member: string, sinceMs: number): number | undefined {
    return this.suspectedAt.get(member)?.find((t) => t >= sinceMs);
  }

  private noteFalseDeath(atMs: number, victim: string, by: string): void {
    // A new incident when nobody else holds this victim dead right now.
    const others = this.liveMembers.some((name) => name !== by
      && this.views.get(name)!.dead.has(victim));
    if (!others) this.falseIncidents++;
    this.falseDeaths.push({ atMs, victim, by });
  }

  private viewOf(name: string): View {
    let view = this.views.get(name);
    if (view === undefined) {
      view = { alive: new Set(), dead: new Set(), leader: undefined };
      this.views.set(name, view);
    }
    return view;
  }
}
