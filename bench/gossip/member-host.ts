/**
 * conclave-host: K Conclave gossip members in one process (the built package's `joinCluster`,
 * as users run it), each with its own UDP and TCP port on loopback. Driven by the gossip
 * suites (bench/suites/gossip-memberlist.ts, gossip-processes.ts); speaks the same line
 * protocol as bench/memberlist/main.go, so both systems are measured by one reader.
 *
 *   node --import tsx bench/gossip/member-host.ts --prefix c --first 1 --count 25 \
 *     [--names a,b,c] [--seeds 127.0.0.1:P] [--drop 0.01] [--profile local] \
 *     [--cluster-name NAME] [--join-spread-ms MS] [--lifeguard on|off]
 *
 * With no --seeds, the first member bootstraps and the others join through it. Members join
 * one by one, spread over --join-spread-ms.
 *
 * Faults: with --drop P every datagram this process sends is dropped with probability P (the
 * same per-process drop rate the memberlist side applies); streams are never dropped.
 *
 * Output, one JSON object per line on stdout; `t` is wall-clock epoch ms (every process on the
 * machine shares that clock):
 *   {"kind":"listening","self":S,"address":"127.0.0.1:P"}
 *   {"kind":"ready","members":K}
 *   {"t","kind":"alive"|"dead"|"suspect"|"declared"|"left","self":S,"member":M[,"age":A]}
 *   {"t","kind":"leader","self":S,"leader":L|null,"generation":G|null}
 *   {"kind":"stats","t","members":[{"self","messages","bytes","up"}]}
 * Commands on stdin: `kill NAME...` (close those members at once, without a goodbye: the others
 * must detect it), `stats`, `quit`. A kill -9 of the whole process is the other way.
 */
import * as dgram from 'node:dgram';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { joinCluster, type Membership } from '../../dist/src/index.js';

interface HostOptions {
  readonly seeds: readonly string[];
  readonly drop: number;
  readonly profile: 'local' | 'lan';
  readonly clusterName: string;
  readonly joinSpreadMs: number;
  /** Explicit member names (instead of prefix, first and count). */
  readonly names: readonly string[];
  readonly lifeguard: boolean;
}

function options(): HostOptions {
  const { values } = parseArgs({
    options: {
      prefix: { type: 'string', default: 'c' }, first: { type: 'string', default: '1' },
      count: { type: 'string', default: '10' }, seeds: { type: 'string', default: '' },
      drop: { type: 'string', default: '0' }, profile: { type: 'string', default: 'local' },
      'cluster-name': { type: 'string', default: 'bench-gossip' },
      'join-spread-ms': { type: 'string', default: '2000' },
      names: { type: 'string', default: '' }, lifeguard: { type: 'string', default: 'on' },
    },
  });
  const first = Number(values.first);
  const names = values.names !== '' ? values.names.split(',')
    : Array.from({ length: Number(values.count) },
      (_, i) => `${values.prefix}${String(first + i).padStart(3, '0')}`);
  const profile = values.profile === 'lan' ? 'lan' : 'local';
  return {
    names, lifeguard: values.lifeguard !== 'off',
    seeds: values.seeds === '' ? [] : values.seeds.split(','), drop: Number(values.drop),
    profile, clusterName: values['cluster-name'], joinSpreadMs: Number(values['join-spread-ms']),
  };
}

function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Drops each datagram this process sends with probability `rate` (a lossy network). */
function dropDatagrams(rate: number): void {
  if (rate <= 0) return;
  const send = dgram.Socket.prototype.send;
  dgram.Socket.prototype.send = function dropOrSend(this: dgram.Socket, ...args: unknown[]) {
    if (Math.random() < rate) {
      const callback = args.at(-1);
      if (typeof callback === 'function') queueMicrotask(() => (callback as () => void)());
      return;
    }
    return (send as (...a: unknown[]) => void).apply(this, args);
  } as typeof dgram.Socket.prototype.send;
}

function watch(membership: Membership): void {
  const self = membership.id;
  membership.on('event', (event) => {
    const t = Date.now();
    switch (event.kind) {
      case 'joined':
        if (event.member !== self) {
          emit({ t, kind: 'alive', self, member: event.member, age: event.age });
        }
        return;
      case 'alive':
        if (event.member !== self) emit({ t, kind: 'alive', self, member: event.member });
        return;
      case 'suspect':
        if (event.by === self) emit({ t, kind: 'suspect', self, member: event.member });
        return;
      case 'dead':
        if (event.declaredBy === self) emit({ t, kind: 'declared', self, member: event.member });
        emit({ t, kind: 'dead', self, member: event.member });
        return;
      case 'left':
        if (event.member !== self) emit({ t, kind: 'left', self, member: event.member });
        return;
      case 'leader-changed':
        emit({
          t, kind: 'leader', self, leader: event.leader?.id ?? null,
          generation: event.leader?.generation ?? null,
        });
        return;
      default:
    }
  });
}

async function main(): Promise<void> {
  const o = options();
  dropDatagrams(o.drop);
  const members: Membership[] = [];
  let seeds = o.seeds;
  for (const name of o.names) {
    const membership = await joinCluster({
      name, bind: '127.0.0.1:0', seeds, profile: o.profile, clusterName: o.clusterName,
      joinDeadlineMs: 120_000, config: { lifeguard: o.lifeguard },
    });
    watch(membership);
    members.push(membership);
    emit({ kind: 'listening', self: name, address: membership.address });
    if (seeds.length === 0) seeds = [membership.address];
    await new Promise((resolve) => setTimeout(resolve, o.joinSpreadMs / o.names.length));
  }
  emit({ kind: 'ready', members: members.length });
  const closed = new Set<Membership>();
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const [command, ...args] = line.trim().split(/\s+/);
    if (command === 'kill') {
      for (const membership of members) {
        if (args.includes(membership.id) && !closed.has(membership)) {
          closed.add(membership);
          void membership.close();
        }
      }
    } else if (command === 'stats') {
      emit({
        kind: 'stats', t: Date.now(), members: members.map((m) => statsOf(m, !closed.has(m))),
      });
    } else if (command === 'quit') {
      void Promise.all(members.map((m) => m.close())).then(() => process.exit(0));
    }
  });
  lines.on('close', () => process.exit(0));
}

function statsOf(membership: Membership, up: boolean): Record<string, unknown> {
  const { udp, tcp } = membership.status().transport;
  return {
    self: membership.id, up,
    messages: udp.datagramsSent + tcp.messagesSent, bytes: udp.bytesSent + tcp.bytesSent,
  };
}

await main();
