/**
 * What the simulated clients (the shipped client over SimClientTransport) and the consistent-
 * core members say to each other over the simulated network, and the member's side of it: the
 * client protocol of src/server/http-api.ts, watch-hub.ts and lease-stream.ts, answered by the
 * member's real ConsistentCore as the server answers it — a follower refuses leader-only
 * requests naming the leader, or, when it knows none, with the server's own verdict
 * (src/runtime/core/leaderless.ts: NO_LEADER during an election, NO_QUORUM when it has heard
 * from no leader for longer than an election takes), writes and reads are the
 * core's own answers with the store's errors mapped to the same codes, watches pull from the
 * core's event history and get a progress frame when they open and now and then after, and
 * the keep-alive stream is the leader's only and closes when it stops leading. Raft's messages
 * share the network, wrapped, so faults hit both alike.
 *
 * Streams: every message of a member on a stream carries `seq` (0, 1, ...); the client end
 * drops a repeat and takes a gap (a message lost, or overtaken: the network may reorder) as
 * the stream breaking, as TCP would show it.
 */
import { assert, assertNever } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import type { KvApplyResult, KvError, KvErrorResult, KvKeySelector, KvRangeResult,
} from '../../../core/kv/index.js';
import { describeRaftMessage, type RaftMessage } from '../../../core/raft/index.js';
import type {
  ClientRequest, KeepAliveAnswer, WatchFrame, WatchRequest,
} from '../../../ports/client-transport.js';
import type { Timer, TimerHandle } from '../../../ports/timer.js';
import type {
  ConsistentCore, KvWrite, LeaseOutcome, ReadOutcome, WriteOutcome,
} from '../../../runtime/core/index.js';
import { leaderlessJudge, type LeaderlessAnswer } from '../../../runtime/core/leaderless.js';
import { CoordError } from '../../../errors.js';
import type { SimRecorder } from '../../sim-recorder.js';

/** A member's answer to one call. */
export type SimReply =
  | { readonly kind: 'ok'; readonly body: unknown }
  | { readonly kind: 'refused'; readonly error: CoordError; readonly leader?: NodeId };

/** What a client sends a member; `id` (a call's or a stream's) is unique in the run. */
export type ClientToMember =
  | { readonly kind: 'call'; readonly id: string; readonly request: ClientRequest }
  | { readonly kind: 'watch-open'; readonly id: string; readonly request: WatchRequest }
  | { readonly kind: 'lease-open'; readonly id: string }
  | { readonly kind: 'keepalive'; readonly id: string; readonly n: number;
    readonly leaseId: number }
  /** The client drops its stream `id`. */
  | { readonly kind: 'close'; readonly id: string };

/** What a member sends a client. */
export type MemberToClient =
  | { readonly kind: 'answer'; readonly id: string; readonly reply: SimReply }
  /** A stream was opened (seq 0), or refused. */
  | { readonly kind: 'opened'; readonly id: string; readonly seq: number }
  | { readonly kind: 'refused'; readonly id: string; readonly error: CoordError;
    readonly leader?: NodeId }
  | { readonly kind: 'frame'; readonly id: string; readonly seq: number;
    readonly frame: WatchFrame }
  | { readonly kind: 'keepalive-answer'; readonly id: string; readonly seq: number;
    readonly n: number; readonly answer: KeepAliveAnswer }
  | { readonly kind: 'closed'; readonly id: string; readonly seq: number;
    readonly detail: string };

/** Everything on the lease scenario's network. */
export type LeaseNetMessage =
  | { readonly kind: 'raft'; readonly message: RaftMessage }
  | { readonly kind: 'client'; readonly message: ClientToMember }
  | { readonly kind: 'member'; readonly message: MemberToClient };

/** For the trace hash: short and deterministic. */
export function describeLeaseNetMessage(message: LeaseNetMessage): string {
  switch (message.kind) {
    case 'raft':
      return describeRaftMessage(message.message);
    case 'client': {
      const m = message.message;
      return `c ${m.kind} ${m.id}${m.kind === 'call' ? ` ${m.request.kind}` : ''}`;
    }
    case 'member': {
      const m = message.message;
      return `m ${m.kind} ${m.id}${'seq' in m ? ` ${m.seq}` : ''}`
        + (m.kind === 'answer' ? ` ${m.reply.kind}` : '');
    }
    default:
      return assertNever(message, 'lease network message');
  }
}

/**
 * What the checkers learn from a member serving requests (real time is theirs to read): each
 * request as it arrives (a keep-alive on a stream as a `lease-keepalive` call), and each answer
 * with the instant the member received that very request.
 */
export interface ServeObserver {
  handled(member: NodeId, request: ClientRequest): void;
  answered(member: NodeId, request: ClientRequest, reply: SimReply, receivedAtMs: number): void;
}

interface MemberWatch {
  readonly client: NodeId;
  readonly id: string;
  readonly selector: KvKeySelector;
  nextRevision: number;
  seq: number;
}

interface MemberLeaseStream {
  readonly client: NodeId;
  readonly id: string;
  seq: number;
}

/** Events per pull (watch-hub.ts's EVENTS_PER_PULL): a slow watcher catches up in slices. */
const EVENTS_PER_PULL = 1000;

export interface MemberServerOptions {
  readonly member: NodeId;
  readonly send: (to: NodeId, message: LeaseNetMessage) => void;
  /** Real (virtual) time, for the observer only. */
  readonly nowMs: () => number;
  readonly observer: ServeObserver;
  /** The member's timers, for the watch progress frames. */
  readonly timer: Timer;
  /** How often a quiet watch gets a progress frame. Unit: ms. */
  readonly progressIntervalMs: number;
  /** The member's own monotonic clock (its drift included), for the leaderless verdict. */
  readonly memberNowMs: () => number;
  /** The members' longest election timeout, for the leaderless verdict. Unit: ms. */
  readonly electionTimeoutMsMax: number;
  /** Told each leaderless answer's code (CONCLAVE_NO_LEADER or CONCLAVE_NO_QUORUM). */
  readonly onLeaderless?: (code: string) => void;
  /** Where each call and keep-alive served goes, with its answer (`conclave sim --record`). */
  readonly recorder?: SimRecorder | undefined;
}

/**
 * The member side: serves the client protocol with its ConsistentCore. One per process life
 * (streams die with the process; the clients see the connection reset).
 */
export class SimMemberServer {
  private readonly watches = new Map<string, MemberWatch>();
  private readonly leaseStreams = new Map<string, MemberLeaseStream>();
  private progressTimer: TimerHandle | undefined;
  /** Made with the core (its uptime counts from the core's start), as server.ts does. */
  private judge: LeaderlessAnswer | undefined;

  constructor(private readonly o: MemberServerOptions) {}

  /** The member's core is open: the leaderless verdict counts its uptime from now. */
  coreOpened(core: ConsistentCore): void {
    this.judge = leaderlessJudge(core, this.o.electionTimeoutMsMax, this.o.memberNowMs);
  }

  receive(core: ConsistentCore, from: NodeId, message: ClientToMember): void {
    switch (message.kind) {
      case 'call':
        return this.call(core, from, message.id, message.request);
      case 'watch-open':
        return this.openWatch(core, from, message.id, message.request);
      case 'lease-open':
        return this.openLeaseStream(core, from, message.id);
      case 'keepalive':
        return this.keepAlive(core, from, message);
      case 'close':
        this.watches.delete(streamKey(from, message.id));
        this.leaseStreams.delete(streamKey(from, message.id));
        return;
      default:
        return assertNever(message, 'client message');
    }
  }

  /** After every applied entry: every watcher pulls what it has not seen. */
  onApplied(core: ConsistentCore): void {
    for (const watch of [...this.watches.values()]) this.pull(core, watch);
  }

  /** Leadership changed: a member that stopped leading closes its keep-alive streams. */
  onRoleChanged(leading: boolean): void {
    if (leading) return;
    for (const stream of this.leaseStreams.values()) {
      this.sendMember(stream.client, { kind: 'closed', id: stream.id, seq: stream.seq++,
        detail: 'not the leader any more' });
    }
    this.leaseStreams.clear();
  }

  /** Sends a progress frame to every watch now and every `progressIntervalMs`. */
  startProgress(core: ConsistentCore): void {
    this.progressTimer = this.o.timer.setTimer(this.o.progressIntervalMs, () => {
      for (const watch of this.watches.values()) {
        this.frame(watch, { kind: 'progress', revision: core.store.revision });
      }
      this.startProgress(core);
    });
  }

  stop(): void {
    this.progressTimer?.cancel();
  }

  private call(core: ConsistentCore, from: NodeId, id: string, request: ClientRequest): void {
    const receivedAtMs = this.o.nowMs();
    this.o.observer.handled(this.o.member, request);
    const reply = (answer: SimReply): void => {
      this.o.observer.answered(this.o.member, request, answer, receivedAtMs);
      this.record(from, request, answer, receivedAtMs);
      this.sendMember(from, { kind: 'answer', id, reply: answer });
    };
    if (leaderOnly(request)) {
      const refusal = this.notLeading(core);
      if (refusal !== undefined) return reply(refusal);
    }
    serve(core, request, reply);
  }

  private openWatch(core: ConsistentCore, from: NodeId, id: string, request: WatchRequest): void {
    // A repeat of the open (the network duplicates): the stream is open already. Opening it
    // again would restart its `seq`, and the client would drop the new frames as repeats.
    if (this.watches.has(streamKey(from, id))) return;
    const start = request.fromRevision > 0 ? request.fromRevision : core.store.revision + 1;
    const watch: MemberWatch = { client: from, id, seq: 0, nextRevision: start,
      selector: { key: request.key, ...(request.prefix ? { prefix: true } : {}) } };
    this.watches.set(streamKey(from, id), watch);
    this.sendMember(from, { kind: 'opened', id, seq: watch.seq++ });
    this.frame(watch, { kind: 'progress', revision: core.store.revision });
    this.pull(core, watch);
  }

  /** As WatchHub.pull: what the watcher has not seen, in pages; compacted ends it. */
  private pull(core: ConsistentCore, watch: MemberWatch): void {
    const key = streamKey(watch.client, watch.id);
    while (this.watches.get(key) === watch && watch.nextRevision <= core.store.revision) {
      const page = core.eventsSince(watch.nextRevision, watch.selector, EVENTS_PER_PULL);
      if (page.kind === 'error') {
        const compactRevision = page.error.code === 'compacted' ? page.error.compactRevision : 0;
        this.frame(watch, { kind: 'compacted', compactRevision });
        this.sendMember(watch.client, { kind: 'closed', id: watch.id, seq: watch.seq++,
          detail: 'compacted' });
        this.watches.delete(key);
        return;
      }
      watch.nextRevision = page.nextRevision;
      if (page.events.length === 0) return;
      this.frame(watch, { kind: 'events', events: page.events, nextRevision: page.nextRevision });
      if (!page.more) return;
    }
  }

  private frame(watch: MemberWatch, frame: WatchFrame): void {
    this.sendMember(watch.client, { kind: 'frame', id: watch.id, seq: watch.seq++, frame });
  }

  private openLeaseStream(core: ConsistentCore, from: NodeId, id: string): void {
    if (this.leaseStreams.has(streamKey(from, id))) return; // a repeat, as for watches
    const refusal = this.notLeading(core);
    if (refusal?.kind === 'refused') {
      return this.sendMember(from, { kind: 'refused', id, error: refusal.error,
        ...(refusal.leader === undefined ? {} : { leader: refusal.leader }) });
    }
    const stream: MemberLeaseStream = { client: from, id, seq: 0 };
    this.leaseStreams.set(streamKey(from, id), stream);
    this.sendMember(from, { kind: 'opened', id, seq: stream.seq++ });
  }

  private keepAlive(core: ConsistentCore,
    from: NodeId, message: Extract<ClientToMember, { kind: 'keepalive' }>): void {
    const key = streamKey(from, message.id);
    if (!this.leaseStreams.has(key)) return; // closed here: the client sees the gap or close
    const request: ClientRequest = { kind: 'lease-keepalive', leaseId: message.leaseId };
    const receivedAtMs = this.o.nowMs();
    this.o.observer.handled(this.o.member, request);
    core.keepAlive(message.leaseId, (outcome) => {
      const reply = leaseReply(outcome);
      this.o.observer.answered(this.o.member, request, reply, receivedAtMs);
      this.record(from, request, reply, receivedAtMs);
      const stream = this.leaseStreams.get(key);
      if (stream === undefined) return; // closed meanwhile: the answer is lost with it
      const answer: KeepAliveAnswer = reply.kind === 'ok' ? reply
        : { kind: 'refused', error: reply.error };
      this.sendMember(from, { kind: 'keepalive-answer', id: message.id, seq: stream.seq++,
        n: message.n, answer });
    });
  }

  /** A call served, into the recording: from its arrival here to its answer. */
  private record(from: NodeId, request: ClientRequest, reply: SimReply, receivedAtMs: number):
    void {
    this.o.recorder?.note({ kind: 'client', atMs: receivedAtMs, endMs: this.o.nowMs(),
      client: `${from} at ${this.o.member}`, op: describeRequest(request),
      outcome: reply.kind === 'ok' ? `ok ${clip(JSON.stringify(reply.body ?? null), 80)}`
        : `refused ${reply.error.code}${reply.leader === undefined ? ''
          : ` (leader ${reply.leader})`}` });
  }

  /** As http-api.ts's redirectToLeader: a follower names the leader, or gives the verdict. */
  private notLeading(core: ConsistentCore): SimReply | undefined {
    const status = core.status();
    if (status.role === 'leader') return undefined;
    if (status.leaderId === undefined) {
      assert(this.judge !== undefined, `${core.id}: a call served before coreOpened`);
      const error = this.judge();
      this.o.onLeaderless?.(error.code);
      return { kind: 'refused', error };
    }
    return { kind: 'refused', leader: status.leaderId,
      error: new CoordError('CONCLAVE_NOT_LEADER', `not the leader; the leader is `
        + status.leaderId) };
  }

  private sendMember(to: NodeId, message: MemberToClient): void {
    this.o.send(to, { kind: 'member', message });
  }
}

function streamKey(client: NodeId, id: string): string {
  return `${client}/${id}`;
}

function leaderOnly(request: ClientRequest): boolean {
  return request.kind !== 'status'
    && !(request.kind === 'range' && request.consistency === 'serializable');
}

/** One call, answered by the core. */
function serve(core: ConsistentCore, request: ClientRequest, reply: (r: SimReply) => void):
  void {
  switch (request.kind) {
    case 'put':
    case 'delete':
    case 'txn':
    case 'compact':
    case 'lease-grant':
    case 'lease-revoke':
      return core.write(request as KvWrite, (outcome) => reply(writeReply(outcome)));
    case 'range': {
      const { key, prefix, limit, revision } = request;
      return core.read({ key, ...(prefix === true ? { prefix } : {}),
        ...(limit === undefined ? {} : { limit }),
        ...(revision === undefined ? {} : { revision }) }, request.consistency,
      (outcome) => reply(readReply(outcome)));
    }
    case 'lease-keepalive':
      return core.keepAlive(request.leaseId, (outcome) => reply(leaseReply(outcome)));
    case 'lease-ttl':
      return core.timeToLive(request.leaseId, request.keys === true,
        (outcome) => reply(leaseReply(outcome)));
    case 'lease-list':
      return core.listLeases((outcome) => reply(outcome.kind === 'ok'
        ? { kind: 'ok', body: { leases: outcome.value } } : refused(outcome.error, 'failed')));
    case 'status': {
      const s = core.status();
      return reply({ kind: 'ok', body: { id: core.id, role: s.role, term: s.term,
        ...(s.leaderId === undefined ? {} : { leaderId: s.leaderId }),
        commitIndex: s.commitIndex, appliedIndex: s.appliedIndex, lastIndex: s.lastIndex,
        revision: core.store.revision } });
    }
    case 'auth':
      // The simulated cluster runs with auth off: no auth calls reach it.
      return reply(refused(new CoordError('CONCLAVE_USAGE', 'no auth in the simulator'),
        'failed'));
    default:
      return assertNever(request, 'client request');
  }
}

function writeReply(outcome: WriteOutcome): SimReply {
  if (outcome.kind === 'applied') return resultReply(outcome.result);
  return refused(outcome.error, outcome.kind);
}

function readReply(outcome: ReadOutcome): SimReply {
  if (outcome.kind === 'ok') return resultReply(outcome.result);
  return refused(outcome.error, 'failed');
}

function leaseReply<T>(outcome: LeaseOutcome<T>): SimReply {
  // An unanswered or refused keep-alive promises nothing: always `failed`.
  return outcome.kind === 'ok' ? { kind: 'ok', body: outcome.value }
    : refused(outcome.error, 'failed');
}

function resultReply(result: KvApplyResult | KvRangeResult | KvErrorResult): SimReply {
  return result.kind === 'error' ? refused(storeError(result.error), 'failed')
    : { kind: 'ok', body: result };
}

function refused(error: CoordError, outcome: 'failed' | 'unknown'): SimReply {
  const leaderHint = (error as CoordError & { leaderHint?: NodeId }).leaderHint;
  return { kind: 'refused', error: new CoordError(error.code, error.message, { outcome }),
    ...(leaderHint === undefined ? {} : { leader: leaderHint }) };
}

/** The store's refusal as http-api.ts's sendApplyResult words it. */
function storeError(error: KvError): CoordError {
  switch (error.code) {
    case 'compacted':
      return new CoordError('CONCLAVE_KV_COMPACTED', 'revision compacted; the oldest kept is '
        + `after ${error.compactRevision}`);
    case 'future-revision':
      return new CoordError('CONCLAVE_KV_FUTURE_REVISION', `revision ${error.revision} is `
        + `beyond the current ${error.currentRevision}`);
    case 'duplicate-stale':
      return new CoordError('CONCLAVE_DUPLICATE_STALE', `sequence ${error.sequence} of `
        + `${error.clientId} is older than ${error.sequenceApplied}, already applied`);
    case 'idempotency-mismatch':
      return new CoordError('CONCLAVE_IDEMPOTENCY_MISMATCH', `sequence ${error.sequence} of `
        + `client ${error.clientId} was applied to another request; this one was not applied: `
        + 'use the next sequence for a new request');
    case 'invalid':
      return new CoordError('CONCLAVE_REQUEST_INVALID',
        error.problems.map((p) => `${p.field}: ${p.rule}`).join('; '));
    case 'bad-command':
      return new CoordError('CONCLAVE_PROTOCOL', error.reason);
    case 'lease-not-found':
      return new CoordError('CONCLAVE_LEASE_EXPIRED', `lease ${error.leaseId} does not exist: `
        + 'it expired, was revoked or was never granted');
    case 'lease-limit':
      return new CoordError('CONCLAVE_REQUEST_INVALID', 'the cluster already holds its maximum '
        + `of ${error.leasesMax} leases (leasesMax); revoke some first`);
    case 'permission-denied':
      return new CoordError('CONCLAVE_PERMISSION_DENIED', error.reason);
    case 'auth-refused':
      return new CoordError('CONCLAVE_REQUEST_INVALID', error.reason);
    default:
      return assertNever(error, 'store error');
  }
}

/** A request in a few words, for the recording (its kind, then its fields but the stamp). */
function describeRequest(request: ClientRequest): string {
  const { kind, ...fields } = request as ClientRequest & Record<string, unknown>;
  delete fields['clientId'];
  delete fields['sequence'];
  const rest = JSON.stringify(fields);
  return rest === '{}' ? kind : `${kind} ${clip(rest, 100)}`;
}

function clip(text: string, lengthMax: number): string {
  return text.length <= lengthMax ? text : `${text.slice(0, lengthMax - 1)}…`;
}
