/**
 * Cluster membership in the log (Raft thesis §4): one server added or removed at a time, each
 * change a `config` entry holding the whole new membership, in force on a node as soon as the
 * node appends it (§4.1), whether or not it is committed. New servers join as learners (they
 * replicate but neither vote nor count towards quorums) and are promoted once caught up.
 *
 * `ConfigLog` tracks which membership is in force at each index of a node's log: the base (the
 * snapshot's, or the bootstrap `RaftConfig`'s) and the config entries after it.
 */
import { assert } from '../assert.js';
import type { LogIndex, NodeId } from '../ids.js';
import type { ClientUrlRecord, Entry, Membership, PeerAddrRecord } from './types.js';

/** One single-server change (thesis §4.1): its majorities overlap the previous ones. */
export type MembershipChange =
  /**
   * A new member that replicates the log but does not vote yet; `peerAddr` (`host:port`), when
   * given, is recorded in the membership so that every member learns where to reach it.
   */
  | { readonly kind: 'add-learner'; readonly node: NodeId; readonly peerAddr?: string }
  /** A learner becomes a voter (the leader accepts this once it has caught up). */
  | { readonly kind: 'promote'; readonly node: NodeId }
  /** A voter or learner leaves (the leader itself included: it steps down once committed). */
  | { readonly kind: 'remove'; readonly node: NodeId }
  /**
   * A member's own attributes (etcd's publish): `clientUrl` is where clients reach it. Changes
   * no voter or learner, so every quorum stays the same; the leader proposes it for the member
   * that asked, named by its authenticated link, never by a field it filled in.
   */
  | { readonly kind: 'member-attributes'; readonly node: NodeId; readonly clientUrl: string };

export function isVoter(membership: Membership, id: NodeId): boolean {
  return membership.voters.includes(id);
}

export function isMember(membership: Membership, id: NodeId): boolean {
  return membership.voters.includes(id) || membership.learners.includes(id);
}

/** The membership after `change`, or why the change does not apply to `membership`. */
export function changedMembership(membership: Membership,
  change: MembershipChange): Membership | string {
  const { voters, learners, peerAddrs, clientUrls } = membership;
  const { node } = change;
  switch (change.kind) {
    case 'add-learner': {
      if (isMember(membership, node)) return `${node} is already a member`;
      const problem = change.peerAddr === undefined ? undefined : peerAddrProblem(change.peerAddr);
      if (problem !== undefined) return problem;
      const others = (peerAddrs ?? []).filter((r) => r.id !== node);
      return withRecords({ voters, learners: [...learners, node] },
        change.peerAddr === undefined ? others : [...others, { id: node, addr: change.peerAddr }],
        clientUrls?.filter((r) => r.id !== node));
    }
    case 'promote':
      if (!learners.includes(node)) return `${node} is not a learner`;
      return withRecords({ voters: [...voters, node],
        learners: learners.filter((l) => l !== node) }, peerAddrs, clientUrls);
    case 'remove':
      if (!isMember(membership, node)) return `${node} is not a member`;
      if (voters.length === 1 && voters[0] === node) return `${node} is the last voter`;
      return withRecords({ voters: voters.filter((v) => v !== node),
        learners: learners.filter((l) => l !== node) },
      peerAddrs?.filter((r) => r.id !== node), clientUrls?.filter((r) => r.id !== node));
    case 'member-attributes': {
      if (!isMember(membership, node)) return `${node} is not a member`;
      const problem = clientUrlProblem(change.clientUrl);
      if (problem !== undefined) return problem;
      const others = (clientUrls ?? []).filter((r) => r.id !== node);
      return withRecords({ voters, learners }, peerAddrs,
        [...others, { id: node, url: change.clientUrl }]);
    }
    default:
      return assertNeverChange(change);
  }
}

/** The client URL `id` published (undefined: none yet). */
export function clientUrlOfMember(membership: Membership, id: NodeId): string | undefined {
  return membership.clientUrls?.find((r) => r.id === id)?.url;
}

/**
 * `membership` with these records; a list that is absent or empty adds no field, so a
 * membership without addresses or URLs encodes as it did before they were recorded.
 */
function withRecords(membership: Membership, peerAddrs: readonly PeerAddrRecord[] | undefined,
  clientUrls: readonly ClientUrlRecord[] | undefined): Membership {
  return { ...membership,
    ...(peerAddrs === undefined || peerAddrs.length === 0 ? {} : { peerAddrs }),
    ...(clientUrls === undefined || clientUrls.length === 0 ? {} : { clientUrls }) };
}

/**
 * The longest peer address a membership may record. Unit: UTF-16 code units. Default: 262.
 * Why: a DNS name has at most 253 characters; with brackets, a colon and a 5-digit port, 262.
 */
export const PEER_ADDR_CHARS_MAX = 262;

/** `host:port`: a DNS name or IPv4 literal, or an IPv6 literal in brackets; a decimal port. */
const PEER_ADDR =
  /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

/**
 * Why `addr` is not a peer address a membership may record (undefined: it is). Total: the
 * addresses come from config entries and snapshots, which a hostile leader or disk may fill.
 */
export function peerAddrProblem(addr: unknown): string | undefined {
  if (typeof addr !== 'string') return 'a peer address must be a string';
  if (addr.length > PEER_ADDR_CHARS_MAX) {
    return `a peer address is longer than ${PEER_ADDR_CHARS_MAX} characters`;
  }
  const match = PEER_ADDR.exec(addr);
  if (match === null) return `not a host:port peer address: ${JSON.stringify(addr.slice(0, 64))}`;
  const port = Number(match[1]);
  return port >= 1 && port <= 65_535 ? undefined : `peer address port out of [1, 65535]: ${port}`;
}

/**
 * The peer address records in `raw` (undefined: none, as in entries written before addresses
 * were recorded), or why they are not valid for a membership of `members`: at most one record
 * per member, each naming a member, each address valid. Total.
 */
export function validatePeerAddrs(raw: unknown,
  members: ReadonlySet<string>): PeerAddrRecord[] | string {
  const records = validateMemberRecords(raw, members, 'peerAddrs', 'addr', peerAddrProblem);
  return typeof records === 'string' ? records
    : records.map(({ id, value }) => ({ id, addr: value }));
}

/**
 * The `{id, [key]}` records of `field` in `raw` (none when absent), or why they are not valid
 * for a membership of `members`: at most one per member, each naming a member, each value
 * passing `problemOf`. Total: `raw` comes from a log entry or a snapshot (hostile until checked).
 */
function validateMemberRecords(raw: unknown, members: ReadonlySet<string>, field: string,
  key: string, problemOf: (value: unknown) => string | undefined,
): { id: NodeId; value: string }[] | string {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > members.size) {
    return `${field} must be an array of at most one record per member`;
  }
  const seen = new Set<string>();
  const records: { id: NodeId; value: string }[] = [];
  for (const record of raw as unknown[]) {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      return `${field} must hold {id, ${key}} objects`;
    }
    const { id, [key]: value } = record as Record<string, unknown>;
    if (typeof id !== 'string' || !members.has(id)) {
      return `${field} names a node that is not a member`;
    }
    if (seen.has(id)) return `${field} lists ${id} twice`;
    seen.add(id);
    const problem = problemOf(value);
    if (problem !== undefined) return `${field} of ${id}: ${problem}`;
    records.push({ id: id as NodeId, value: value as string });
  }
  return records;
}

/**
 * The longest client URL a membership may record. Unit: UTF-16 code units. Default: 270.
 * Why: `https://` and a peer address at its longest (PEER_ADDR_CHARS_MAX).
 */
export const CLIENT_URL_CHARS_MAX = 8 + PEER_ADDR_CHARS_MAX;

/**
 * Why `url` is not a client URL a membership may record (undefined: it is): `http://` or
 * `https://`, then a peer address's `host:port`, nothing after it. Total, as `peerAddrProblem`.
 */
export function clientUrlProblem(url: unknown): string | undefined {
  if (typeof url !== 'string') return 'a client URL must be a string';
  if (url.length > CLIENT_URL_CHARS_MAX) {
    return `a client URL is longer than ${CLIENT_URL_CHARS_MAX} characters`;
  }
  const match = /^https?:\/\/(.*)$/.exec(url);
  if (match === null) {
    return `not an http:// or https:// client URL: ${JSON.stringify(url.slice(0, 64))}`;
  }
  const problem = peerAddrProblem(match[1]);
  return problem === undefined ? undefined : `client URL: ${problem.replace(/peer address/g,
    'host:port')}`;
}

/**
 * The client URL records in `raw` (none when absent), or why they are not valid for a
 * membership of `members`: at most one per member, each naming a member, each URL valid. Total.
 */
export function validateClientUrls(raw: unknown,
  members: ReadonlySet<string>): ClientUrlRecord[] | string {
  const records = validateMemberRecords(raw, members, 'clientUrls', 'url', clientUrlProblem);
  return typeof records === 'string' ? records
    : records.map(({ id, value }) => ({ id, url: value }));
}

function assertNeverChange(change: never): never {
  throw new Error(`unknown membership change ${JSON.stringify(change)}`);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The bytes of a `config` entry: the whole membership, as UTF-8 JSON. `peerAddrs` and
 * `clientUrls` only when some are recorded, so a membership without any encodes as before
 * they existed.
 */
export function encodeMembership(membership: Membership): Uint8Array {
  const records = membership.peerAddrs ?? [];
  const urls = membership.clientUrls ?? [];
  return encoder.encode(JSON.stringify({ voters: membership.voters,
    learners: membership.learners,
    ...(records.length === 0 ? {} : { peerAddrs: records.map(({ id, addr }) => ({ id, addr })) }),
    ...(urls.length === 0 ? {} : { clientUrls: urls.map(({ id, url }) => ({ id, url })) }),
  }));
}

/** The membership in a `config` entry's bytes, or why they are not one. Total. */
export function decodeMembership(data: Uint8Array): Membership | string {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return 'config entry is not UTF-8 JSON';
  }
  if (typeof value !== 'object' || value === null) return 'config entry is not an object';
  const { voters, learners, peerAddrs, clientUrls } = value as Record<string, unknown>;
  const ids = (x: unknown): x is NodeId[] => Array.isArray(x) &&
    x.every((id) => typeof id === 'string' && id.length > 0);
  if (!ids(voters) || !ids(learners)) return 'config entry lists must hold node ids';
  if (voters.length === 0) return 'config entry has no voter';
  const members = new Set<string>([...voters, ...learners]);
  if (members.size !== voters.length + learners.length) return 'config entry lists a node twice';
  const records = validatePeerAddrs(peerAddrs, members);
  if (typeof records === 'string') return `config entry: ${records}`;
  const urls = validateClientUrls(clientUrls, members);
  if (typeof urls === 'string') return `config entry: ${urls}`;
  return withRecords({ voters, learners }, records, urls);
}

/**
 * The memberships of a node's log: the base (in force at `baseIndex`) and each config entry
 * after it, in index order. Follows the log through appends, truncations, compaction and
 * installed snapshots; the membership in force is the last one (thesis §4.1).
 */
export class ConfigLog {
  private configs: { readonly index: LogIndex; readonly membership: Membership }[] = [];

  constructor(private base: Membership, private baseIndex: number, entries: readonly Entry[]) {
    this.append(entries);
  }

  current(): Membership {
    return this.configs[this.configs.length - 1]?.membership ?? this.base;
  }

  /**
   * Whether `id` is a member (voter or learner) of the base or of any config entry after it:
   * the senders this log vouches for. Uncommitted changes count (a member being added must be
   * heard), and so do the configurations before them (a member being removed still leads or
   * answers until its removal commits and the log is compacted past it).
   */
  knows(id: NodeId): boolean {
    if (isMember(this.base, id)) return true;
    for (const config of this.configs) if (isMember(config.membership, id)) return true;
    return false;
  }

  /** The index of the last config entry (0 when only the base holds). */
  latestIndex(): number {
    return this.configs[this.configs.length - 1]?.index ?? 0;
  }

  /** The membership in force at `index` (the last config entry at or before it). */
  at(index: number): Membership {
    assert(index >= this.baseIndex, () => `membership at ${index}, below the base ${this.baseIndex}`);
    let found = this.base;
    for (const config of this.configs) {
      if (config.index > index) break;
      found = config.membership;
    }
    return found;
  }

  /** New entries at the end of the log (the caller truncated first, if they replace some). */
  append(entries: readonly Entry[]): void {
    for (const entry of entries) {
      if (entry.kind !== 'config') continue;
      assert(entry.index > this.latestIndex(), () => `config entry ${entry.index} out of order`);
      const membership = decodeMembership(entry.data);
      assert(typeof membership !== 'string',
        () => `config entry ${entry.index}: ${String(membership)}`);
      this.configs.push({ index: entry.index, membership });
    }
  }

  /** Entries from `index` on were removed (Raft §5.3): their config entries no longer hold. */
  truncateFrom(index: number): void {
    while ((this.configs[this.configs.length - 1]?.index ?? 0) >= index) this.configs.pop();
  }

  /** The log now starts after `index` (compaction): what held there becomes the base. */
  compact(index: number): void {
    if (index <= this.baseIndex) return;
    this.base = this.at(index);
    this.baseIndex = index;
    this.configs = this.configs.filter((c) => c.index > index);
  }

  /** An installed snapshot replaced the log. */
  restore(index: number, membership: Membership): void {
    this.base = membership;
    this.baseIndex = index;
    this.configs = [];
  }
}
