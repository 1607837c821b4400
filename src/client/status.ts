/**
 * The cluster as its members see it: every endpoint is asked for `/v1/status` at once (and any
 * member named in an answer whose client URL was not asked), and the answers are merged into
 * one view: the leader, its term and commit index, and each member's role and health.
 * Every field a server may leave out is optional here, so older and newer servers both work.
 */
import type { ClientEndpoint } from '../ports/client-transport.js';
import { CoordError } from '../errors.js';
import { judge } from './caller.js';
import { TimedSignal, type ClientContext } from './context.js';
import { originOf } from './endpoints.js';

/** One member as the cluster reports it. */
export interface MemberStatus {
  readonly id: string;
  readonly clientUrl?: string;
  readonly peerUrl?: string;
  /**
   * `up`: it answered now; `down`: its client URL was asked and did not answer; `unknown`: no
   * client URL is known for it, so it could not be asked.
   */
  readonly health: 'up' | 'down' | 'unknown';
  /** Its role (its own answer when up, else the leader's view): leader, follower, ... */
  readonly role?: string;
  readonly term?: number;
  readonly leaderId?: string;
  readonly commitIndex?: number;
  readonly appliedIndex?: number;
  readonly lastIndex?: number;
  readonly revision?: number;
  /** The leader's view of how far its log matches (followers only). */
  readonly matchIndex?: number;
  /** The leader's view: its replication state towards the member (probe, replicate, ...). */
  readonly replication?: string;
  /** The leader's view: time since the member last answered it. Unit: ms. */
  readonly lastContactMsAgo?: number;
  /** Why it is down. */
  readonly error?: string;
  /** The member's own answer: its conclave version. */
  readonly version?: string;
  /** The member's own answer: how long its process has served. Unit: ms. */
  readonly uptimeMs?: number;
  /** The member's own answer: the bytes its data directory holds on disk. */
  readonly dataSizeBytes?: number;
  /**
   * The member's own answer: the live keys' size in its store (etcd's "DB SIZE"; the quota
   * counts it). Unit: bytes.
   */
  readonly dbSizeBytes?: number;
}

/** One endpoint asked, and what came of it. */
export interface EndpointStatus {
  readonly url: string;
  readonly ok: boolean;
  /** The member that answered. */
  readonly id?: string;
  readonly error?: string;
}

export interface ClusterStatus {
  /** The leader of the highest term seen, if any member knows one. */
  readonly leaderId?: string;
  readonly leaderUrl?: string;
  /** The highest term any member reported. */
  readonly term?: number;
  /** The leader's commit index (or the highest reported, without a leader). */
  readonly commitIndex?: number;
  /** The leader's store revision (or the highest reported). */
  readonly revision?: number;
  /** In id order. */
  readonly members: readonly MemberStatus[];
  readonly endpoints: readonly EndpointStatus[];
}

interface Answer {
  readonly url: string;
  readonly body?: Record<string, unknown>;
  readonly error?: string;
}

/**
 * Asks every endpoint, each within `requestTimeoutMs`; rejects with CONCLAVE_UNAVAILABLE only
 * when none answers, or with an AbortError when `signal` aborts.
 */
export async function gatherStatus(c: ClientContext, signal: AbortSignal):
  Promise<ClusterStatus> {
  const timeoutMs = c.config.requestTimeoutMs;
  const ask = async (url: ClientEndpoint): Promise<Answer> => {
    const timed = new TimedSignal(c.timer, timeoutMs, [signal]);
    let result;
    try {
      result = await c.transport.call(url, { kind: 'status' }, { signal: timed.signal });
    } finally {
      timed.done();
    }
    if (result.kind !== 'ok') {
      return { url, error: judge(result, timed.timedOut, timeoutMs).error.message };
    }
    const body = result.body;
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? { url, body: body as Record<string, unknown> }
      : { url, error: 'answered a status that is not a JSON object' };
  };
  const endpoints = c.router.endpoints;
  const answers = await Promise.all(endpoints.map(ask));
  const asked = new Set(endpoints);
  const more = [...new Set(answers.flatMap((a) => memberList(a.body))
    .map((m) => m.clientUrl).filter((u): u is string => u !== undefined && !asked.has(u)))];
  answers.push(...await Promise.all(more.map(ask)));
  if (answers.every((a) => a.body === undefined)) {
    throw new CoordError('CONCLAVE_UNAVAILABLE', `no endpoint answered: ${
      answers.map((a) => `${a.url}: ${a.error ?? '?'}`).join('; ')}`);
  }
  return mergeStatus(answers);
}

interface ListedMember {
  readonly id: string;
  readonly clientUrl?: string;
  readonly peerUrl?: string;
  readonly role?: string;
  readonly matchIndex?: number;
  readonly replication?: string;
  readonly lastContactMsAgo?: number;
}

function memberList(body: Record<string, unknown> | undefined): ListedMember[] {
  const members = body?.['members'];
  if (!Array.isArray(members)) return [];
  return members.flatMap((m: Record<string, unknown> | null | undefined) => {
    const id = str(m?.['id']);
    if (id === undefined) return [];
    const clientUrlText = str(m?.['clientUrl']);
    const clientUrl = clientUrlText === undefined ? undefined : originOf(clientUrlText);
    return [{ id, ...opt('clientUrl', clientUrl), ...opt('peerUrl', str(m?.['peerUrl'])),
      ...opt('role', str(m?.['role'])), ...opt('matchIndex', num(m?.['matchIndex'])),
      ...opt('replication', str(m?.['replication'])),
      ...opt('lastContactMsAgo', num(m?.['lastContactMsAgo'])) }];
  });
}

/** Merges the answers into one view (exported for tests). */
export function mergeStatus(answers: readonly Answer[]): ClusterStatus {
  const own = new Map<string, { url: string; body: Record<string, unknown> }>();
  for (const a of answers) {
    const id = str(a.body?.['id']);
    if (a.body !== undefined && id !== undefined) own.set(id, { url: a.url, body: a.body });
  }
  const leaderAnswer = [...own.values()].filter((o) => o.body['role'] === 'leader')
    .sort((x, y) => (num(y.body['term']) ?? 0) - (num(x.body['term']) ?? 0))[0];
  const terms = [...own.values()].map((o) => num(o.body['term'])).filter(isNumber);
  const listed = new Map<string, ListedMember>();
  // The leader's list first: its role and matchIndex views are the freshest.
  const lists = [leaderAnswer?.body, ...answers.map((a) => a.body)];
  for (const m of lists.flatMap(memberList)) if (!listed.has(m.id)) listed.set(m.id, m);
  const byUrl = new Map(answers.map((a) => [a.url, a]));
  const leaderId = leaderAnswer !== undefined ? str(leaderAnswer.body['id'])
    : mostReported([...own.values()].map((o) => str(o.body['leaderId'])));
  const named = leaderId === undefined ? [] : [leaderId];
  const ids = [...new Set([...own.keys(), ...listed.keys(), ...named])].sort();
  const members = ids.map((id) => memberStatus(id, own.get(id), listed.get(id), byUrl));
  const leader = members.find((m) => m.id === leaderId);
  const highest = (field: string): number | undefined => {
    const values = [...own.values()].map((o) => num(o.body[field])).filter(isNumber);
    return values.length > 0 ? Math.max(...values) : undefined;
  };
  return {
    ...opt('leaderId', leaderId),
    ...opt('leaderUrl', leaderAnswer?.url ?? leader?.clientUrl),
    ...opt('term', terms.length > 0 ? Math.max(...terms) : undefined),
    ...opt('commitIndex', num(leaderAnswer?.body['commitIndex']) ?? highest('commitIndex')),
    ...opt('revision', num(leaderAnswer?.body['revision']) ?? highest('revision')),
    members,
    endpoints: answers.map((a) => ({ url: a.url, ok: a.body !== undefined,
      ...opt('id', str(a.body?.['id'])), ...opt('error', a.error) })),
  };
}

function memberStatus(id: string, self: { url: string; body: Record<string, unknown> } | undefined,
  listed: ListedMember | undefined, byUrl: ReadonlyMap<string, Answer>): MemberStatus {
  const clientUrl = listed?.clientUrl ?? self?.url;
  const body = self?.body;
  const askedAnswer = clientUrl === undefined ? undefined : byUrl.get(clientUrl);
  const health = body !== undefined ? 'up' : askedAnswer !== undefined ? 'down' : 'unknown';
  return {
    id, health,
    ...opt('clientUrl', clientUrl),
    ...opt('peerUrl', listed?.peerUrl),
    ...opt('role', str(body?.['role']) ?? listed?.role),
    ...opt('term', num(body?.['term'])),
    ...opt('leaderId', str(body?.['leaderId'])),
    ...opt('commitIndex', num(body?.['commitIndex'])),
    ...opt('appliedIndex', num(body?.['appliedIndex'])),
    ...opt('lastIndex', num(body?.['lastIndex'])),
    ...opt('revision', num(body?.['revision'])),
    ...opt('matchIndex', listed?.matchIndex),
    ...opt('replication', listed?.replication),
    ...opt('lastContactMsAgo', listed?.lastContactMsAgo),
    ...opt('error', health === 'down' ? askedAnswer?.error : undefined),
    ...opt('version', str(body?.['version'])),
    ...opt('uptimeMs', num(body?.['uptimeMs'])),
    ...opt('dataSizeBytes', num(body?.['dataSizeBytes'])),
    ...opt('dbSizeBytes', num(body?.['dbSizeBytes'])),
  };
}

function mostReported(values: readonly (string | undefined)[]): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0];
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function isNumber(value: number | undefined): value is number {
  return value !== undefined;
}

/** `{ [key]: value }` when value is defined, else `{}` (exactOptionalPropertyTypes). */
function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
