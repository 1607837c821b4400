/**
 * Raft's wire messages: plain data (no classes, so msgpack encodes them as they are), one
 * discriminated union that later work extends (snapshot, timeout-now, read-index). Every message
 * carries the sender's `term`: Raft's generation clock (§5.1). The sender's id is not in the
 * message; the transport knows who sent it.
 */
import { assertNever } from '../assert.js';
import type { LogIndex, NodeId, Term } from '../ids.js';
import type { Entry, EntryKind } from './types.js';

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
}

export interface HeartbeatResponse {
  readonly kind: 'heartbeat-response';
  readonly term: Term;
}

export type RaftMessage =
  | PreVoteRequest
  | PreVoteResponse
  | VoteRequest
  | VoteResponse
  | AppendRequest
  | AppendResponse
  | HeartbeatRequest
  | HeartbeatResponse;

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
const LISTED_ENTRIES_MAX = 4;

/**
 * A short, deterministic, one-line description (for traces, transcripts and trace hashes),
 * e.g. `append t=3 prev=5/2 ents=[6/3,7/3] commit=5`.
 */
export function describeRaftMessage(m: RaftMessage): string {
  switch (m.kind) {
    case 'pre-vote':
    case 'vote':
      return `${m.kind} t=${m.term} last=${m.lastLogIndex}/${m.lastLogTerm}`;
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
      return `heartbeat t=${m.term} commit=${m.commitIndex}`;
    case 'heartbeat-response':
      return `heartbeat-response t=${m.term}`;
    default:
      return assertNever(m, 'raft message kind');
  }
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
      case 'vote':
        return { kind, term, ...lastLog(v, term) };
      case 'pre-vote-response':
      case 'vote-response':
        return { kind, term, granted: bool(v, 'granted') };
      case 'append':
        return validateAppend(v, term);
      case 'append-response':
        return validateAppendResponse(v, term);
      case 'heartbeat':
        return { kind, term, commitIndex: count(v, 'commitIndex') as LogIndex };
      case 'heartbeat-response':
        return { kind, term };
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
