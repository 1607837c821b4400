/**
 * Live membership on the client port (etcdctl's `member` and `move-leader`):
 * - `GET /v1/members`: the membership in force on this member, with each one's addresses;
 * - `POST /v1/members/add {name, peerAddr}`: a new member joins as a learner (Raft thesis
 *   §4.2.1: it catches up without voting), its peer address recorded in the config entry so
 *   every member learns it from the log (logged-peer-addresses.ts); `promote {name}` makes a
 *   caught-up learner a voter; `remove {name}` takes a voter or learner out;
 * - `POST /v1/members/peer-address {name, peerAddr}`: where this member reaches a peer, in
 *   memory only (an operator's override; the log's next address for that peer replaces it);
 * - `POST /v1/move-leader {name}`: leadership transfer to that voter (thesis §3.10).
 * Changes go to the leader (a follower answers 307); one change at a time (the Raft core
 * refuses a second while the first is not committed). Refusals are one line each: a duplicate
 * name, the last voter, an unknown member, a change in progress, a learner still behind.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { formatPeerAddress, parsePeerAddress, type PeerAddress } from '../adapters/peer-address.js';
import { nodeId, type NodeId } from '../core/ids.js';
import { peerAddrProblem, type MembershipChange } from '../core/raft/index.js';
import type { ConsistentCore } from '../runtime/core/consistent-core.js';
import type { MembershipOutcome, TransferOutcome } from '../runtime/raft/raft-runtime.js';

export interface MembershipApiOptions {
  readonly core: ConsistentCore;
  readonly clusterId: string;
  readonly clientUrlOf: (id: NodeId) => string | undefined;
  readonly peerAddressOf: (id: NodeId) => PeerAddress | undefined;
  readonly setPeerAddress: (id: NodeId, address: PeerAddress) => void;
  /** Where peers reach this member. */
  readonly selfPeerAddress: PeerAddress;
}

/**
 * Largest membership request body. Unit: bytes. Default: 4 KiB. Why: a name and an address
 * are tens of bytes; anything near this is not a membership request.
 */
export const MEMBERSHIP_BODY_BYTES_MAX = 4096;

/**
 * How long a change refused for a passing reason is tried again before the refusal is
 * answered. Unit: ms. Default: 2000. Why: a pending change or a new leader's first entry
 * commits within a few heartbeats; well inside the CLI's 5 s wait for one answer.
 */
export const MEMBERSHIP_PASSING_WAIT_MS = 2000;

/** Between tries of a change refused for a passing reason. Unit: ms. Why: about a heartbeat. */
const MEMBERSHIP_RETRY_MS = 50;

/** Refusals that pass by themselves (RaftNode.proposeMembershipChange's reasons). */
const PASSING: readonly string[] = ['change-pending', 'no-commit-in-term'];

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

type Send = (res: ServerResponse, status: number, body: unknown) => void;

export const MEMBERSHIP_PATHS: ReadonlySet<string> = new Set(['/v1/members',
  '/v1/members/add', '/v1/members/promote', '/v1/members/remove',
  '/v1/members/peer-address', '/v1/move-leader']);

export class MembershipApi {
  constructor(private readonly o: MembershipApiOptions, private readonly send: Send) {}

  serve(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (path === '/v1/members') {
      if (req.method !== 'GET') return this.usage(res, 405, `${path} takes GET`);
      return this.send(res, 200, this.list());
    }
    if (req.method !== 'POST') return this.usage(res, 405, `${path} takes POST`);
    readSmallBody(req, (body) => {
      if (typeof body === 'string') return this.usage(res, 400, body);
      this.change(req, res, path, body).catch(() => undefined);
    });
  }

  list(): unknown {
    const status = this.o.core.status();
    const entry = (id: NodeId, role: 'voter' | 'learner'): unknown => {
      const peer = id === status.id ? this.o.selfPeerAddress : this.o.peerAddressOf(id);
      return { name: id, role, isLeader: status.leaderId === id,
        peerAddr: peer === undefined ? null : `${peer.host}:${peer.port}`,
        clientUrl: this.o.clientUrlOf(id) ?? null };
    };
    return { clusterId: this.o.clusterId, leaderId: status.leaderId ?? null,
      members: [...status.membership.voters.map((id) => entry(id, 'voter')),
        ...status.membership.learners.map((id) => entry(id, 'learner'))] };
  }

  private async change(req: IncomingMessage, res: ServerResponse, path: string,
    body: Record<string, unknown>): Promise<void> {
    const name = body['name'];
    if (typeof name !== 'string' || !NAME.test(name)) {
      return this.usage(res, 400, 'name: expected a member name (letters, digits, . _ -)');
    }
    const id = nodeId(name);
    if (path === '/v1/members/peer-address') return this.peerAddress(res, id, body);
    const status = this.o.core.status();
    if (status.role !== 'leader') return this.redirect(req, res, status.leaderId);
    const refusal = refusalOf(path, id, status.membership, body);
    if (refusal !== undefined) return this.refuse(res, refusal);
    if (path === '/v1/move-leader') return this.moveLeader(res, id);
    const change: MembershipChange = path === '/v1/members/add'
      ? { kind: 'add-learner', node: id, peerAddr: formatPeerAddress(parsedAddress(body)!) }
      : { kind: path === '/v1/members/promote' ? 'promote' : 'remove', node: id };
    this.propose(res, change, performance.now() + MEMBERSHIP_PASSING_WAIT_MS);
  }

  /**
   * Proposes `change`; a refusal that passes by itself within a few heartbeats (the previous
   * change not committed yet, such as a member publishing its client URL right after a start;
   * a new leader's first entry not committed yet) is tried again until `untilMs`.
   */
  private propose(res: ServerResponse, change: MembershipChange, untilMs: number): void {
    this.o.core.runtime.changeMembership(change, (outcome: MembershipOutcome) => {
      if (outcome.kind === 'applied') {
        return this.send(res, 200, { ...change, index: outcome.index, ...this.list() as object });
      }
      const passing = outcome.kind !== 'unknown' && PASSING.some((r) => outcome.reason
        .startsWith(r));
      if (passing && performance.now() + MEMBERSHIP_RETRY_MS < untilMs) {
        setTimeout(() => this.propose(res, change, untilMs), MEMBERSHIP_RETRY_MS);
        return;
      }
      if (outcome.kind !== 'unknown' && outcome.reason.startsWith('no-commit-in-term')) {
        // Right after an election: as retryable as one under way, and the CLI retries it.
        return this.send(res, 503, { error: { code: 'CONCLAVE_NO_LEADER', outcome: 'failed',
          message: refusalLine(outcome.reason) } });
      }
      this.refuse(res, outcome.kind === 'unknown' ? `outcome unknown: ${outcome.reason}`
        : refusalLine(outcome.reason), outcome.kind === 'unknown' ? 504 : 409);
    });
  }

  private peerAddress(res: ServerResponse, id: NodeId, body: Record<string, unknown>): void {
    const address = parsedAddress(body);
    if (address === undefined) return this.usage(res, 400, 'peerAddr: expected HOST:PORT');
    if (id !== this.o.core.id) this.o.setPeerAddress(id, address);
    this.send(res, 200, { name: id, peerAddr: `${address.host}:${address.port}` });
  }

  private moveLeader(res: ServerResponse, id: NodeId): void {
    if (id === this.o.core.id) return void this.send(res, 200, { leaderId: id, moved: false });
    this.o.core.runtime.transferLeadership(id, (outcome: TransferOutcome) => {
      if (outcome.kind === 'transferred') {
        return this.send(res, 200, { leaderId: outcome.leaderId, term: outcome.term,
          moved: true });
      }
      this.refuse(res, `leadership did not move to ${id}: ${outcome.reason}`);
    });
  }

  private redirect(req: IncomingMessage, res: ServerResponse, leaderId: NodeId | undefined): void {
    const leaderUrl = leaderId === undefined ? undefined : this.o.clientUrlOf(leaderId);
    if (leaderUrl === undefined) {
      return this.send(res, 503, { error: { code: 'CONCLAVE_NO_QUORUM', outcome: 'failed',
        message: `${this.o.core.id} knows no leader${leaderId === undefined ? ''
          : ` with a client URL (the leader is ${leaderId})`}` } });
    }
    res.writeHead(307, { location: `${leaderUrl}${req.url ?? ''}`,
      'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'CONCLAVE_NOT_LEADER', outcome: 'failed',
      message: `not the leader; the leader is ${leaderId}`, leaderId, leaderUrl } }));
  }

  private refuse(res: ServerResponse, message: string, status = 409): void {
    this.send(res, status, { error: { code: 'CONCLAVE_REQUEST_INVALID', message,
      outcome: status === 504 ? 'unknown' : 'failed' } });
  }

  private usage(res: ServerResponse, status: number, message: string): void {
    this.send(res, status, { error: { code: 'CONCLAVE_REQUEST_INVALID', message,
      outcome: 'failed' } });
  }
}

/** Why the change must not be proposed (checked before Raft sees it), or undefined. */
function refusalOf(path: string, id: NodeId, membership: { voters: readonly NodeId[];
  learners: readonly NodeId[] }, body: Record<string, unknown>): string | undefined {
  const voter = membership.voters.includes(id);
  const learner = membership.learners.includes(id);
  switch (path) {
    case '/v1/members/add':
      if (voter || learner) return `member ${id} already exists (a ${voter ? 'voter' : 'learner'})`;
      return parsedAddress(body) === undefined ? 'peerAddr: expected HOST:PORT' : undefined;
    case '/v1/members/promote':
      if (voter) return `member ${id} is a voter already`;
      return learner ? undefined : `no learner ${id} (see conclave member list)`;
    case '/v1/members/remove':
      if (!voter && !learner) return `no member ${id} (see conclave member list)`;
      return voter && membership.voters.length === 1
        ? `refusing to remove ${id}, the last voter: the cluster would have no one to decide`
        : undefined;
    default:
      return voter ? undefined : `${id} is not a voter; leadership moves only to a voter`;
  }
}

function refusalLine(reason: string): string {
  if (reason.startsWith('change-pending')) {
    return `another membership change is in progress (${reason.slice(16)}); retry once it `
      + 'is committed';
  }
  if (reason.startsWith('learner-behind')) {
    return `the learner has not caught up yet (${reason.slice(16)}); retry shortly`;
  }
  if (reason.startsWith('no-commit-in-term')) {
    return 'the new leader has not committed an entry of its term yet; retry shortly';
  }
  return reason === 'not-leader' ? 'this member lost its leadership; retry' : reason;
}

/** The body's `peerAddr`, when both the transport and the log accept it. */
function parsedAddress(body: Record<string, unknown>): PeerAddress | undefined {
  const text = body['peerAddr'];
  if (typeof text !== 'string') return undefined;
  const parsed = parsePeerAddress(text);
  if ('error' in parsed || peerAddrProblem(formatPeerAddress(parsed)) !== undefined) {
    return undefined;
  }
  return parsed;
}

/** A JSON object of at most MEMBERSHIP_BODY_BYTES_MAX bytes, or why the body is not one. */
function readSmallBody(req: IncomingMessage,
  done: (body: Record<string, unknown> | string) => void): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MEMBERSHIP_BODY_BYTES_MAX) over = true;
    else chunks.push(chunk);
  });
  req.once('end', () => {
    if (over) return done(`the body exceeds ${MEMBERSHIP_BODY_BYTES_MAX} bytes`);
    try {
      const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        return done(value as Record<string, unknown>);
      }
      done('the body must be a JSON object');
    } catch {
      done('the body is not JSON');
    }
  });
}
