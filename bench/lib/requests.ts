/**
 * The requests a closed-loop load client sends, by kind: puts (the put suite), one-key range
 * reads (read), and lease grants, keep-alives and revokes (lease). Each kind gives the path,
 * the next body of a lane, how to check an answer, and what to do when the window closes. The
 * bodies come from lib/wire.ts and lib/lease-wire.ts, prebuilt where they can be, so the client
 * does the same work per request whichever system it drives.
 */
import { leaseWire } from './lease-wire.js';
import { putEncoder, rangeEncoder, valueOf, type SystemName } from './wire.js';

export const REQUEST_KINDS = [
  'put', 'range-linearizable', 'range-serializable', 'lease-grant', 'lease-keepalive',
  'lease-revoke',
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface RequestSourceOptions {
  readonly system: SystemName;
  readonly kind: RequestKind;
  /** Keys to draw from (uniformly): put and range. Unit: keys. */
  readonly keySpaceSize: number;
  readonly keyBytes: number;
  readonly valueBytes: number;
  /** TTL of granted leases. Unit: s. */
  readonly leaseTtlS: number;
  /** Leases to keep alive (lane i renews lease i mod n) or to revoke (each once). */
  readonly leaseIds: readonly string[];
}

export interface RequestSource {
  readonly path: string;
  /** Whether answers' bodies are kept, for `accept` (else only the status code counts). */
  readonly keepBody: boolean;
  /**
   * When the window closes: `stop` (report at once; lanes still waiting are not counted),
   * `finish` (wait for the requests in flight, so `produced` holds every lease granted), or
   * `drain` (report, then go on until `next` runs out: every lease gets revoked).
   */
  readonly afterWindow: 'stop' | 'finish' | 'drain';
  /** The next body for `lane` (its `clientId`, at its `sequence`); undefined: nothing left. */
  next(lane: number, clientId: string, sequence: number): string | undefined;
  /** Whether a 200 answer (its body when `keepBody`) counts as a success. */
  accept(body: string): boolean;
  /** Lease ids granted so far (lease-grant), for the next phases. */
  produced(): readonly string[];
}

export function requestSource(o: RequestSourceOptions): RequestSource {
  const none: readonly string[] = [];
  const base = { keepBody: false, afterWindow: 'stop', accept: () => true, produced: () => none };
  const randomKey = (): number => Math.floor(Math.random() * o.keySpaceSize);
  switch (o.kind) {
    case 'put': {
      const encoder = putEncoder(o.system, o.keySpaceSize, o.keyBytes, valueOf(o.valueBytes));
      return { ...base, afterWindow: 'stop', path: encoder.path,
        next: (_lane, clientId, sequence) => encoder.body(randomKey(), clientId, sequence) };
    }
    case 'range-linearizable':
    case 'range-serializable': {
      const consistency = o.kind === 'range-linearizable' ? 'linearizable' : 'serializable';
      const encoder = rangeEncoder(o.system, o.keySpaceSize, o.keyBytes, consistency);
      return { ...base, afterWindow: 'stop', path: encoder.path,
        next: () => encoder.body(randomKey()) };
    }
    case 'lease-grant':
      return leaseGrants(o);
    case 'lease-keepalive': {
      const wire = leaseWire(o.system);
      const bodies = o.leaseIds.map((id) => wire.keepAliveBody(id));
      return { ...base, afterWindow: 'stop', path: wire.keepAlivePath, keepBody: true,
        next: (lane) => bodies[lane % bodies.length], accept: wire.keepAliveAccepted };
    }
    case 'lease-revoke': {
      const wire = leaseWire(o.system);
      let cursor = 0;
      return { ...base, afterWindow: 'drain', path: wire.revokePath,
        next: (_lane, clientId, sequence) => {
          const id = o.leaseIds[cursor++];
          return id === undefined ? undefined : wire.revokeBody(id, clientId, sequence);
        } };
    }
  }
}

function leaseGrants(o: RequestSourceOptions): RequestSource {
  const wire = leaseWire(o.system);
  const granted: string[] = [];
  return {
    path: wire.grantPath, keepBody: true, afterWindow: 'finish',
    next: (_lane, clientId, sequence) => wire.grantBody(o.leaseTtlS, clientId, sequence),
    accept: (body) => {
      const id = wire.leaseIdOf(body);
      if (id !== undefined) granted.push(id);
      return id !== undefined;
    },
    produced: () => granted,
  };
}
