/**
 * Each request of the client protocol as the etcd calls that perform it, and the answer as the
 * body the Conclave server returns for it (docs/api.md). A failed call rejects with its
 * EtcdCallError (the transport turns it into an answer); a body that cannot be read rejects
 * with a CONCLAVE_PROTOCOL CoordError.
 */
import type { ClientRequest } from '../../ports/client-transport.js';
import { CoordError } from '../../errors.js';
import { EtcdCallError, type EtcdMessage } from './etcd-connection.js';
import type { EtcdUnaryName } from './etcd-schema.js';
import {
  compareOf, deleteBody, deleteOf, int, leaseIdFor, memberIdOf, msOfSeconds, putBody, putOf,
  rangeBody, rangeOf, revisionOf, ttlSecondsOf, txnOpOf, txnResponseOf,
} from './etcd-wire.js';

export interface EtcdRequestContext {
  readonly call: (name: EtcdUnaryName, request: EtcdMessage) => Promise<EtcdMessage>;
  readonly endpoint: string;
  /** One keep-alive over a stream of its own (etcd has no unary keep-alive). */
  readonly keepAliveOnce: (leaseId: number) => Promise<unknown>;
}

/** Performs `request` on etcd; the Conclave-shaped body of its answer. */
export async function etcdRequest(request: ClientRequest, c: EtcdRequestContext):
  Promise<unknown> {
  switch (request.kind) {
    case 'put': {
      const answer = await c.call('put', putOf(request));
      return { kind: 'put', revision: revisionOf(answer), ...putBody(answer) };
    }
    case 'delete': {
      const answer = await c.call('deleteRange', deleteOf(request));
      return { kind: 'delete', revision: revisionOf(answer),
        ...deleteBody(answer, request.prevKv) };
    }
    case 'range': {
      const answer = await c.call('range', rangeOf({ ...request,
        serializable: request.consistency === 'serializable' }));
      return { kind: 'range', revision: revisionOf(answer), ...rangeBody(answer) };
    }
    case 'txn':
      return txn(request, c);
    case 'compact': {
      const answer = await c.call('compact', { revision: request.revision });
      return { kind: 'compact', revision: revisionOf(answer),
        compactRevision: request.revision };
    }
    case 'lease-grant':
      return grant(request, c);
    case 'lease-revoke':
      return revoke(request.leaseId, c);
    case 'lease-keepalive':
      return c.keepAliveOnce(request.leaseId);
    case 'lease-ttl':
      return timeToLive(request.leaseId, request.keys === true, c);
    case 'lease-list':
      return list(c);
    case 'status':
      return status(c);
    case 'auth':
      // etcd's users and roles are managed with etcdctl (docs/backends.md).
      throw new CoordError('CONCLAVE_USAGE', `${request.call}: manage etcd's users and roles `
        + 'with etcdctl; the etcd backend takes auth: { user, password } to log in');
  }
}

async function txn(request: Extract<ClientRequest, { kind: 'txn' }>, c: EtcdRequestContext):
  Promise<unknown> {
  const answer = await c.call('txn', { compare: request.compare.map(compareOf),
    success: request.success.map(txnOpOf), failure: request.failure.map(txnOpOf) });
  const succeeded = answer['succeeded'] === true;
  const ops = succeeded ? request.success : request.failure;
  const raw = Array.isArray(answer['responses']) ? answer['responses'] as EtcdMessage[] : [];
  if (raw.length !== ops.length) {
    throw new CoordError('CONCLAVE_PROTOCOL', `etcd answered a transaction of ${ops.length} `
      + `ops with ${raw.length} responses`, { outcome: 'unknown' });
  }
  return { kind: 'txn', revision: revisionOf(answer), succeeded,
    responses: raw.map((r, i) => txnResponseOf(r, ops[i]!)) };
}

/**
 * A grant under the id the request's idempotency key names: a retry whose first attempt was
 * applied finds "lease already exists" and answers that lease, as our server's receiver does.
 */
async function grant(request: Extract<ClientRequest, { kind: 'lease-grant' }>,
  c: EtcdRequestContext): Promise<unknown> {
  const id = leaseIdFor(request);
  try {
    const answer = await c.call('leaseGrant', { ID: id, TTL: ttlSecondsOf(request.ttlMs) });
    if (typeof answer['error'] === 'string' && answer['error'] !== '') {
      throw new CoordError('CONCLAVE_REQUEST_INVALID', `etcd at ${c.endpoint} refused the `
        + `grant: ${answer['error'].slice(0, 500)}`);
    }
    return { kind: 'lease-grant', revision: revisionOf(answer), leaseId: int(answer['ID'], 'ID'),
      ttlMs: msOfSeconds(answer['TTL'], 'TTL') };
  } catch (error) {
    if (!(error instanceof EtcdCallError) || !/lease already exists/i.test(error.details)) {
      throw error;
    }
    const ttl = await c.call('leaseTimeToLive', { ID: id });
    if (int(ttl['TTL'], 'TTL') < 0) throw error; // granted, then expired: a new grant is due
    return { kind: 'lease-grant', revision: revisionOf(ttl), leaseId: id,
      ttlMs: msOfSeconds(ttl['grantedTTL'], 'grantedTTL') };
  }
}

/** etcd's revoke says nothing of the keys it deleted: they are counted just before. */
async function revoke(leaseId: number, c: EtcdRequestContext): Promise<unknown> {
  const before = await c.call('leaseTimeToLive', { ID: leaseId, keys: true });
  const keys = Array.isArray(before['keys']) ? before['keys'].length : 0;
  const answer = await c.call('leaseRevoke', { ID: leaseId });
  return { kind: 'lease-revoke', revision: revisionOf(answer), leaseId, deleted: keys };
}

async function timeToLive(leaseId: number, keys: boolean, c: EtcdRequestContext):
  Promise<Record<string, unknown>> {
  const answer = await c.call('leaseTimeToLive', { ID: leaseId, keys });
  const remaining = int(answer['TTL'], 'TTL');
  if (remaining < 0) {
    throw new CoordError('CONCLAVE_LEASE_EXPIRED', `etcd at ${c.endpoint}: lease ${leaseId} `
      + 'does not exist (expired, revoked, never granted)');
  }
  const listed = Array.isArray(answer['keys']) ? answer['keys'] as Buffer[] : [];
  return { leaseId, ttlMs: msOfSeconds(answer['grantedTTL'], 'grantedTTL'),
    remainingMs: remaining * 1000,
    ...(keys ? { keys: listed.map((k) => k.toString('utf8')) } : {}) };
}

/**
 * Every lease etcd holds, each asked for its TTL and keys. Leases whose ids a JS number cannot
 * hold (granted by another etcd client) are left out: this client could not name them.
 */
async function list(c: EtcdRequestContext): Promise<unknown> {
  const answer = await c.call('leaseLeases', {});
  const raw = Array.isArray(answer['leases']) ? answer['leases'] as EtcdMessage[] : [];
  const ids = raw.map((l) => Number(l['ID'])).filter((id) => Number.isSafeInteger(id));
  const leases = [];
  for (const id of ids) {
    try {
      const ttl = await timeToLive(id, true, c);
      leases.push({ leaseId: id, ttlMs: ttl['ttlMs'], remainingMs: ttl['remainingMs'],
        keyCount: (ttl['keys'] as string[]).length });
    } catch (error) {
      if (!(error instanceof CoordError && error.code === 'CONCLAVE_LEASE_EXPIRED')) throw error;
    }
  }
  return { leases };
}

/** etcd's Status and MemberList in the shape of our /v1/status. */
async function status(c: EtcdRequestContext): Promise<unknown> {
  const answer = await c.call('status', {});
  const members = await c.call('memberList', {});
  const header = answer['header'] as EtcdMessage;
  const id = memberIdOf(header['member_id']);
  const leaderId = memberIdOf(answer['leader']);
  const listed = Array.isArray(members['members']) ? members['members'] as EtcdMessage[] : [];
  return {
    id, role: id === leaderId ? 'leader' : 'follower', leaderId,
    term: int(answer['raftTerm'], 'raftTerm'),
    commitIndex: int(answer['raftIndex'], 'raftIndex'),
    appliedIndex: int(answer['raftAppliedIndex'], 'raftAppliedIndex'),
    revision: revisionOf(answer), version: answer['version'],
    members: listed.map((m) => ({ id: memberIdOf(m['ID']), name: m['name'],
      ...firstUrl('clientUrl', m['clientURLs']), ...firstUrl('peerUrl', m['peerURLs']),
      ...(memberIdOf(m['ID']) === leaderId ? { role: 'leader' } : {}) })),
  };
}

function firstUrl(field: string, urls: unknown): Record<string, string> {
  const first = Array.isArray(urls) ? urls[0] : undefined;
  return typeof first === 'string' ? { [field]: first } : {};
}
