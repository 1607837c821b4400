/**
 * A simulated client of the consistent core, as a recipe (lease holder, election, lock) sees
 * it: callback methods that answer exactly once, after simulated network delay, with `ok`,
 * `failed` (definitely not done) or `unknown` (a write that may have been applied). The client
 * runs on its own drifting clock, reaches members over the simulated network (latency, loss,
 * resets), follows the leader hint of a CONCLAVE_NOT_LEADER answer, and retries on its own
 * until the call's deadline: writes with the same (clientId, sequence), which the store applies
 * at most once; reads, keep-alives and watches freely (they are idempotent).
 *
 * Nothing here reads real (virtual) time: the checkers learn what they need from the members.
 */
import { assert, assertNever } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import type {
  KvApplyResult, KvCompare, KvPutResult, KvRangeRequest, KvRangeResult, KvTxnOp, KvTxnResult,
} from '../../../core/kv/index.js';
import { randomInt, type Random } from '../../../core/random.js';
import type { Clock } from '../../../ports/clock.js';
import type { Timer, TimerHandle } from '../../../ports/timer.js';
import type { Transport } from '../../../ports/transport.js';
import type { KvWrite, LeaseStatus } from '../../../runtime/core/index.js';
import type { CoordErrorCode } from '../../../errors.js';
import type { CoreReply, CoreRequest, LeaseNetMessage } from './core-protocol.js';

/** How a call ended. `sentAtMs`: see {@link SimCoreClient}. */
export type SimAnswer<T> =
  | { readonly kind: 'ok'; readonly value: T; readonly sentAtMs: number }
  | { readonly kind: 'failed'; readonly code: CoordErrorCode; readonly message: string }
  | { readonly kind: 'unknown'; readonly message: string };

export interface SimCoreClientOptions {
  /** The members to reach; the first try goes to a random one. */
  readonly members: readonly NodeId[];
  /**
   * An attempt with no reply after this long is given up: the call goes on at another member.
   * Unit: ms (client clock). Default in the scenario: 2 × electionTimeoutMsMax.
   */
  readonly attemptTimeoutMs: number;
  /** A call ends (failed, or unknown when a write may have applied) after this long. Unit: ms. */
  readonly callTimeoutMs: number;
  /** Pause before retrying when no leader is known. Unit: ms (client clock). */
  readonly retryDelayMs: number;
}

/** One call's options; defaults from the client's. */
export interface CallOptions {
  /** Unit: ms (client clock). */
  readonly timeoutMs?: number;
}

/** A transaction, as etcd's: if every compare holds, `success`, else `failure`. */
export interface SimTxn {
  readonly compare: readonly KvCompare[];
  readonly success: readonly KvTxnOp[];
  readonly failure: readonly KvTxnOp[];
}

type Unstamped<W> = W extends unknown ? Omit<W, 'clientId' | 'sequence'> : never;

type CallOutcome =
  | { readonly kind: 'reply'; readonly reply: CoreReply; readonly sentAtMs: number }
  | { readonly kind: 'failed'; readonly code: CoordErrorCode; readonly message: string }
  | { readonly kind: 'unknown'; readonly message: string };

interface Call {
  readonly id: string;
  readonly request: CoreRequest;
  readonly idempotent: boolean;
  /** On the client clock. Unit: ms. */
  readonly deadlineMs: number;
  readonly firstSentAtMs: number;
  /** Unit: ms (client clock). */
  readonly attemptTimeoutMs: number;
  attempts: number;
  /** A write attempt ended without a definite answer: it may have been applied. */
  maybeApplied: boolean;
  lastFailure: { readonly code: CoordErrorCode; readonly message: string } | undefined;
  readonly finish: (outcome: CallOutcome) => void;
}

interface Attempt {
  readonly call: Call;
  readonly member: NodeId;
  readonly sentAtMs: number;
  readonly timer: TimerHandle;
}

/**
 * The client. `sentAtMs` in an `ok` answer, on the client's clock: for a keep-alive (and any
 * idempotent call), when the attempt that was answered was sent; for a write, when the call's
 * first attempt was sent (a retry may find the write applied by an earlier attempt). A lease
 * holder counts its local deadline from there (docs/leases.md, the holder's deadline).
 */
export class SimCoreClient {
  private readonly pending = new Map<string, Attempt>();
  private leaderGuess: NodeId | undefined;
  private callsNext = 1;
  private sequenceNext = 1;

  constructor(
    readonly id: NodeId,
    /** The client's own clock (drifting within ρ) and its timers. */
    readonly clock: Clock & Timer,
    private readonly transport: Transport<LeaseNetMessage>,
    private readonly random: Random,
    private readonly options: SimCoreClientOptions,
  ) {
    assert(options.members.length > 0, () => `client ${id}: no members`);
    transport.setHandler({
      onMessage: (from, message) => {
        if (message.kind === 'reply') this.onReply(from, message.attemptId, message.reply);
      },
      onPeerReset: (peer) => this.onPeerReset(peer),
    });
  }

  /** The member this client believes leads (undefined: it will try a random one). */
  get leader(): NodeId | undefined {
    return this.leaderGuess;
  }

  /** Attempts sent and not yet answered or given up. */
  get inflight(): number {
    return this.pending.size;
  }

  grant(ttlMs: number, done: (answer: SimAnswer<{ leaseId: number; ttlMs: number }>) => void,
    options: CallOptions = {}): void {
    this.write({ kind: 'lease-grant', ttlMs }, options, (answer) => done(mapApplied(answer,
      (result) => result.kind === 'lease-grant'
        ? { leaseId: result.leaseId, ttlMs: result.ttlMs } : undefined)));
  }

  revoke(leaseId: number, done: (answer: SimAnswer<{ revision: number; deleted: number }>) =>
    void, options: CallOptions = {}): void {
    this.write({ kind: 'lease-revoke', leaseId }, options, (answer) => done(mapApplied(answer,
      (result) => result.kind === 'lease-revoke'
        ? { revision: result.revision, deleted: result.deleted } : undefined)));
  }

  /** A put; with `lease`, the key is attached to it (and deleted when it ends). */
  put(key: string, value: string, lease: number | undefined,
    done: (answer: SimAnswer<KvPutResult>) => void, options: CallOptions = {}): void {
    this.write({ kind: 'put', key, value, ...(lease === undefined ? {} : { lease }) }, options,
      (answer) => done(mapApplied(answer, (r) => (r.kind === 'put' ? r : undefined))));
  }

  txn(txn: SimTxn, done: (answer: SimAnswer<KvTxnResult>) => void,
    options: CallOptions = {}): void {
    this.write({ kind: 'txn', ...txn }, options,
      (answer) => done(mapApplied(answer, (r) => (r.kind === 'txn' ? r : undefined))));
  }

  /** A linearizable range (ReadIndex on whichever member answers). */
  range(request: KvRangeRequest, done: (answer: SimAnswer<KvRangeResult>) => void,
    options: CallOptions = {}): void {
    this.call({ kind: 'range', request }, true, options, (outcome) => {
      if (outcome.kind !== 'reply') return done(outcome);
      const { reply } = outcome;
      if (reply.kind !== 'range') return done(unexpected(reply));
      if (reply.result.kind === 'error') return done(storeError(reply.result.error.code));
      done({ kind: 'ok', value: reply.result, sentAtMs: outcome.sentAtMs });
    });
  }

  keepAlive(leaseId: number, done: (answer: SimAnswer<LeaseStatus>) => void,
    options: CallOptions = {}): void {
    this.call({ kind: 'keep-alive', leaseId }, true, options, (outcome) => {
      if (outcome.kind !== 'reply') return done(outcome);
      if (outcome.reply.kind !== 'lease') return done(unexpected(outcome.reply));
      done({ kind: 'ok', value: outcome.reply.status, sentAtMs: outcome.sentAtMs });
    });
  }

  /**
   * Answers once `key` is deleted at a revision >= `fromRevision` (with that revision), as a
   * watch stream would. A member crash moves the watch to another member; the timeout ends it
   * `failed` (read again, then watch again).
   */
  watchDelete(key: string, fromRevision: number,
    done: (answer: SimAnswer<{ revision: number }>) => void, options: CallOptions = {}): void {
    const timeoutMs = options.timeoutMs ?? this.options.callTimeoutMs;
    // One attempt may wait the whole call: a watch is answered only when the key goes.
    this.call({ kind: 'watch-delete', key, fromRevision }, true, { timeoutMs }, (outcome) => {
      if (outcome.kind !== 'reply') return done(outcome);
      if (outcome.reply.kind !== 'deleted') return done(unexpected(outcome.reply));
      done({ kind: 'ok', value: { revision: outcome.reply.revision }, sentAtMs: outcome.sentAtMs });
    }, timeoutMs);
  }

  private write(write: Unstamped<KvWrite>, options: CallOptions,
    done: (outcome: CallOutcome) => void): void {
    const stamped = { ...write, clientId: this.id, sequence: this.sequenceNext++ } as KvWrite;
    this.call({ kind: 'write', write: stamped }, false, options, done);
  }

  private call(request: CoreRequest, idempotent: boolean, options: CallOptions,
    finish: (outcome: CallOutcome) => void, attemptTimeoutMs = this.options.attemptTimeoutMs):
    void {
    const nowMs = this.clock.monotonicMs();
    let finished = false;
    const call: Call = {
      id: `${this.id}.${this.callsNext++}`, request, idempotent, firstSentAtMs: nowMs,
      deadlineMs: nowMs + (options.timeoutMs ?? this.options.callTimeoutMs), attemptTimeoutMs,
      attempts: 0, maybeApplied: false, lastFailure: undefined,
      finish: (outcome) => {
        assert(!finished, () => `call ${call.id} finished twice`);
        finished = true;
        finish(outcome);
      },
    };
    this.attempt(call);
  }

  private attempt(call: Call): void {
    const nowMs = this.clock.monotonicMs();
    if (nowMs >= call.deadlineMs) return this.giveUp(call);
    const members = this.options.members;
    const member = this.leaderGuess ?? members[randomInt(this.random, 0, members.length)]!;
    call.attempts++;
    const attemptId = `${call.id}.${call.attempts}`;
    const timer = this.clock.setTimer(Math.min(call.attemptTimeoutMs, call.deadlineMs - nowMs),
      () => this.lost(attemptId));
    this.pending.set(attemptId, { call, member, sentAtMs: nowMs, timer });
    this.transport.send(member, { kind: 'request', attemptId, request: call.request });
  }

  private onReply(from: NodeId, attemptId: string, reply: CoreReply): void {
    const attempt = this.pending.get(attemptId);
    if (attempt === undefined) return; // late, duplicated, or given up
    this.pending.delete(attemptId);
    attempt.timer.cancel();
    const { call } = attempt;
    switch (reply.kind) {
      case 'failed':
        call.lastFailure = { code: reply.code, message: reply.message };
        if (reply.code === 'CONCLAVE_NOT_LEADER') {
          this.leaderGuess = reply.leaderHint !== from ? reply.leaderHint : undefined;
          return this.retry(call, this.leaderGuess === undefined ? this.options.retryDelayMs : 0);
        }
        if (reply.code === 'CONCLAVE_UNAVAILABLE' || reply.code === 'CONCLAVE_TIMEOUT') {
          this.leaderGuess = undefined;
          return this.retry(call, this.options.retryDelayMs);
        }
        return call.finish({ kind: 'failed', code: reply.code, message: reply.message });
      case 'unknown':
        call.maybeApplied ||= !call.idempotent;
        this.leaderGuess = undefined;
        return this.retry(call, this.options.retryDelayMs);
      case 'applied':
      case 'lease':
      case 'range':
      case 'deleted':
        // Only the leader applies writes and answers keep-alives: remember who did.
        if (reply.kind === 'applied' || reply.kind === 'lease') this.leaderGuess = from;
        return call.finish({ kind: 'reply', reply,
          sentAtMs: call.idempotent ? attempt.sentAtMs : call.firstSentAtMs });
      default:
        return assertNever(reply, 'core reply');
    }
  }

  /** No reply in time, or the connection to its member broke: try again elsewhere. */
  private lost(attemptId: string): void {
    const attempt = this.pending.get(attemptId);
    if (attempt === undefined) return;
    this.pending.delete(attemptId);
    attempt.timer.cancel();
    const { call } = attempt;
    call.maybeApplied ||= !call.idempotent;
    if (this.leaderGuess === attempt.member) this.leaderGuess = undefined;
    this.retry(call, 0);
  }

  private retry(call: Call, delayMs: number): void {
    const waitMs = Math.min(delayMs, Math.max(0, call.deadlineMs - this.clock.monotonicMs()));
    this.clock.setTimer(waitMs, () => this.attempt(call));
  }

  private giveUp(call: Call): void {
    if (call.maybeApplied) {
      return call.finish({ kind: 'unknown', message: `no answer in time after ${call.attempts} `
        + 'attempts, one of which may have been applied' });
    }
    call.finish({ kind: 'failed', code: call.lastFailure?.code ?? 'CONCLAVE_TIMEOUT',
      message: call.lastFailure?.message ?? `no answer in ${call.attempts} attempts` });
  }

  private onPeerReset(peer: NodeId): void {
    for (const [attemptId, attempt] of [...this.pending]) {
      if (attempt.member === peer) this.lost(attemptId);
    }
  }
}

/** An applied write's result as `T`, or the store's refusal as a failure. */
function mapApplied<T>(outcome: CallOutcome, pick: (result: KvApplyResult) => T | undefined):
  SimAnswer<T> {
  if (outcome.kind !== 'reply') return outcome;
  const { reply } = outcome;
  if (reply.kind !== 'applied') return unexpected(reply);
  if (reply.result.kind === 'error') return storeError(reply.result.error.code);
  const value = pick(reply.result);
  return value === undefined ? unexpected(reply)
    : { kind: 'ok', value, sentAtMs: outcome.sentAtMs };
}

function storeError(code: string): SimAnswer<never> {
  switch (code) {
    case 'lease-not-found':
      return { kind: 'failed', code: 'CONCLAVE_LEASE_EXPIRED', message: 'lease not found' };
    case 'duplicate-stale':
      // An older write of this client: it may or may not have been applied before.
      return { kind: 'unknown', message: 'duplicate-stale' };
    case 'compacted':
      return { kind: 'failed', code: 'CONCLAVE_KV_COMPACTED', message: code };
    case 'future-revision':
      return { kind: 'failed', code: 'CONCLAVE_KV_FUTURE_REVISION', message: code };
    default:
      return { kind: 'failed', code: 'CONCLAVE_REQUEST_INVALID', message: code };
  }
}

function unexpected(reply: CoreReply): SimAnswer<never> {
  return { kind: 'failed', code: 'CONCLAVE_PROTOCOL', message: `unexpected reply ${reply.kind}` };
}
