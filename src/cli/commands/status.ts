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
  const header = ['ID', 'ROLE', 'HEALTH', 'TERM', 'COMMIT', 'APPLIED', 'MATCH', 'CLIENT URL'];
  const rows = status.members.map((m: MemberStatus) => [m.id, show(m.role), m.health,
    show(m.term), show(m.commitIndex), show(m.appliedIndex), show(m.matchIndex),
    show(m.clientUrl)]);
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
