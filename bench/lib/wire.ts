/**
 * What a put and a status probe look like on the wire for each system under test. Both are
 * HTTP/JSON: Conclave's /v1 API (docs/api.md) and etcd 3.4's gRPC gateway (/v3, base64 keys and
 * values). Request bodies are built by string concatenation from precomputed parts for both,
 * so the client does the same work per request whichever system it drives.
 */

export const SYSTEM_NAMES = ['conclave', 'etcd'] as const;
export type SystemName = (typeof SYSTEM_NAMES)[number];

/** The workload of etcd's published put benchmark. */
export const PUT_WORKLOAD = Object.freeze({
  /** Distinct keys drawn uniformly at random. Unit: keys. Default: 100,000 (etcd's). */
  keySpaceSize: 100_000,
  /** Unit: bytes. Default: 8 (etcd's --key-size). */
  keyBytes: 8,
  /** Unit: bytes. Default: 256 (etcd's --val-size). */
  valueBytes: 256,
});

/** The key with this index: its decimal digits, zero-padded to `keyBytes` ASCII bytes. */
export function keyOf(index: number, keyBytes: number): string {
  return String(index).padStart(keyBytes, '0');
}

/** A value of `bytes` ASCII letters and digits (the same for every put of a run). */
export function valueOf(bytes: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let value = '';
  for (let i = 0; i < bytes; i++) value += alphabet[Math.floor(Math.random() * alphabet.length)];
  return value;
}

export interface PutEncoder {
  readonly path: string;
  /** The JSON body of a put of key number `keyIndex` by writer `clientId` at its `sequence`. */
  body(keyIndex: number, clientId: string, sequence: number): string;
}

/** Keys and values contain only [0-9A-Za-z+/=], so they need no JSON escaping. */
export function putEncoder(system: SystemName, keySpaceSize: number, keyBytes: number,
  value: string): PutEncoder {
  switch (system) {
    case 'conclave': {
      const keys = Array.from({ length: keySpaceSize }, (_, i) => keyOf(i, keyBytes));
      const tail = `","value":"${value}","clientId":"`;
      return {
        path: '/v1/kv/put',
        // One write in flight per clientId (docs/api.md): each closed-loop writer has its own.
        body: (i, clientId, sequence) =>
          `{"key":"${keys[i]}${tail}${clientId}","sequence":${sequence}}`,
      };
    }
    case 'etcd': {
      const keys = Array.from({ length: keySpaceSize }, (_, i) => base64(keyOf(i, keyBytes)));
      const tail = `","value":"${base64(value)}"}`;
      return { path: '/v3/kv/put', body: (i) => `{"key":"${keys[i]}${tail}` };
    }
  }
}

/** Linearizable (the default of both systems) or serializable (local state, maybe stale). */
export type ReadConsistency = 'linearizable' | 'serializable';

export interface RangeEncoder {
  readonly path: string;
  /** The JSON body of a range read of the one key with this index. */
  body(keyIndex: number): string;
}

/** A one-key range read: Conclave's `consistency` field, etcd's `serializable` flag. */
export function rangeEncoder(system: SystemName, keySpaceSize: number, keyBytes: number,
  consistency: ReadConsistency): RangeEncoder {
  switch (system) {
    case 'conclave': {
      const keys = Array.from({ length: keySpaceSize }, (_, i) => keyOf(i, keyBytes));
      const tail = consistency === 'serializable' ? '","consistency":"serializable"}' : '"}';
      return { path: '/v1/kv/range', body: (i) => `{"key":"${keys[i]}${tail}` };
    }
    case 'etcd': {
      const keys = Array.from({ length: keySpaceSize }, (_, i) => base64(keyOf(i, keyBytes)));
      const tail = `","serializable":${consistency === 'serializable'}}`;
      return { path: '/v3/kv/range', body: (i) => `{"key":"${keys[i]}${tail}` };
    }
  }
}

export function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

/** What one member says about leadership, in the same shape for both systems. */
export interface LeaderView {
  /** This member's own id as the system names it. */
  readonly selfId: string;
  /** The leader this member follows, if it knows one. */
  readonly leaderId: string | undefined;
  /** Raft commit (or applied) index: lets a run wait until a restarted member caught up. */
  readonly index: number;
}

/** Parses Conclave's GET /v1/status. */
export function conclaveLeaderView(body: string): LeaderView | undefined {
  const status = JSON.parse(body) as {
    id?: string; leaderId?: string | null; commitIndex?: number;
  };
  if (typeof status.id !== 'string') return undefined;
  const leaderId = typeof status.leaderId === 'string' ? status.leaderId : undefined;
  return { selfId: status.id, leaderId, index: status.commitIndex ?? 0 };
}

/** Parses etcd's POST /v3/maintenance/status (ids are decimal strings; leader "0" is none). */
export function etcdLeaderView(body: string): LeaderView | undefined {
  const status = JSON.parse(body) as {
    header?: { member_id?: string }; leader?: string; raftAppliedIndex?: string;
  };
  const selfId = status.header?.member_id;
  if (selfId === undefined) return undefined;
  const leaderId = status.leader === undefined || status.leader === '0' ? undefined : status.leader;
  return { selfId, leaderId, index: Number(status.raftAppliedIndex ?? '0') };
}
