/**
 * Client URLs published through the log (etcd's publish): a member that starts tells the
 * cluster where clients reach it, and the URL goes into the membership (a `member-attributes`
 * change, core/raft/membership.ts), so every member, whatever its `--client-urls` flag says,
 * lists it (`conclave member list`, `/v1/status`) and sends clients to it when it leads (the
 * 307 of a follower, the leader hint of an error).
 *
 * Only the leader proposes membership changes, so a follower or learner sends its URL to the
 * leader in a `client-url` message on the peer transport, beside Raft's messages; the leader
 * proposes the change for the sender as the transport authenticated it (identity comes from
 * the link, never from a field), after checking the URL as untrusted text. Rules:
 * - a member publishes while the membership in force records no URL, or another one, for it
 *   (once at each tick: a refused or lost attempt is simply made again at the next);
 * - the leader proposes at most one change per member at a time, and at most one per member
 *   per tick interval, so a peer repeating itself cannot fill the log;
 * - a member listening on a wildcard address (0.0.0.0, ::) publishes nothing: clients could
 *   not use it; its `--client-urls` entry on the other members, if any, stands.
 * Old members that do not know `client-url` messages refuse them as invalid (counted); the
 * member goes on asking, harmlessly, until a leader that knows them is elected.
 */
import {
  RAFT_MESSAGE_VALIDATOR, type MessageValidator,
} from '../adapters/message-validators.js';
import type { NodeId } from '../core/ids.js';
import {
  clientUrlOfMember, clientUrlProblem, isMember, type Membership, type MembershipChange,
  type RaftMessage,
} from '../core/raft/index.js';
import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { Transport, TransportHandler } from '../ports/transport.js';
import type { MembershipOutcome } from '../runtime/raft/raft-runtime.js';

/** A member's own client URL, sent to the leader so that it proposes it. */
export interface ClientUrlMessage {
  readonly kind: 'client-url';
  readonly clientUrl: string;
}

/** What travels on a server's peer transport. */
export type PeerMessage = RaftMessage | ClientUrlMessage;

/** Raft's validator, and the `client-url` message's: exactly its two fields, a valid URL. */
export const PEER_MESSAGE_VALIDATOR: MessageValidator<PeerMessage> = (value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)
    || (value as Record<string, unknown>)['kind'] !== 'client-url') {
    return RAFT_MESSAGE_VALIDATOR(value);
  }
  const fields = value as Record<string, unknown>;
  if (Object.keys(fields).some((key) => key !== 'kind' && key !== 'clientUrl')) {
    return { ok: false, problem: 'client-url: unknown field' };
  }
  const problem = clientUrlProblem(fields['clientUrl']);
  return problem === undefined
    ? { ok: true, message: { kind: 'client-url', clientUrl: fields['clientUrl'] as string } }
    : { ok: false, problem: `client-url: ${problem}` };
};

/**
 * Raft's view of the peer transport: what it sends goes out as is; `client-url` messages
 * that arrive go to `onClientUrl` instead of Raft.
 */
export function raftPeerTransport(inner: Transport<PeerMessage>,
  onClientUrl: (from: NodeId, clientUrl: string) => void): Transport<RaftMessage> {
  return {
    localId: inner.localId,
    send: (to, message) => inner.send(to, message),
    sendDatagram: (to, message) => inner.sendDatagram(to, message),
    setHandler: (handler: TransportHandler<RaftMessage>) => inner.setHandler({
      onMessage: (from, message) => {
        if (message.kind === 'client-url') onClientUrl(from, message.clientUrl);
        else handler.onMessage(from, message);
      },
      ...(handler.onPeerReset === undefined ? {}
        : { onPeerReset: (peer: NodeId) => handler.onPeerReset?.(peer) }),
    }),
    close: () => inner.close(),
  };
}

/** What the publisher needs of the consistent core. */
export interface PublisherCore {
  status(): { readonly role: string; readonly leaderId: NodeId | undefined;
    readonly membership: Membership };
  changeMembership(change: MembershipChange, done: (outcome: MembershipOutcome) => void): void;
}

export interface ClientUrlPublisherOptions {
  readonly selfId: NodeId;
  /** This member's client URL; undefined: it listens on a wildcard address (nothing to say). */
  readonly clientUrl: string | undefined;
  readonly core: PublisherCore;
  /** Sends a message to a peer on the peer transport. */
  readonly send: (to: NodeId, message: ClientUrlMessage) => void;
  readonly clock: Clock;
  /**
   * Between two attempts of this member, and between two proposals the leader makes for one
   * member. Unit: ms. The server uses 4 heartbeats (at least 200 ms): a new member is listed
   * within a few heartbeats of having a leader.
   */
  readonly intervalMs: number;
  readonly logger: Logger;
}

export class ClientUrlPublisher {
  /** Members whose change this leader has proposed and not yet seen decided. */
  private readonly proposing = new Set<NodeId>();
  /** When this leader last proposed for each member. Unit: ms (monotonic). */
  private readonly proposedAtMs = new Map<NodeId, number>();
  private published = false;

  constructor(private readonly o: ClientUrlPublisherOptions) {}

  /** One attempt, when the membership does not record this member's URL yet. */
  tick(): void {
    const url = this.o.clientUrl;
    if (url === undefined) return;
    const status = this.o.core.status();
    if (!isMember(status.membership, this.o.selfId)) return;
    if (clientUrlOfMember(status.membership, this.o.selfId) === url) {
      if (!this.published) this.o.logger.info({ clientUrl: url }, 'client URL published');
      this.published = true;
      return;
    }
    this.published = false;
    if (status.role === 'leader') this.propose(this.o.selfId, url);
    else if (status.leaderId !== undefined && status.leaderId !== this.o.selfId) {
      this.o.send(status.leaderId, { kind: 'client-url', clientUrl: url });
    }
  }

  /** A peer's `client-url` message (`from` as its link authenticated it). */
  onClientUrl(from: NodeId, clientUrl: string): void {
    // The validator checked it; checked again, since this is where it enters the log.
    if (clientUrlProblem(clientUrl) !== undefined) return;
    const status = this.o.core.status();
    if (status.role !== 'leader' || !isMember(status.membership, from)) return;
    if (clientUrlOfMember(status.membership, from) === clientUrl) return;
    this.propose(from, clientUrl);
  }

  private propose(node: NodeId, clientUrl: string): void {
    const nowMs = this.o.clock.monotonicMs();
    const lastMs = this.proposedAtMs.get(node);
    if (this.proposing.has(node) || (lastMs !== undefined && nowMs - lastMs < this.o.intervalMs)) {
      return;
    }
    this.proposing.add(node);
    this.proposedAtMs.set(node, nowMs);
    this.o.core.changeMembership({ kind: 'member-attributes', node, clientUrl }, (outcome) => {
      this.proposing.delete(node);
      if (outcome.kind === 'applied') {
        this.o.logger.info({ member: node, clientUrl, index: outcome.index },
          'client URL recorded in the log');
      } else {
        // Another change in progress, a leader change: the member asks again at its next tick.
        this.o.logger.debug({ member: node, clientUrl, outcome: outcome.kind },
          'client URL not recorded yet');
      }
    });
  }
}

/** This member's client URL to publish, or undefined for a wildcard listener. */
export function publishableClientUrl(scheme: 'http' | 'https', host: string,
  hostPort: string): string | undefined {
  if (host === '0.0.0.0' || host === '::' || host === '[::]' || host === '') return undefined;
  return `${scheme}://${hostPort}`;
}
