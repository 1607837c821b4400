/**
 * Hostile-client probes (issue #14): each starts a fresh 3-member cluster of the built
 * `conclave server`, plays one hostile client against it, and prints what the member under
 * attack did: its RSS before and at peak (VmHWM), whether it stayed up and kept its role, and
 * how long a small write and a read take afterwards. One JSON line per probe on stdout.
 *
 *   node --import tsx bench/tools/hostile-probes.ts [probe...] [--server-arg=--flag=value ...]
 *
 * Probes: watch-1mb (200 unread watches on the leader, then one 1 MB put), follower-prevkv
 * (5,000 unread watches on a follower, then puts over keys holding 1 MB values: the events
 * carry 1 MB prevKv), idempotency (600 puts of 1000 KiB with prevKv from new client ids, then
 * a member restart), slow-loris (300 connections each holding 1.4 MB of an unfinished chunked
 * body), slow-watcher (a watcher that reads nothing while 32 KiB puts flow: canceled `slow`,
 * then resumed from `nextRevision`, missing no event). Not part of npm test: minutes of work.
 * Before the limits (issue #14's figures) and after: see the closing note of the limits work.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProcessGroup, type TrackedProcess } from '../lib/processes.js';
import { freePort } from '../lib/processes.js';

const BIN = fileURLToPath(new URL('../../bin/conclave.js', import.meta.url));

interface Member {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  process?: TrackedProcess;
}

class Cluster {
  readonly members: Member[] = [];
  readonly dir = mkdtempSync(join(tmpdir(), 'conclave-probe-'));
  constructor(private readonly group: ProcessGroup, private readonly extraArgs: string[]) {}

  static async start(group: ProcessGroup, extraArgs: string[]): Promise<Cluster> {
    const cluster = new Cluster(group, extraArgs);
    for (let i = 1; i <= 3; i++) {
      cluster.members.push({ name: `n${i}`, clientPort: await freePort(), peerPort: await freePort() });
    }
    for (const member of cluster.members) cluster.launch(member);
    await cluster.leader(30_000);
    return cluster;
  }

  launch(member: Member): void {
    const peers = this.members.map((m) => `${m.name}=127.0.0.1:${m.peerPort}`).join(',');
    const clients = this.members.map((m) => `${m.name}=127.0.0.1:${m.clientPort}`).join(',');
    member.process = this.group.spawn(member.name, process.execPath, [BIN, 'server',
      '--name', member.name, '--data-dir', join(this.dir, member.name),
      '--peer-addr', `127.0.0.1:${member.peerPort}`, '--client-addr', `127.0.0.1:${member.clientPort}`,
      '--cluster', peers, '--client-urls', clients, '--log-level', 'warn',
      // One cluster secret for all (made by the first member to start): peers authenticate.
      '--peer-secret-file', join(this.dir, 'peer-secret'), ...this.extraArgs],
    { stdio: ['ignore', 'ignore', 'inherit'] });
  }

  /** kill -9, then start again on the same data directory. */
  async restart(member: Member): Promise<void> {
    if (member.process !== undefined) await this.group.kill9(member.process);
    this.launch(member);
  }

  async leader(deadlineMs: number): Promise<Member> {
    const end = performance.now() + deadlineMs;
    for (;;) {
      for (const m of this.members) {
        const status = await statusOf(m);
        if (status?.role === 'leader') return m;
      }
      if (performance.now() > end) throw new Error('no leader');
      await sleep(100);
    }
  }

  follower(leader: Member): Member {
    return this.members.find((m) => m !== leader) as Member;
  }

  async stop(): Promise<void> {
    for (const m of this.members) if (m.process !== undefined) await this.group.kill9(m.process);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

interface Status { role: string; term: number; revision: number }

async function statusOf(m: Member): Promise<Status | undefined> {
  const answer = await request(m, 'GET', '/v1/status', undefined, 2000).catch(() => undefined);
  if (answer === undefined || answer.status !== 200) return undefined;
  return JSON.parse(answer.body) as Status;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(m: Member, method: string, path: string, body: string | undefined,
  timeoutMs: number): Promise<{ status: number; body: string; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: m.clientPort, path, method, agent,
      headers: body === undefined ? {} : { 'content-type': 'application/json',
        'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0,
        body: Buffer.concat(chunks).toString(), ms: performance.now() - start }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

let sequence = 0;

/** A put with an idempotency key (older servers require one); `extra` may replace it. */
function put(m: Member, key: string, value: string, extra: Record<string, unknown> = {}):
  Promise<{ status: number; body: string; ms: number }> {
  const body = { key, value, clientId: 'probe', sequence: ++sequence, ...extra };
  return request(m, 'POST', '/v1/kv/put', JSON.stringify(body), 60_000);
}

/** Resident and peak resident memory of a process. Unit: MiB. */
function memoryOf(m: Member): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${m.process?.pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(kib('VmRSS') / 1024), peakMiB: Math.round(kib('VmHWM') / 1024) };
}

/** A gauge or counter from the member's /metrics. */
async function counter(m: Member, name: string): Promise<number> {
  const answer = await request(m, 'GET', '/metrics', undefined, 5000).catch(() => undefined);
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(answer?.body ?? '')?.[1] ?? NaN);
}

function alive(m: Member): boolean {
  return m.process !== undefined && m.process.child.exitCode === null
    && m.process.child.signalCode === null;
}

/** Raw connections that send a request and never read the answer. */
async function unreadConnections(m: Member, count: number, head: string): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = net.connect(m.clientPort, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      socket.once('connect', () => resolve());
      socket.once('error', () => resolve());
    });
    socket.write(head);
    socket.pause();
    sockets.push(socket);
  }
  return sockets;
}

/** After the attack: does `m` still serve? A small put through the leader, a read on `m`. */
async function afterwards(cluster: Cluster, m: Member, termBefore: number): Promise<object> {
  const status = await statusOf(m);
  const leader = await cluster.leader(20_000).catch(() => undefined);
  const write = leader === undefined ? undefined
    : await put(leader, 'probe/after', 'ok').catch((e: Error) => ({ status: 0, ms: NaN, body: e.message }));
  const read = await request(m, 'POST', '/v1/kv/range',
    JSON.stringify({ key: 'probe/after', consistency: 'serializable' }), 10_000)
    .catch((e: Error) => ({ status: 0, ms: NaN, body: e.message }));
  return { alive: alive(m), role: status?.role ?? 'no answer', termChanged: (status?.term ?? -1) !== termBefore,
    smallPut: write === undefined ? 'no leader' : `${write.status} in ${write.ms.toFixed(0)} ms`,
    read: `${read.status} in ${read.ms.toFixed(0)} ms` };
}

/**
 * The longest stretch, from now on, in which `m` did not answer /v1/status (polled every
 * 200 ms, each poll waiting up to 2 s), over `windowMs` or until ten answers in a row.
 * Unit: ms.
 */
async function unresponsiveFor(m: Member, windowMs: number): Promise<number> {
  const start = performance.now();
  let lastAnswer = start;
  let longest = 0;
  let inRow = 0;
  while (performance.now() - start < windowMs && inRow < 10) {
    const ok = (await statusOf(m)) !== undefined;
    const now = performance.now();
    if (ok) {
      longest = Math.max(longest, now - lastAnswer);
      lastAnswer = now;
      inRow += 1;
    } else inRow = 0;
    await sleep(200);
  }
  return Math.round(Math.max(longest, inRow === 0 ? performance.now() - lastAnswer : 0));
}

/** A put through whoever leads now, again after a leader change (307, 503: not applied). */
async function putLeader(cluster: Cluster, key: string, value: string):
  Promise<{ status: number; body: string; ms: number }> {
  const start = performance.now();
  for (let attempt = 0; ; attempt++) {
    const answer = await put(await cluster.leader(20_000), key, value)
      .catch((e: Error) => ({ status: 0, ms: NaN, body: e.message }));
    if ((answer.status !== 307 && answer.status !== 503) || attempt >= 10) {
      return { ...answer, ms: performance.now() - start };
    }
  }
}

type Probe = (cluster: Cluster) => Promise<object>;

const MB = 1_000_000;

const PROBES: Record<string, Probe> = {
  'watch-1mb': async (cluster) => {
    const leader = await cluster.leader(10_000);
    const before = memoryOf(leader);
    const term = (await statusOf(leader))?.term ?? -1;
    const sockets = await unreadConnections(leader, 200,
      'GET /v1/watch?key=big HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(500);
    const answer = await putLeader(cluster, 'big', 'x'.repeat(MB));
    const unresponsiveMs = await unresponsiveFor(leader, 30_000);
    const result = { unresponsiveMs, rssBeforeMiB: before.rssMiB, peakMiB: memoryOf(leader).peakMiB,
      rssAfterMiB: memoryOf(leader).rssMiB,
      bigPut: `${answer.status} in ${answer.ms.toFixed(0)} ms`, ...await afterwards(cluster, leader, term) };
    for (const s of sockets) s.destroy();
    return result;
  },
  'follower-prevkv': async (cluster) => {
    const leader = await cluster.leader(10_000);
    const follower = cluster.follower(leader);
    for (let i = 0; i < 5; i++) await putLeader(cluster, `p/${i}`, 'x'.repeat(MB));
    await sleep(1000);
    const before = memoryOf(follower);
    const term = (await statusOf(follower))?.term ?? -1;
    const sockets = await unreadConnections(follower, 5000,
      'GET /v1/watch?key=p/&prefix=true HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(1000);
    const times: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await putLeader(cluster, `p/${i}`, 'small');
      times.push(`${answer.status}/${answer.ms.toFixed(0)}ms`);
    }
    const unresponsiveMs = await unresponsiveFor(follower, 30_000);
    const result = { unresponsiveMs, rssBeforeMiB: before.rssMiB,
      peakMiB: alive(follower) ? memoryOf(follower).peakMiB : 'dead',
      rssAfterMiB: alive(follower) ? memoryOf(follower).rssMiB : 'dead', puts: times.join(' '),
      ...await afterwards(cluster, follower, term) };
    for (const s of sockets) s.destroy();
    return result;
  },
  idempotency: async (cluster) => {
    const leader = await cluster.leader(10_000);
    const before = cluster.members.map((m) => memoryOf(m).rssMiB);
    const term = (await statusOf(leader))?.term ?? -1;
    const value = 'v'.repeat(1000 * 1024);
    let ok = 0;
    let failed = '';
    const start = performance.now();
    let target = leader;
    let leaderChanges = 0;
    for (let i = 0; i < 600; i++) {
      // A retry (same client id and sequence) after a leader change is applied at most once.
      for (let attempt = 0; attempt < 5; attempt++) {
        const answer = await put(target, 'idem', value, { prevKv: true, clientId: `probe-${i}`,
          sequence: 1 }).catch((e: Error) => ({ status: 0, ms: NaN, body: e.message }));
        if (answer.status === 200) {
          ok++;
          break;
        }
        failed = `${answer.status} ${answer.body.slice(0, 120)}`;
        const next = await cluster.leader(20_000);
        if (next !== target) leaderChanges++;
        target = next;
      }
    }
    const seconds = (performance.now() - start) / 1000;
    await sleep(2000);
    const after = cluster.members.map((m) => (alive(m) ? memoryOf(m).rssMiB : -1));
    const peaks = cluster.members.map((m) => (alive(m) ? memoryOf(m).peakMiB : -1));
    // What holds the memory: the idempotency records, or the log (no compaction yet).
    const recordsBytes = await Promise.all(cluster.members.map((m) =>
      counter(m, 'conclave_idempotency_records_bytes')));
    const lastIndex = await Promise.all(cluster.members.map((m) =>
      counter(m, 'conclave_last_index')));
    const restarted = cluster.follower(leader);
    await cluster.restart(restarted);
    await sleep(1000);
    for (let i = 0; i < 200 && (await statusOf(restarted)) === undefined; i++) await sleep(100);
    await sleep(2000);
    return { putsOk: ok, leaderChanges, lastFailure: failed, putsSeconds: Number(seconds.toFixed(1)),
      rssBeforeMiB: before, rssAfterMiB: after, peakMiB: peaks, recordsBytes, lastIndex,
      rssAfterRestartMiB: memoryOf(restarted).rssMiB, ...await afterwards(cluster, leader, term) };
  },
  'slow-loris': async (cluster) => {
    const leader = await cluster.leader(10_000);
    const before = memoryOf(leader);
    const term = (await statusOf(leader))?.term ?? -1;
    const chunk = 'x'.repeat(64 * 1024);
    const sockets: net.Socket[] = [];
    let refused = 0;
    for (let i = 0; i < 300; i++) {
      const socket = net.connect(leader.clientPort, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => refused++);
      socket.resume();
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('error', () => resolve()));
      socket.write('POST /v1/kv/put HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      let sent = 0;
      while (sent < 1.4 * MB && !socket.destroyed) {
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        sent += chunk.length;
      }
      sockets.push(socket);
    }
    await sleep(8000);
    const result = { rssBeforeMiB: before.rssMiB, peakMiB: memoryOf(leader).peakMiB,
      rssAfterMiB: memoryOf(leader).rssMiB, connectionsClosedByServer: refused,
      ...await afterwards(cluster, leader, term) };
    for (const s of sockets) s.destroy();
    return result;
  },
  'slow-watcher': async (cluster) => {
    const leader = await cluster.leader(10_000);
    const follower = cluster.follower(leader);
    const term = (await statusOf(follower))?.term ?? -1;
    const before = memoryOf(follower);
    const first = ((await statusOf(follower))?.revision ?? 1) + 1;
    // A watcher that reads nothing for 20 s while puts flow, then reads everything.
    // 800 events of 32 KB (a 16 KiB value and its prevKv): 25 MB, more than the kernel's
    // socket buffers and the 4 MiB the member keeps for one watcher, and within the history
    // (64 MiB as estimated), so that a resume finds every revision.
    const lines = await slowWatch(follower, first, 20_000, async () => {
      const value = 'w'.repeat(16 * 1024);
      for (let i = 0; i < 800; i++) await put(leader, `sw/${i % 50}`, value);
    });
    const canceled = lines.find((l) => l['kind'] === 'canceled');
    const seen = new Set<number>();
    for (const l of lines) {
      for (const e of (l['events'] as { kv: { modRevision: number } }[] | undefined) ?? []) {
        seen.add(e.kv.modRevision);
      }
    }
    // Resume as the client library does: from the canceled line's nextRevision, or, when the
    // member closed the stream before the reader took that line, from the last one it read.
    const lastEvents = [...lines].reverse().find((l) => l['kind'] === 'events');
    const resumedFrom = (canceled?.['nextRevision'] ?? lastEvents?.['nextRevision'] ?? first) as number;
    const canceledByMember = await counter(follower, 'conclave_watchers_canceled_slow');
    {
      const rest = await slowWatch(follower, resumedFrom, 0, async () => undefined, true);
      for (const l of rest) {
        if (l['kind'] === 'compacted') throw new Error(`resume compacted: ${JSON.stringify(l)}`);
        for (const e of (l['events'] as { kv: { modRevision: number } }[] | undefined) ?? []) {
          seen.add(e.kv.modRevision);
        }
      }
    }
    const last = (await statusOf(follower))?.revision ?? 0;
    let missing = 0;
    for (let r = first; r <= last; r++) if (!seen.has(r) && r > first + 1) missing++;
    return { rssBeforeMiB: before.rssMiB, peakMiB: memoryOf(follower).peakMiB,
      canceledLine: canceled === undefined ? 'not read (stream closed 5 s after the cancel)'
        : JSON.stringify(canceled), canceledByMember, resumedFrom,
      revisionsSeen: seen.size, revisionsMissing: missing, ...await afterwards(cluster, follower, term) };
  },
};

/**
 * A watch from `fromRevision` that reads nothing for `stallMs` while `during` runs, then reads
 * until the stream has been quiet for 2 s (or ends). Returns the parsed lines.
 */
function slowWatch(m: Member, fromRevision: number, stallMs: number,
  during: () => Promise<void>, toEnd = false): Promise<Record<string, unknown>[]> {
  return new Promise((resolve) => {
    const socket = net.connect(m.clientPort, '127.0.0.1');
    socket.write(`GET /v1/watch?key=sw/&prefix=true&fromRevision=${fromRevision} HTTP/1.1\r\n`
      + 'Host: x\r\n\r\n');
    socket.pause();
    let text = '';
    let quiet: NodeJS.Timeout | undefined;
    const finish = (): void => {
      socket.destroy();
      const body = dechunk(text.slice(text.indexOf('\r\n\r\n') + 4));
      const out: Record<string, unknown>[] = [];
      for (const line of body.split('\n')) {
        if (line === '') continue;
        try {
          out.push(JSON.parse(line) as Record<string, unknown>);
        } catch { /* the last line of a stream cut mid-line */ }
      }
      resolve(out);
    };
    const arm = (): void => {
      clearTimeout(quiet);
      quiet = setTimeout(finish, toEnd ? 3000 : 2000);
    };
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      arm();
    });
    socket.on('end', finish);
    socket.on('error', finish);
    void during().then(async () => {
      await sleep(stallMs > 0 ? 1000 : 0);
      socket.resume();
      arm();
    });
    if (stallMs === 0) socket.resume();
  });
}

/** The payload of an HTTP/1.1 chunked body (read as latin1), up to where it stops. */
function dechunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n', at);
    if (end < 0) return out;
    const size = parseInt(text.slice(at, end), 16);
    if (!(size > 0)) return out;
    out += text.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const serverArgs = args.filter((a) => a.startsWith('--server-arg=')).map((a) => a.slice(13));
  const names = args.filter((a) => !a.startsWith('--'));
  const chosen = names.length === 0 ? Object.keys(PROBES) : names;
  for (const name of chosen) {
    const probe = PROBES[name];
    if (probe === undefined) throw new Error(`unknown probe ${name}; known: ${Object.keys(PROBES).join(', ')}`);
    const group = new ProcessGroup();
    const cluster = await Cluster.start(group, serverArgs);
    try {
      const result = await probe(cluster);
      process.stdout.write(`${JSON.stringify({ probe: name, ...result })}\n`);
    } catch (error) {
      process.stdout.write(`${JSON.stringify({ probe: name, error: String(error) })}\n`);
    } finally {
      await cluster.stop();
      await group.stopAll(2000);
    }
  }
  agent.destroy();
}

await main();
