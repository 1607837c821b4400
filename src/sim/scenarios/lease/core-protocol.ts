/**
 * What simulated clients and consistent-core members say to each other over the simulated
 * network, and the member's side of it: a request is served by the member's real
 * ConsistentCore (write, keep-alive, linearizable range, watch for a key's deletion) and
 * answered with exactly what the core said: applied or ok, failed (definitely not applied), or
 * unknown (maybe). Raft's own messages share the network, wrapped, so faults hit both alike.
 */
import { assertNever } from '../../../core/assert.js';
import type { NodeId } from '../../../core/ids.js';
import type {
  KvApplyResult, KvErrorResult, KvRangeRequest, KvRangeResult,
} from '../../../core/kv/index.js';
import { describeRaftMessage, type RaftMessage } from '../../../core/raft/index.js';
import type {
  ConsistentCore, KvWrite, LeaseStatus,
} from '../../../runtime/core/index.js';
import type { CoordError, CoordErrorCode } from '../../../errors.js';

/** One request of a client; `attemptId` is unique in the run (client id and a counter). */
export type CoreRequest =
  | { readonly kind: 'write'; readonly write: KvWrite }
  | { readonly kind: 'keep-alive'; readonly leaseId: number }
  | { readonly kind: 'range'; readonly request: KvRangeRequest }
  /** Answered once `key` is deleted at a revision >= `fromRevision` (served by any member). */
  | { readonly kind: 'watch-delete'; readonly key: string; readonly fromRevision: number };

export type CoreReply =
  | { readonly kind: 'applied'; readonly result: KvApplyResult }
  | { readonly kind: 'lease'; readonly status: LeaseStatus }
  | { readonly kind: 'range'; readonly result: KvRangeResult | KvErrorResult }
  | { readonly kind: 'deleted'; readonly revision: number }
  /** Definitely not done; `leaderHint` with CONCLAVE_NOT_LEADER when the member knows one. */
  | { readonly kind: 'failed'; readonly code: CoordErrorCode; readonly message: string;
    readonly leaderHint?: NodeId }
  /** Maybe done (a write whose member lost track of it). */
  | { readonly kind: 'unknown'; readonly message: string };

/** Everything on the lease scenario's network. */
export type LeaseNetMessage =
  | { readonly kind: 'raft'; readonly message: RaftMessage }
  | { readonly kind: 'request'; readonly attemptId: string; readonly request: CoreRequest }
  | { readonly kind: 'reply'; readonly attemptId: string; readonly reply: CoreReply };

/** For the trace hash: short and deterministic. */
export function describeLeaseNetMessage(message: LeaseNetMessage): string {
  switch (message.kind) {
    case 'raft':
      return describeRaftMessage(message.message);
    case 'request':
      return `req ${message.attemptId} ${message.request.kind}`;
    case 'reply':
      return `rep ${message.attemptId} ${message.reply.kind}`;
    default:
      return assertNever(message, 'lease network message');
  }
}

/**
 * What the checkers learn from a member serving a request (real time is theirs to read):
 * `receivedAtMs` of the handling that produced each reply ties an acknowledgement to the moment
 * the member received that very request.
 */
export interface ServeObserver {
  handled(attemptId: string, member: NodeId, request: CoreRequest): void;
  answered(attemptId: string, member: NodeId, request: CoreRequest, reply: CoreReply,
    receivedAtMs: number): void;
}

interface DeleteWatch {
  readonly client: NodeId;
  readonly attemptId: string;
  readonly request: CoreRequest & { readonly kind: 'watch-delete' };
  readonly receivedAtMs: number;
}

/**
 * The member side: serves requests with its ConsistentCore and sends each reply back. One per
 * process life (watches die with the process; the client sees the connection reset).
 */
export class CoreServer {
  private readonly watches: DeleteWatch[] = [];

  constructor(
    private readonly member: NodeId,
    private readonly send: (to: NodeId, message: LeaseNetMessage) => void,
    private readonly nowMs: () => number,
    private readonly observer: ServeObserver,
  ) {}

  serve(core: ConsistentCore, from: NodeId, attemptId: string, request: CoreRequest): void {
    const receivedAtMs = this.nowMs();
    this.observer.handled(attemptId, this.member, request);
    const reply = (answer: CoreReply): void => this.reply(from, attemptId, request, answer,
      receivedAtMs);
    switch (request.kind) {
      case 'write':
        return core.write(request.write, (outcome) => reply(outcome.kind === 'applied'
          ? { kind: 'applied', result: outcome.result }
          : outcome.kind === 'failed' ? failedReply(outcome.error)
            : { kind: 'unknown', message: outcome.error.message }));
      case 'keep-alive':
        return core.keepAlive(request.leaseId, (outcome) => reply(outcome.kind === 'ok'
          ? { kind: 'lease', status: outcome.value } : failedReply(outcome.error)));
      case 'range':
        return core.read(request.request, 'linearizable', (outcome) => reply(
          outcome.kind === 'ok' ? { kind: 'range', result: outcome.result }
            : failedReply(outcome.error)));
      case 'watch-delete':
        this.watches.push({ client: from, attemptId, request, receivedAtMs });
        return this.onApplied(core);
      default:
        return assertNever(request, 'core request');
    }
  }

  /** After every applied entry (and a new watch): answers the watches whose key was deleted. */
  onApplied(core: ConsistentCore): void {
    for (let i = this.watches.length - 1; i >= 0; i--) {
      const watch = this.watches[i]!;
      const { key, fromRevision } = watch.request;
      const found = core.eventsSince(fromRevision, { key });
      let answer: CoreReply | undefined;
      if (found.kind === 'error') {
        answer = { kind: 'failed', code: 'CONCLAVE_KV_COMPACTED',
          message: `watch of ${key} from revision ${fromRevision}: ${found.error.code}` };
      } else {
        const deleted = found.events.find((event) => event.type === 'delete');
        if (deleted !== undefined) answer = { kind: 'deleted', revision: deleted.kv.modRevision };
      }
      if (answer === undefined) continue;
      this.watches.splice(i, 1);
      this.reply(watch.client, watch.attemptId, watch.request, answer, watch.receivedAtMs);
    }
  }

  private reply(to: NodeId, attemptId: string, request: CoreRequest, answer: CoreReply,
    receivedAtMs: number): void {
    this.observer.answered(attemptId, this.member, request, answer, receivedAtMs);
    this.send(to, { kind: 'reply', attemptId, reply: answer });
  }
}

function failedReply(error: CoordError): CoreReply {
  const leaderHint = (error as CoordError & { leaderHint?: NodeId }).leaderHint;
  return { kind: 'failed', code: error.code, message: error.message,
    ...(leaderHint === undefined ? {} : { leaderHint }) };
}
