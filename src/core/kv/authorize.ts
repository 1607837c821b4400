/**
 * Whether a principal may do what a request asks, judged on the replicated auth state
 * (auth.ts). One judge for both places that ask: the server before it proposes or reads
 * (src/server/client-calls.ts: an early, clear refusal) and the store when it applies (a
 * permission revoked between the two wins, as in etcd, where apply checks again).
 *
 * The rules (docs/security.md, "Authentication"):
 * - put: write on the key; a put with a lease also needs the lease to be the principal's;
 * - delete: write on the key, or on the whole prefix;
 * - txn: read on every compared key, and each op of both branches as alone (a range: read);
 * - range and watch: read on the key or the whole prefix;
 * - compact and every auth command: root;
 * - lease grant: any user; revoke and time-to-live: the owner or root; keep-alive: the owner.
 *   A lease granted while auth was off has no owner: any user may keep it alive or revoke it.
 * Root (a user holding the role root) may do everything except keep another's lease alive.
 */
import { ROOT, type AuthTable } from './auth.js';
import type {
  KvClientCommand, KvKeySelector, KvLease, KvTxnOp,
} from './types.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A client command with or without the leader's stamp. */
export type KvClientRequest = DistributiveOmit<KvClientCommand, 'nowMs' | 'principal'>;

/** What a lease call does (for `leaseDenial`). */
export type LeaseAction = 'keep-alive' | 'revoke' | 'time-to-live' | 'attach';

/** Why `principal` may not send `command`, or undefined when it may. */
export function commandDenial(auth: AuthTable, principal: string, command: KvClientRequest,
  leaseOf: (id: number) => KvLease | undefined): string | undefined {
  const missing = userDenial(auth, principal);
  if (missing !== undefined || auth.isRoot(principal)) return missing;
  switch (command.kind) {
    case 'put':
    case 'delete':
    case 'txn': {
      const ops: readonly KvTxnOp[] = command.kind === 'txn'
        ? [...command.success, ...command.failure] : [{ ...command } as KvTxnOp];
      if (command.kind === 'txn') {
        for (const c of command.compare) {
          const denied = readDenial(auth, principal, { key: c.key });
          if (denied !== undefined) return denied;
        }
      }
      for (const op of ops) {
        const denied = opDenial(auth, principal, op, leaseOf);
        if (denied !== undefined) return denied;
      }
      return undefined;
    }
    case 'lease-grant':
      return undefined;
    case 'lease-revoke':
      return leaseDenial(auth, principal, leaseOf(command.leaseId), 'revoke');
    case 'compact':
    case 'auth':
      return `${command.kind === 'auth' ? command.op : 'compact'} needs the role ${ROOT}; `
        + `user ${principal} does not hold it`;
  }
}

function opDenial(auth: AuthTable, principal: string, op: KvTxnOp,
  leaseOf: (id: number) => KvLease | undefined): string | undefined {
  if (op.kind === 'range') return readDenial(auth, principal, op);
  if (!auth.permits(principal, op, 'write')) {
    return `user ${principal} may not write ${describe(op)}`;
  }
  if (op.kind === 'put' && op.lease !== undefined) {
    return leaseDenial(auth, principal, leaseOf(op.lease), 'attach');
  }
  return undefined;
}

/** Why `principal` may not read what `selector` covers, or undefined. */
export function readDenial(auth: AuthTable, principal: string, selector: KvKeySelector)
  : string | undefined {
  const missing = userDenial(auth, principal);
  if (missing !== undefined) return missing;
  return auth.permits(principal, selector, 'read') ? undefined
    : `user ${principal} may not read ${describe(selector)}`;
}

/** Why `principal` may not `action` the lease (absent: left to the call to say), or undefined. */
export function leaseDenial(auth: AuthTable, principal: string, lease: KvLease | undefined,
  action: LeaseAction): string | undefined {
  const missing = userDenial(auth, principal);
  if (missing !== undefined) return missing;
  if (lease === undefined || lease.owner === undefined || lease.owner === principal) {
    return undefined;
  }
  if (action !== 'keep-alive' && auth.isRoot(principal)) return undefined;
  const what = action === 'attach' ? 'attach keys to it' : action === 'keep-alive'
    ? 'keep it alive' : action === 'revoke' ? 'revoke it' : 'ask its time-to-live';
  return `lease ${lease.id} belongs to user ${lease.owner}; user ${principal} may not ${what}`;
}

/** Whether a principal holds root (auth commands, compaction, every lease listed). */
export function rootDenial(auth: AuthTable, principal: string, what: string)
  : string | undefined {
  const missing = userDenial(auth, principal);
  if (missing !== undefined) return missing;
  return auth.isRoot(principal) ? undefined
    : `${what} needs the role ${ROOT}; user ${principal} does not hold it`;
}

function userDenial(auth: AuthTable, principal: string): string | undefined {
  return auth.user(principal) === undefined ? `user ${principal} does not exist (deleted?)`
    : undefined;
}

function describe(selector: KvKeySelector): string {
  return selector.prefix === true ? `the prefix "${selector.key}"` : `the key "${selector.key}"`;
}
