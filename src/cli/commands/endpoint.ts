/**
 * `conclave endpoint health|status` (etcdctl's): each endpoint asked by itself, in parallel,
 * with no leader search, so one line per member says what a load balancer or an operator needs.
 * `health`: `GET /health` of each (docs/operations.md); exit 0 only when every one is healthy.
 * `status`: `GET /v1/status` of each: reachable, id, leader, term, raft index, applied index,
 * db size and latency; exit 0 only when every one answered.
 */
import { Command } from 'commander';
import { httpGet, type HttpGetAnswer } from '../../adapters/http-get.js';
import type { CliIo } from '../io.js';
import {
  addClientOptions, reportError, resolveEndpoints, tlsFromFlags, EXIT_OPERATIONAL,
  type ClientFlags,
} from './client-options.js';

/** Default wait for one member's answer. Unit: ms. A member slower than this is not healthy. */
const ENDPOINT_TIMEOUT_MS = 2000;

export interface EndpointHealth {
  readonly endpoint: string;
  readonly health: boolean;
  readonly tookMs?: number;
  readonly reason?: string;
}

export interface EndpointStatus {
  readonly endpoint: string;
  readonly reachable: boolean;
  readonly id?: string;
  readonly leaderId?: string | null;
  readonly isLeader?: boolean;
  readonly term?: number;
  readonly raftIndex?: number;
  readonly appliedIndex?: number;
  readonly dbSizeBytes?: number;
  readonly latencyMs?: number;
  readonly error?: string;
}

export function endpointCommand(io: CliIo): Command {
  const endpoint = new Command('endpoint')
    .description('ask each endpoint by itself: health (GET /health) or status');
  endpoint.addCommand(addClientOptions(new Command('health')
    .description('whether each member has a leader and has applied its log (exit 1 unless '
      + 'all are healthy)'))
    .action(async (flags: ClientFlags) => {
      io.exitCode = await guarded(io, 'endpoint health', flags, async () => {
        const results = await askAll(flags, '/health', healthOf);
        for (const r of results) io.out(flags.json === true ? JSON.stringify(r) : healthLine(r));
        return results.every((r) => r.health) ? 0 : EXIT_OPERATIONAL;
      });
    }));
  endpoint.addCommand(addClientOptions(new Command('status')
    .description('each member\'s id, leader, term, raft index, db size and latency (exit 1 '
      + 'unless all answer)'))
    .action(async (flags: ClientFlags) => {
      io.exitCode = await guarded(io, 'endpoint status', flags, async () => {
        const results = await askAll(flags, '/v1/status', statusOf);
        if (flags.json === true) for (const r of results) io.out(JSON.stringify(r));
        else for (const line of statusTable(results)) io.out(line);
        return results.every((r) => r.reachable) ? 0 : EXIT_OPERATIONAL;
      });
    }));
  // main copies its output and exit settings to `endpoint` only; pass them on.
  endpoint.hook('preSubcommand', (parent, sub) => {
    sub.copyInheritedSettings(parent);
  });
  return endpoint;
}

async function guarded(io: CliIo, name: string, flags: ClientFlags,
  body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    return reportError(io, name, flags, false, error);
  }
}

async function askAll<T>(flags: ClientFlags, path: string,
  judge: (endpoint: string, answer: HttpGetAnswer | Error) => T): Promise<T[]> {
  const tls = tlsFromFlags(flags);
  const urls = resolveEndpoints(flags, process.env, tls !== undefined);
  const options = { timeoutMs: flags.timeoutMs ?? ENDPOINT_TIMEOUT_MS,
    ...(tls === undefined ? {} : { tls }) };
  return Promise.all(urls.map(async (url) => {
    const answer = await httpGet(`${url}${path}`, options).catch((error: unknown) =>
      error instanceof Error ? error : new Error(String(error)));
    return judge(url, answer);
  }));
}

function healthOf(endpoint: string, answer: HttpGetAnswer | Error): EndpointHealth {
  if (answer instanceof Error) return { endpoint, health: false, reason: answer.message };
  const tookMs = round(answer.latencyMs);
  const body = parsed(answer.body);
  if (answer.status === 200 && body?.['health'] === 'true') {
    return { endpoint, health: true, tookMs };
  }
  const reason = typeof body?.['reason'] === 'string' ? body['reason']
    : `answered HTTP ${answer.status}`;
  return { endpoint, health: false, tookMs, reason };
}

function statusOf(endpoint: string, answer: HttpGetAnswer | Error): EndpointStatus {
  if (answer instanceof Error) return { endpoint, reachable: false, error: answer.message };
  const body = parsed(answer.body);
  if (answer.status !== 200 || body === undefined) {
    const error = body?.['error'] as { code?: string; message?: string } | undefined;
    return { endpoint, reachable: false, latencyMs: round(answer.latencyMs),
      error: error?.message ?? `answered HTTP ${answer.status}` };
  }
  const num = (key: string): number | undefined =>
    typeof body[key] === 'number' ? body[key] : undefined;
  const id = typeof body['id'] === 'string' ? body['id'] : undefined;
  const leaderId = typeof body['leaderId'] === 'string' ? body['leaderId'] : null;
  return { endpoint, reachable: true, ...(id === undefined ? {} : { id }), leaderId,
    isLeader: id !== undefined && leaderId === id, ...defined({ term: num('term'),
      raftIndex: num('lastIndex'), appliedIndex: num('appliedIndex'),
      dbSizeBytes: num('dbSizeBytes') }), latencyMs: round(answer.latencyMs) };
}

function healthLine(r: EndpointHealth): string {
  const took = r.tookMs === undefined ? '' : ` (took ${r.tookMs} ms)`;
  return r.health ? `${r.endpoint} is healthy${took}`
    : `${r.endpoint} is unhealthy: ${r.reason ?? 'no reason given'}${took}`;
}

function statusTable(results: readonly EndpointStatus[]): string[] {
  const show = (v: unknown): string => (v === undefined || v === null ? '-' : String(v));
  const header = ['ENDPOINT', 'ID', 'LEADER', 'IS LEADER', 'TERM', 'RAFT INDEX', 'APPLIED',
    'DB SIZE', 'LATENCY'];
  const rows = results.map((r) => r.reachable ? [r.endpoint, show(r.id), show(r.leaderId),
    String(r.isLeader ?? false), show(r.term), show(r.raftIndex), show(r.appliedIndex),
    r.dbSizeBytes === undefined ? '-' : sizeOf(r.dbSizeBytes), `${show(r.latencyMs)} ms`]
    : [r.endpoint, 'unreachable', '-', '-', '-', '-', '-', '-', '-']);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const lines = [header, ...rows].map((row) =>
    row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
  for (const r of results) if (!r.reachable) lines.push(`${r.endpoint}: ${r.error ?? '?'}`);
  return lines;
}

function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value as Record<string, unknown>
      : undefined;
  } catch {
    return undefined;
  }
}

/** The fields of `o` that have a value (the optional fields of EndpointStatus). */
function defined(o: Record<string, number | undefined>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as
    Record<string, number>;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}


