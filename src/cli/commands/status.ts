/**
 * `conclave status`: the cluster as its members see it: the leader, its term, commit index
 * and revision, then one line per member with its role and health. Exit 0 when the cluster
 * has a leader; 1 (with one line saying so) when no member answers or none knows a leader.
 */
import { Command } from 'commander';
import type { ClusterStatus, MemberStatus } from '../../client/index.js';
import type { CliIo } from '../io.js';
import {
  addClientOptions, withClient, EXIT_OPERATIONAL, type ClientFlags,
} from './client-options.js';

export function statusCommand(io: CliIo): Command {
  const command = addClientOptions(new Command('status')
    .description('show the leader, term, commit index, and each member\'s role and health'));
  return command.action(async (flags: ClientFlags) => {
    io.exitCode = await withClient(io, 'status', flags, false, async (client) => {
      const status = await client.status();
      if (flags.json === true) io.out(JSON.stringify(status));
      else for (const line of statusLines(status)) io.out(line);
      if (status.leaderId !== undefined) return 0;
      io.err(`conclave status: CONCLAVE_NO_QUORUM: no member knows a leader` +
        `${status.term === undefined ? '' : ` (term ${status.term})`}; the cluster may have ` +
        'lost its majority');
      return EXIT_OPERATIONAL;
    });
  });
}

/** The text form: a summary line and a table of members. */
export function statusLines(status: ClusterStatus): string[] {
  const show = (value: number | string | undefined): string =>
    value === undefined ? '-' : String(value);
  const summary = status.leaderId === undefined
    ? 'leader: none'
    : `leader: ${status.leaderId}${status.leaderUrl === undefined ? '' : ` (${status.leaderUrl})`}`;
  const lines = [`${summary}  term: ${show(status.term)}  commit index: ` +
    `${show(status.commitIndex)}  revision: ${show(status.revision)}`];
  const header = ['ID', 'ROLE', 'HEALTH', 'TERM', 'COMMIT', 'APPLIED', 'MATCH', 'VERSION',
    'UPTIME', 'DATA', 'CLIENT URL'];
  const rows = status.members.map((m: MemberStatus) => [m.id, show(m.role), m.health,
    show(m.term), show(m.commitIndex), show(m.appliedIndex), show(m.matchIndex),
    show(m.version), m.uptimeMs === undefined ? '-' : duration(m.uptimeMs),
    m.dataSizeBytes === undefined ? '-' : bytes(m.dataSizeBytes), show(m.clientUrl)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) {
    lines.push(row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
  }
  for (const m of status.members) {
    if (m.health === 'down' && m.error !== undefined) lines.push(`${m.id} is down: ${m.error}`);
  }
  const strays = status.endpoints.filter((e) => !e.ok
    && !status.members.some((m) => m.clientUrl === e.url));
  for (const e of strays) lines.push(`${e.url} did not answer: ${e.error ?? 'no reason given'}`);
  return lines;
}

/** 3h12m, 4m05s, 12s: a person's reading of an uptime. */
export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/** 512 B, 1.5 KiB, 20.0 MiB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
