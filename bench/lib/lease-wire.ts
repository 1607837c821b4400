/**
 * What lease requests look like on the wire for each system under test, over HTTP/JSON and
 * over a WebSocket of pipelined keep-alives. Conclave (docs/api.md) / etcd 3.4's gateway:
 *
 * - grant: `POST /v1/lease/grant {ttlMs, clientId, sequence}` / `POST /v3/lease/grant {TTL}`
 * - revoke: `POST /v1/lease/revoke {leaseId, clientId, sequence}` / `POST /v3/lease/revoke {ID}`
 * - keep-alive: `POST /v1/lease/keepalive {leaseId}` / `POST /v3/lease/keepalive {ID}` (etcd's
 *   gateway turns the body into a gRPC LeaseKeepAlive stream: one request, one answer, the end)
 * - pipelined: WebSocket `/v1/lease/stream`, `{id, leaseId}`, answers carry `id`, any order /
 *   WebSocket `/v3/lease/keepalive` (etcd's gateway proxies WebSocket messages onto one gRPC
 *   LeaseKeepAlive stream), `{ID}`, answers in order
 *
 * Lease ids travel as decimal strings: etcd's are 64-bit and do not fit a JS number.
 */
import type { SystemName } from './wire.js';

export interface LeaseWire {
  readonly grantPath: string;
  grantBody(ttlS: number, clientId: string, sequence: number): string;
  /** The lease id in a grant's 200 answer, undefined when there is none. */
  leaseIdOf(grantAnswer: string): string | undefined;
  readonly revokePath: string;
  revokeBody(leaseId: string, clientId: string, sequence: number): string;
  readonly keepAlivePath: string;
  keepAliveBody(leaseId: string): string;
  /** Whether a keep-alive's 200 answer says the lease lives (etcd answers 200 without a TTL). */
  keepAliveAccepted(answer: string): boolean;
  /** The WebSocket path of pipelined keep-alives on the leader. */
  readonly streamPath: string;
  /** `by-id`: answers carry the request's id, in any order; `in-order`: one per request, FIFO. */
  readonly streamAnswers: 'by-id' | 'in-order';
  streamMessage(id: number, leaseId: string): string;
  /** Parses one stream answer: its request id (by-id streams) and whether the lease lives. */
  streamAnswer(text: string): { readonly id: number | undefined; readonly ok: boolean };
}

export function leaseWire(system: SystemName): LeaseWire {
  switch (system) {
    case 'conclave':
      return CONCLAVE_LEASE_WIRE;
    case 'etcd':
      return ETCD_LEASE_WIRE;
  }
}

const CONCLAVE_LEASE_WIRE: LeaseWire = {
  grantPath: '/v1/lease/grant',
  grantBody: (ttlS, clientId, sequence) =>
    `{"ttlMs":${ttlS * 1000},"clientId":"${clientId}","sequence":${sequence}}`,
  leaseIdOf: (answer) => {
    const leaseId = (JSON.parse(answer) as { leaseId?: unknown }).leaseId;
    return typeof leaseId === 'number' ? String(leaseId) : undefined;
  },
  revokePath: '/v1/lease/revoke',
  revokeBody: (leaseId, clientId, sequence) =>
    `{"leaseId":${leaseId},"clientId":"${clientId}","sequence":${sequence}}`,
  keepAlivePath: '/v1/lease/keepalive',
  keepAliveBody: (leaseId) => `{"leaseId":${leaseId}}`,
  keepAliveAccepted: (answer) => answer.includes('"remainingMs"'),
  streamPath: '/v1/lease/stream',
  streamAnswers: 'by-id',
  streamMessage: (id, leaseId) => `{"id":${id},"leaseId":${leaseId}}`,
  streamAnswer: (text) => {
    const answer = JSON.parse(text) as { id?: unknown; ttlMs?: unknown; error?: unknown };
    const id = typeof answer.id === 'number' ? answer.id : undefined;
    return { id, ok: answer.error === undefined && typeof answer.ttlMs === 'number' };
  },
};

const ETCD_LEASE_WIRE: LeaseWire = {
  grantPath: '/v3/lease/grant',
  grantBody: (ttlS) => `{"TTL":${ttlS}}`,
  leaseIdOf: (answer) => {
    const id = (JSON.parse(answer) as { ID?: unknown }).ID;
    return typeof id === 'string' ? id : undefined;
  },
  revokePath: '/v3/lease/revoke',
  revokeBody: (leaseId) => `{"ID":"${leaseId}"}`,
  keepAlivePath: '/v3/lease/keepalive',
  keepAliveBody: (leaseId) => `{"ID":"${leaseId}"}`,
  // A lease that does not exist is answered 200 with no TTL (TTL 0 is left out of the JSON).
  keepAliveAccepted: (answer) => answer.includes('"TTL"'),
  streamPath: '/v3/lease/keepalive',
  streamAnswers: 'in-order',
  streamMessage: (_id, leaseId) => `{"ID":"${leaseId}"}`,
  streamAnswer: (text) => {
    const answer = JSON.parse(text) as { result?: { TTL?: unknown } };
    return { id: undefined, ok: Number(answer.result?.TTL ?? 0) > 0 };
  },
};
