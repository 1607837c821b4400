/**
 * Raft's wire messages: plain data (no classes, so msgpack encodes them as they are), one
 * discriminated union that later work extends (snapshot, timeout-now, read-index). Every message
 * carries the sender's `term`: Raft's generation clock (§5.1). The sender's id is not in the
 * message; the transport knows who sent it.
 */
import { assertNever } from '../assert.js';
import type { LogIndex, NodeId, Term } from '../ids.js';
import { decodeMembership, validateClientUrls, validatePeerAddrs } from './membership.js';
import type { Entry, EntryKind, Membership, SnapshotMeta } from './types.js';

/**
 * Pre-vote (Raft thesis §9.6): "would you vote for me if I started an election?". `term` is the
 * sender's term + 1; the sender's own term does not change, and neither does the receiver's.
 */
export interface PreVoteRequest {
  readonly kind: 'pre-vote';
  readonly term: Term;
  readonly lastLogIndex: LogIndex;
  readonly lastLogTerm: Term;
}

/** `term` is the request's term when granted, the voter's own term when refused. */
export interface PreVoteResponse {
  readonly kind: 'pre-vote-response';
  readonly term: Term;
  readonly granted: boolean;
}

/** RequestVote (Raft §5.2); the sender has raised its term and voted for itself. */
export interface VoteRequest {
  readonly kind: 'vote';
  readonly term: Term;
  readonly lastLogIndex: LogIndex;
  readonly lastLogTerm: Term;
  /**
   * Set (true) by a candidate that campaigns because its leader sent it `timeout-now`
   * (leadership transfer, Raft thesis §3.10): voters grant it even while they still hear from
   * that leader (leader stickiness), as etcd's campaignTransfer. Absent otherwise.
   */
  readonly transfer?: true;
}

export interface VoteResponse {
  readonly kind: 'vote-response';
  readonly term: Term;
  readonly granted: boolean;
}

/** AppendEntries (Raft §5.3): `entries` follow (prevLogIndex, prevLogTerm) consecutively. */
export interface AppendRequest {
  readonly kind: 'append';
  readonly term: Term;
  readonly prevLogIndex: LogIndex;
  readonly prevLogTerm: Term;
  readonly entries: readonly Entry[];
  /** The leader's commit index; the follower commits up to min(this, last new entry). */
  readonly commitIndex: LogIndex;
}

/**
 * The answer to `append`.
 * - `success`: the follower's log now matches the leader's up to `index` (durably, unless the
 *   test-only mutant `ackBeforeSync` is on).
 * - refused: `index` is the `prevLogIndex` that did not match; (`hintIndex`, `hintTerm`) is
 *   the follower's largest index <= min(prevLogIndex, its last index) whose term is <= the
 *   request's prevLogTerm, and that term; the leader jumps there (fast back-off).
 * - a refusal with `index` 0 answers a request from a lower term: it only carries `term`.
 */
export interface AppendResponse {
  readonly kind: 'append-response';
  readonly term: Term;
  readonly success: boolean;
  readonly index: LogIndex;
  readonly hintIndex: LogIndex;
  readonly hintTerm: Term;
}

/** Keeps followers from starting elections; `commitIndex` is min(leader's, follower's match). */
export interface HeartbeatRequest {
  readonly kind: 'heartbeat';
  readonly term: Term;
  readonly commitIndex: LogIndex;
  /**
   * The number of this heartbeat round within the leader's term (ReadIndex, thesis §6.4): an
   * answer echoing it confirms that the sender still led when the round was sent. Absent: 0.
   */
  readonly readRound?: number;
}

export interface HeartbeatResponse {
  readonly kind: 'heartbeat-response';
  readonly term: Term;
  /** The request's `readRound`, echoed. Absent: 0. */
  readonly readRound?: number;
}

/**
 * A follower forwards a client's linearizable read to its leader (thesis §6.4, as etcd): the
 * leader answers with the index the read must wait for, once its leadership is confirmed.
 */
export interface ReadIndexRequest {
  readonly kind: 'read-index';
  readonly term: Term;
  /** The follower's id for the read (at most READ_REQUEST_ID_CHARS_MAX characters). */
  readonly requestId: string;
}

/**
 * `success`: serve the read once the follower applied `index`. Refused (`index` 0): the sender
 * is not the leader any more, or it dropped the read (stepping down, too many pending).
 */
export interface ReadIndexResponse {
  readonly kind: 'read-index-response';
  readonly term: Term;
  readonly requestId: string;
  readonly success: boolean;
  readonly index: LogIndex;
}

/**
 * Leadership transfer (Raft thesis §3.10): the leader, having brought this follower's log up to
 * date, tells it to start an election now, skipping pre-vote and the election timeout.
 */
export interface TimeoutNowRequest {
  readonly kind: 'timeout-now';
  readonly term: Term;
}

/**
 * InstallSnapshot (Raft §7), one chunk: the leader's log no longer holds what this follower
 * needs, so it sends its newest snapshot, `data` being bytes [offsetBytes, offsetBytes +
 * data.length) of it. Chunks go one at a time; the follower says where to go on (resumable),
 * and checks the CRC-32C of the whole before installing it.
 */
export interface SnapshotRequest {
  readonly kind: 'snapshot';
  readonly term: Term;
  readonly meta: SnapshotMeta;
  /** The snapshot's size. Unit: bytes. */
  readonly totalBytes: number;
  /** CRC-32C of the whole snapshot data (src/core/checksum.ts). */
  readonly checksum: number;
  /** Where `data` starts in the snapshot. Unit: bytes. */
  readonly offsetBytes: number;
  readonly data: Uint8Array;
}

/**
 * A chunk's answer: the next byte the follower expects of snapshot `snapshotIndex` (0: start
 * again). The last chunk is answered by an `append-response` (success, index = the snapshot's)
 * once the snapshot is durable.
 */
export interface SnapshotResponse {
  readonly kind: 'snapshot-response';
  readonly term: Term;
  readonly snapshotIndex: LogIndex;
  readonly nextOffsetBytes: number;
}

export type RaftMessage =
  | PreVoteRequest
  | PreVoteResponse
  | VoteRequest
  | VoteResponse
  | AppendRequest
  | AppendResponse
  | HeartbeatRequest
  | HeartbeatResponse
  | TimeoutNowRequest
  | ReadIndexRequest
  | ReadIndexResponse
  | SnapshotRequest
  | SnapshotResponse;

export type RaftMessageKind = RaftMessage['kind'];

/** A message to send, as it leaves the core in `Ready`. */
export interface RaftEnvelope {
  readonly to: NodeId;
  readonly message: RaftMessage;
}

/** The answer of {@link validateRaftMessage} for a value that is not a valid message. */
export interface RaftMessageError {
  readonly error: string;
}

const ENTRY_KINDS: ReadonlySet<string> = new Set<EntryKind>(['normal', 'noop', 'config']);
/** The longest read request id a message may carry. Unit: UTF-16 code units. */
export const READ_REQUEST_ID_CHARS_MAX = 128;
/** The longest node id a message may carry. Unit: UTF-16 code units. */
export const NODE_ID_CHARS_MAX = 256;
/**
 * The highest term a member ever holds: 2^31, far above any term elections reach (one election
 * a second for 68 years), far below 2^53 (where term + 1 stops being a safe integer). A message
 * with a higher term is rejected (`term-out-of-range`) and a member at TERM_MAX no longer
 * campaigns, so one forged frame cannot push the cluster to a term it cannot leave.
 */
export const TERM_MAX = 2 ** 31;
/** The most members a membership may list. */
export const MEMBERS_MAX = 1024;
const LISTED_ENTRIES_MAX = 4;

/**
 * A short, deterministic, one-line description (for traces, transcripts and trace hashes),
 * e.g. `append t=3 prev=5/2 ents=[6/3,7/3] commit=5`.
 */
export function describeRaftMessage(m: RaftMessage): string {
  switch (m.kind) {
    case 'pre-vote':
      return `${m.kind} t=${m.term} last=${m.lastLogIndex}/${m.lastLogTerm}`;
    case 'vote':
      return `${m.kind} t=${m.term} last=${m.lastLogIndex}/${m.lastLogTerm}` +
        (m.transfer === true ? ' transfer' : '');
    case 'pre-vote-response':
    case 'vote-response':
      return `${m.kind} t=${m.term} ${m.granted ? 'granted' : 'refused'}`;
    case 'append':
      return `append t=${m.term} prev=${m.prevLogIndex}/${m.prevLogTerm} ` +
        `ents=${describeEntries(m.entries)} commit=${m.commitIndex}`;
    case 'append-response':
      return m.success
        ? `append-response t=${m.term} ok index=${m.index}`
        : `append-response t=${m.term} refused index=${m.index} hint=${m.hintIndex}/${m.hintTerm}`;
    case 'heartbeat':
      return `heartbeat t=${m.term} commit=${m.commitIndex}${describeRound(m.readRound)}`;
    case 'heartbeat-response':
      return `heartbeat-response t=${m.term}${describeRound(m.readRound)}`;
    case 'read-index':
      return `read-index t=${m.term} id=${m.requestId}`;
    case 'read-index-response':
      return m.success
        ? `read-index-response t=${m.term} id=${m.requestId} index=${m.index}`
        : `read-index-response t=${m.term} id=${m.requestId} refused`;
    case 'snapshot':
      return `snapshot t=${m.term} at=${m.meta.index}/${m.meta.term} ` +
        `bytes=${m.offsetBytes}+${m.data.length}/${m.totalBytes}`;
    case 'snapshot-response':
      return `snapshot-response t=${m.term} at=${m.snapshotIndex} next=${m.nextOffsetBytes}`;
    case 'timeout-now':
      return `timeout-now t=${m.term}`;
    default:
      return assertNever(m, 'raft message kind');
  }
}

function describeRound(readRound: number | undefined): string {
  return readRound === undefined || readRound === 0 ? '' : ` round=${readRound}`;
}

function describeEntries(entries: readonly Entry[]): string {
  const one = (e: Entry): string =>
    `${e.index}/${e.term}${e.kind === 'normal' ? '' : `:${e.kind}`}`;
  const first = entries[0];
  const last = entries[entries.length - 1];
  if (first === undefined || last === undefined) return '[]';
  if (entries.length <= LISTED_ENTRIES_MAX) return `[${entries.map(one).join(',')}]`;
  return `[${one(first)}..${one(last)} n=${entries.length}]`;
}

/**
 * Checks that a decoded value is a well-formed `RaftMessage` and returns a fresh copy holding
 * only the known fields. Total: returns `{ error }` for anything else and never throws. Checks
 * shape (types, non-negative safe integers) and the relations the core relies on: terms in a
 * message never exceed its term, entries are consecutive after prevLogIndex with terms that do
 * not decrease, index 0 has term 0.
 */
export function validateRaftMessage(value: unknown): RaftMessage | RaftMessageError {
  try {
    return validateUnsafe(value);
  } catch (error) {
    // Getters or proxies on hostile input: still a value, never a crash.
    return { error: `unreadable message: ${error instanceof Error ? error.message : 'unknown'}` };
  }
}

class Invalid extends Error {}

function validateUnsafe(value: unknown): RaftMessage | RaftMessageError {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { error: 'message must be an object' };
  }
  const v = value as Record<string, unknown>;
  const kind = v['kind'];
  try {
    const term = count(v, 'term') as Term;
    switch (kind) {
      case 'pre-vote':
        return { kind, term, ...lastLog(v, term) };
      case 'vote':
        return { kind, term, ...lastLog(v, term), ...transferFlag(v) };
      case 'pre-vote-response':
      case 'vote-response':
        return { kind, term, granted: bool(v, 'granted') };
      case 'append':
        return validateAppend(v, term);
      case 'append-response':
        return validateAppendResponse(v, term);
      case 'heartbeat':
        return { kind, term, commitIndex: count(v, 'commitIndex') as LogIndex, ...readRound(v) };
      case 'heartbeat-response':
        return { kind, term, ...readRound(v) };
      case 'timeout-now':
        return { kind, term };
      case 'read-index':
        return { kind, term, requestId: requestId(v) };
      case 'read-index-response': {
        const success = bool(v, 'success');
        const index = count(v, 'index') as LogIndex;
        check(success || index === 0, 'a refusal carries index 0');
        return { kind, term, requestId: requestId(v), success, index };
      }
      case 'snapshot':
        return validateSnapshot(v, term);
      case 'snapshot-response':
        return { kind, term, snapshotIndex: count(v, 'snapshotIndex') as LogIndex,
          nextOffsetBytes: count(v, 'nextOffsetBytes') };
      default:
        return { error: `unknown message kind: ${safeString(kind)}` };
    }
  } catch (error) {
    if (error instanceof Invalid) return { error: `${safeString(kind)}: ${error.message}` };
    throw error;
  }
}

function lastLog(v: Record<string, unknown>, term: Term): {
  lastLogIndex: LogIndex; lastLogTerm: Term;
} {
  const lastLogIndex = count(v, 'lastLogIndex') as LogIndex;
  const lastLogTerm = count(v, 'lastLogTerm') as Term;
  check(lastLogTerm <= term, 'lastLogTerm exceeds term');
  check(lastLogIndex > 0 || lastLogTerm === 0, 'index 0 must have term 0');
  return { lastLogIndex, lastLogTerm };
}

function readRound(v: Record<string, unknown>): { readRound?: number } {
  if (v['readRound'] === undefined) return {};
  return { readRound: count(v, 'readRound') };
}

function requestId(v: Record<string, unknown>): string {
  const x = v['requestId'];
  check(typeof x === 'string' && x.length > 0 && x.length <= READ_REQUEST_ID_CHARS_MAX,
    `requestId must be a string of 1 to ${READ_REQUEST_ID_CHARS_MAX} characters`);
  return x;
}

function transferFlag(v: Record<string, unknown>): { transfer?: true } {
  const x = v['transfer'];
  if (x === undefined || x === false) return {};
  check(x === true, 'transfer must be true when present');
  return { transfer: true };
}

function validateSnapshot(v: Record<string, unknown>, term: Term): SnapshotRequest {
  const raw = v['meta'];
  check(typeof raw === 'object' && raw !== null && !Array.isArray(raw), 'meta must be an object');
  const m = raw as Record<string, unknown>;
  const index = count(m, 'index') as LogIndex;
  const metaTerm = count(m, 'term') as Term;
  check(index > 0 && metaTerm > 0 && metaTerm <= term, 'meta must have index and term above 0, ' +
    'term not above the message term');
  const membership = validateMembership(m['membership']);
  const totalBytes = count(v, 'totalBytes');
  const checksum = count(v, 'checksum');
  check(checksum <= 0xffff_ffff, 'checksum must fit 32 bits');
  const offsetBytes = count(v, 'offsetBytes');
  const data = v['data'];
  check(data instanceof Uint8Array, 'data must be bytes');
  check(offsetBytes + data.length <= totalBytes, 'chunk ends past totalBytes');
  return { kind: 'snapshot', term, meta: { index, term: metaTerm, membership }, totalBytes,
    checksum, offsetBytes, data };
}

/**
 * A membership from the wire: two disjoint lists of distinct, non-empty node ids, and at most
 * one valid recorded peer address and one valid published client URL per member.
 */
function validateMembership(raw: unknown): Membership {
  check(typeof raw === 'object' && raw !== null && !Array.isArray(raw),
    'membership must be an object');
  const m = raw as Record<string, unknown>;
  const voters = nodeIds(m['voters'], 'voters');
  const learners = nodeIds(m['learners'], 'learners');
  check(voters.length > 0, 'membership.voters must not be empty');
  const all = new Set([...voters, ...learners]);
  check(all.size === voters.length + learners.length,
    'membership lists a node twice (or as voter and learner)');
  const peerAddrs = validatePeerAddrs(m['peerAddrs'], all);
  check(typeof peerAddrs !== 'string', `membership.${String(peerAddrs)}`);
  const clientUrls = validateClientUrls(m['clientUrls'], all);
  check(typeof clientUrls !== 'string', `membership.${String(clientUrls)}`);
  return { voters, learners, ...(peerAddrs.length === 0 ? {} : { peerAddrs }),
    ...(clientUrls.length === 0 ? {} : { clientUrls }) };
}

function nodeIds(raw: unknown, field: string): NodeId[] {
  check(Array.isArray(raw) && raw.length <= MEMBERS_MAX,
    `membership.${field} must be an array of at most ${MEMBERS_MAX} ids`);
  return raw.map((x) => {
    check(typeof x === 'string' && x.length > 0 && x.length <= NODE_ID_CHARS_MAX,
      `membership.${field} must hold non-empty strings of at most ${NODE_ID_CHARS_MAX} characters`);
    return x as NodeId;
  });
}

function validateAppend(v: Record<string, unknown>, term: Term): AppendRequest {
  const prevLogIndex = count(v, 'prevLogIndex') as LogIndex;
  const prevLogTerm = count(v, 'prevLogTerm') as Term;
  const commitIndex = count(v, 'commitIndex') as LogIndex;
  check(prevLogTerm <= term, 'prevLogTerm exceeds term');
  check(prevLogIndex > 0 || prevLogTerm === 0, 'index 0 must have term 0');
  const raw = v['entries'];
  check(Array.isArray(raw), 'entries must be an array');
  const entries: Entry[] = [];
  let previousTerm: number = prevLogTerm;
  for (let i = 0; i < raw.length; i++) {
    const entry = validateEntry(raw[i], i);
    check(entry.index === prevLogIndex + 1 + i, `entries[${i}].index is not consecutive`);
    check(entry.term >= previousTerm, `entries[${i}].term decreases`);
    check(entry.term <= term, `entries[${i}].term exceeds the message term`);
    previousTerm = entry.term;
    entries.push(entry);
  }
  return { kind: 'append', term, prevLogIndex, prevLogTerm, entries, commitIndex };
}

function validateEntry(raw: unknown, i: number): Entry {
  check(typeof raw === 'object' && raw !== null && !Array.isArray(raw),
    `entries[${i}] must be an object`);
  const e = raw as Record<string, unknown>;
  const index = count(e, 'index') as LogIndex;
  const term = count(e, 'term') as Term;
  check(index > 0 && term > 0, `entries[${i}] must have index and term above 0`);
  const kind = e['kind'];
  check(typeof kind === 'string' && ENTRY_KINDS.has(kind), `entries[${i}].kind is unknown`);
  const data = e['data'];
  check(data instanceof Uint8Array, `entries[${i}].data must be bytes`);
  if (kind === 'config') {
    const membership = decodeMembership(data);
    check(typeof membership !== 'string', `entries[${i}]: ${String(membership)}`);
  }
  return { index, term, kind: kind as EntryKind, data };
}

function validateAppendResponse(v: Record<string, unknown>, term: Term): AppendResponse {
  const success = bool(v, 'success');
  const index = count(v, 'index') as LogIndex;
  const hintIndex = count(v, 'hintIndex') as LogIndex;
  const hintTerm = count(v, 'hintTerm') as Term;
  check(hintTerm <= term, 'hintTerm exceeds term');
  check(hintIndex <= index, 'hintIndex exceeds index');
  return { kind: 'append-response', term, success, index, hintIndex, hintTerm };
}

function count(v: Record<string, unknown>, field: string): number {
  const x = v[field];
  check(typeof x === 'number' && Number.isSafeInteger(x) && x >= 0,
    `${field} must be a non-negative safe integer`);
  return x;
}

function bool(v: Record<string, unknown>, field: string): boolean {
  const x = v[field];
  check(typeof x === 'boolean', `${field} must be a boolean`);
  return x;
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Invalid(message);
}

function safeString(x: unknown): string {
  if (typeof x === 'string') return JSON.stringify(x.length > 40 ? `${x.slice(0, 40)}...` : x);
  return typeof x;
}
