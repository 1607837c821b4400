/**
 * `conclave member list|add|promote|remove` and `conclave move-leader` (etcdctl's): live
 * membership of a running consistent core, one change at a time, through the leader
 * (docs/operations.md). `add NAME --peer-addr HOST:PORT` adds it as a learner (the address
 * goes into the log, so every member learns it) and prints how to start it (`conclave server
 * --initial-cluster-state existing --cluster-id ...`); `promote` makes it a voter once it has
 * caught up. Refusals (a duplicate, the last voter, a change in progress) are one line, exit 1.
 */
import { Command } from 'commander';
import { httpGet, httpPostJson, type HttpGetAnswer } from '../../adapters/http-get.js';
import { formatPeerAddress, parsePeerAddress } from '../../adapters/peer-address.js';
import { peerAddrProblem } from '../../core/raft/membership.js';
import { CoordError, UsageError } from '../../errors.js';
import type { CliIo } from '../io.js';
import {
  addClientOptions, bearerHeaders, reportError, resolveEndpoints, tlsFromFlags,
  type ClientFlags,
} from './client-options.js';

/** Default wait for one answer. Unit: ms. A change commits within a few heartbeats. */
const MEMBER_TIMEOUT_MS = 5000;

/** Answers after which another endpoint, or another round, may do better. */
const RETRIED_CODES: ReadonlySet<string> = new Set(['CONCLAVE_UNAVAILABLE', 'CONCLAVE_NO_LEADER',
  'CONCLAVE_NO_QUORUM']);

/** Between rounds while no member knows a leader. Unit: ms. Why: about two heartbeats. */
const LEADERLESS_RETRY_MS = 200;

interface MemberRow {
  readonly name: string;
  readonly role: string;
  readonly isLeader: boolean;
  readonly peerAddr: string | null;
  readonly clientUrl: string | null;
}

interface MemberList {
  readonly clusterId: string;
  readonly leaderId: string | null;
  readonly members: readonly MemberRow[];
}

interface AddFlags extends ClientFlags {
  readonly peerAddr: string;
}

export function memberCommand(io: CliIo): Command {
  const member = new Command('member')
    .description('list, add, promote and remove members of a running cluster');
  member.addCommand(addClientOptions(new Command('list')
    .description('every member with its role (voter, learner), peer address and client URL'))
    .action(async (flags: ClientFlags) => run(io, 'member list', flags, async (call) => {
      const list = parsedList(await call('GET', '/v1/members'));
      if (flags.json === true) io.out(JSON.stringify(list));
      else for (const line of listLines(list)) io.out(line);
    })));
  member.addCommand(addClientOptions(new Command('add')
    .description('add NAME as a learner (start it with --initial-cluster-state existing, '
      + 'then promote it)')
    .argument('<name>').requiredOption('--peer-addr <host:port>', 'where peers reach it'))
    .action(async (name: string, flags: AddFlags) => run(io, 'member add', flags,
      async (call) => {
        const parsed = parsePeerAddress(flags.peerAddr);
        if ('error' in parsed) throw new UsageError(`--peer-addr: ${parsed.error}`);
        // The log records it: what every member will accept from the log, checked here first.
        const problem = peerAddrProblem(formatPeerAddress(parsed));
        if (problem !== undefined) throw new UsageError(`--peer-addr: ${problem}`);
        const list = parsedList(await call('POST', '/v1/members/add',
          { name, peerAddr: flags.peerAddr }));
        if (flags.json === true) return io.out(JSON.stringify({ added: name, ...list }));
        io.out(`added ${name} as a learner to cluster ${list.clusterId}; start it with `
          + `conclave server --name ${name} --peer-addr ${flags.peerAddr} `
          + `--initial-cluster-state existing --cluster-id ${list.clusterId} --cluster `
          + `${clusterFlag(list, name, flags.peerAddr)} ..., then: conclave member promote `
          + name);
      })));
  for (const [verb, what] of [['promote', 'make the learner NAME a voter (once caught up)'],
    ['remove', 'take NAME out of the cluster']] as const) {
    member.addCommand(addClientOptions(new Command(verb).description(what).argument('<name>'))
      .action(async (name: string, flags: ClientFlags) => run(io, `member ${verb}`, flags,
        async (call) => {
          const list = parsedList(await call('POST', `/v1/members/${verb}`, { name }));
          io.out(flags.json === true ? JSON.stringify({ [verb === 'promote' ? 'promoted'
            : 'removed']: name, ...list }) : `${verb === 'promote' ? 'promoted' : 'removed'} `
            + `${name}; voters: ${voters(list)}`);
        })));
  }
  // main copies its output and exit settings to `member` only; pass them on.
  member.hook('preSubcommand', (parent, sub) => {
    sub.copyInheritedSettings(parent);
  });
  return member;
}

export function moveLeaderCommand(io: CliIo): Command {
  return addClientOptions(new Command('move-leader')
    .description('hand leadership to the voter NAME (a leadership transfer)')
    .argument('<name>'))
    .action(async (name: string, flags: ClientFlags) => run(io, 'move-leader', flags,
      async (call) => {
        const answer = JSON.parse(await call('POST', '/v1/move-leader', { name })) as
          { leaderId: string; term?: number };
        io.out(flags.json === true ? JSON.stringify(answer)
          : `leader is ${answer.leaderId}`
            + (answer.term === undefined ? '' : ` (term ${answer.term})`));
      }));
}

type Call = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<string>;
async function run(io: CliIo, name: string, flags: ClientFlags,
  body: (call: Call) => Promise<void>): Promise<void> {
  try {
    const tls = tlsFromFlags(flags);
    const urls = resolveEndpoints(flags, process.env, tls !== undefined);
    const options = { timeoutMs: flags.timeoutMs ?? MEMBER_TIMEOUT_MS,
      ...(tls === undefined ? {} : { tls }), headers: await bearerHeaders(flags) };
    const call: Call = async (method, path, payload) => {
      // A member that knows no leader yet (an election under way) may know one in a moment:
      // rounds over the endpoints go on until the timeout, a moment apart.
      const deadline = performance.now() + options.timeoutMs;
      for (;;) {
        let lastError: unknown;
        for (const url of urls) {
          try {
            const answer = method === 'GET' ? await httpGet(`${url}${path}`, options)
              : await httpPostJson(`${url}${path}`, payload, options);
            return okBody(answer);
          } catch (error) {
            // Refused by the cluster: the same answer anywhere. Unreachable or leaderless:
            // try the next.
            if (error instanceof CoordError && !RETRIED_CODES.has(error.code)) throw error;
            lastError = error;
          }
        }
        const leaderless = lastError instanceof CoordError
          && lastError.code !== 'CONCLAVE_UNAVAILABLE';
        if (!leaderless || performance.now() + LEADERLESS_RETRY_MS > deadline) throw lastError;
        await new Promise((resolve) => setTimeout(resolve, LEADERLESS_RETRY_MS));
      }
    };
    await body(call);
    io.exitCode = 0;
  } catch (error) {
    io.exitCode = reportError(io, name, flags, false, error);
  }
}

function okBody(answer: HttpGetAnswer): string {
  if (answer.status === 200) return answer.body;
  let error: { code?: string; message?: string } | undefined;
  try {
    error = (JSON.parse(answer.body) as { error?: typeof error }).error;
  } catch {
    error = undefined;
  }
  const code = typeof error?.code === 'string' && error.code.startsWith('CONCLAVE_')
    && error.code !== 'CONCLAVE_UNAVAILABLE' ? error.code : 'CONCLAVE_PROTOCOL';
  throw new CoordError(code as never, error?.message ?? `answered HTTP ${answer.status}`);
}

function parsedList(text: string): MemberList {
  const value = JSON.parse(text) as Partial<MemberList>;
  if (typeof value.clusterId !== 'string' || !Array.isArray(value.members)) {
    throw new CoordError('CONCLAVE_PROTOCOL', 'the member answered no member list');
  }
  return value as MemberList;
}

function listLines(list: MemberList): string[] {
  const header = ['NAME', 'ROLE', 'LEADER', 'PEER ADDR', 'CLIENT URL'];
  const rows = list.members.map((m) => [m.name, m.role, m.isLeader ? 'yes' : '',
    m.peerAddr ?? '-', m.clientUrl ?? '-']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [`cluster ${list.clusterId}`, ...[header, ...rows].map((row) =>
    row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd())];
}

function voters(list: MemberList): string {
  return list.members.filter((m) => m.role === 'voter').map((m) => m.name).join(',');
}

function clusterFlag(list: MemberList, name: string, peerAddr: string): string {
  return list.members.map((m) => m.name === name ? `${name}=${peerAddr}`
    : `${m.name}=${m.peerAddr ?? 'HOST:PORT'}`).join(',');
}
