/**
 * The rules a command or read request must follow, checked twice: by the server before it
 * proposes a command (so a bad request never reaches the log: "no poisoned log"), and by
 * `apply` again (a replica must never act on an entry that slipped past, e.g. written by a
 * server with other limits). Every violated rule is reported at once.
 */
import { assertNever } from '../assert.js';
import { authNameProblem, authOpProblems } from './auth.js';
import type { KvStoreConfig } from './config.js';
import { isWellFormed, utf8ByteLengthExceeds } from './text.js';
import type {
  KvClientStamp, KvCommand, KvCompare, KvKeySelector, KvLeaseSystemCommand, KvProblem,
  KvRangeRequest, KvTxnOp,
} from './types.js';

type Problems = KvProblem[];

/** Every rule `command` breaks under `config` (apart from its encoded size); empty if valid. */
export function validateKvCommand(command: KvCommand, config: KvStoreConfig): readonly KvProblem[] {
  const problems: Problems = [];
  switch (command.kind) {
    case 'lease-checkpoint':
    case 'lease-renew':
    case 'lease-expire':
      checkSystemCommand(problems, command);
      return problems;
    default:
      break;
  }
  checkStamp(problems, command, config);
  switch (command.kind) {
    case 'put':
      checkKey(problems, 'key', command.key, false, config);
      checkValue(problems, 'value', command.value, config);
      checkLease(problems, 'lease', command.lease);
      break;
    case 'delete':
      checkSelector(problems, '', command, config);
      break;
    case 'txn':
      checkTxn(problems, command.compare, command.success, command.failure, config);
      break;
    case 'compact':
      checkInteger(problems, 'revision', command.revision, 1);
      break;
    case 'lease-grant':
      checkInteger(problems, 'ttlMs', command.ttlMs, 1);
      if (Number.isSafeInteger(command.ttlMs) && command.ttlMs > config.leaseTtlMsMax) {
        problems.push({ field: 'ttlMs', rule: `must be at most ${config.leaseTtlMsMax} ms` });
      }
      break;
    case 'lease-revoke':
      checkInteger(problems, 'leaseId', command.leaseId, 1);
      break;
    case 'auth':
      problems.push(...authOpProblems(command, (field, key, prefix) => {
        const found: Problems = [];
        checkKey(found, field, key, prefix, config);
        return found;
      }));
      break;
    default:
      return assertNever(command, 'kv command');
  }
  return problems;
}

/** The leader's lease bookkeeping: ids and durations are integers; no lease listed twice. */
function checkSystemCommand(problems: Problems, command: KvLeaseSystemCommand): void {
  checkInteger(problems, 'nowMs', command.nowMs, 0);
  const ids: unknown[] = [];
  switch (command.kind) {
    case 'lease-checkpoint':
      command.leases.forEach((entry, i) => {
        checkInteger(problems, `leases[${i}].leaseId`, entry.leaseId, 1);
        checkInteger(problems, `leases[${i}].remainingMs`, entry.remainingMs, 0);
        ids.push(entry.leaseId);
      });
      break;
    case 'lease-renew':
      command.leaseIds.forEach((id, i) => {
        checkInteger(problems, `leaseIds[${i}]`, id, 1);
        ids.push(id);
      });
      break;
    case 'lease-expire':
      command.leases.forEach((entry, i) => {
        checkInteger(problems, `leases[${i}].leaseId`, entry.leaseId, 1);
        checkInteger(problems, `leases[${i}].renewals`, entry.renewals, 0);
        ids.push(entry.leaseId);
      });
      break;
    default:
      assertNever(command, 'kv lease system command');
  }
  if (new Set(ids).size !== ids.length) {
    problems.push({ field: command.kind === 'lease-renew' ? 'leaseIds' : 'leases',
      rule: 'must not list a lease twice' });
  }
}

function checkLease(problems: Problems, field: string, lease: unknown): void {
  if (lease !== undefined) checkInteger(problems, field, lease, 1);
}

/** Every rule a range request breaks; empty if valid. */
export function validateKvRangeRequest(
  request: KvRangeRequest,
  config: KvStoreConfig,
): readonly KvProblem[] {
  const problems: Problems = [];
  checkSelector(problems, '', request, config);
  if (request.limit !== undefined) checkInteger(problems, 'limit', request.limit, 0);
  if (request.revision !== undefined) checkInteger(problems, 'revision', request.revision, 0);
  return problems;
}

/** Every rule a watch read (`eventsSince`) breaks; empty if valid. */
export function validateKvWatchRequest(
  fromRevision: number,
  selector: KvKeySelector,
  limit: number | undefined,
  config: KvStoreConfig,
): readonly KvProblem[] {
  const problems: Problems = [];
  checkInteger(problems, 'fromRevision', fromRevision, 1);
  checkSelector(problems, '', selector, config);
  if (limit !== undefined) checkInteger(problems, 'limit', limit, 0);
  return problems;
}

/** `clientId` and `sequence` come together (an idempotency key) or not at all. */
function checkStamp(problems: Problems, stamp: KvClientStamp, config: KvStoreConfig): void {
  checkIdempotencyKey(problems, stamp, config);
  checkInteger(problems, 'nowMs', stamp.nowMs, 0);
  if (stamp.principal !== undefined) {
    const problem = authNameProblem(stamp.principal);
    if (problem !== undefined) problems.push({ field: 'principal', rule: problem });
  }
}

function checkIdempotencyKey(problems: Problems, stamp: KvClientStamp,
  config: KvStoreConfig): void {
  const { clientId, sequence } = stamp;
  if (clientId === undefined && sequence === undefined) return;
  if (clientId === undefined || sequence === undefined) {
    problems.push({ field: clientId === undefined ? 'clientId' : 'sequence',
      rule: 'clientId and sequence come together (an idempotency key) or not at all' });
    return;
  }
  if (typeof clientId !== 'string' || clientId.length === 0 || !isWellFormed(clientId)) {
    problems.push({ field: 'clientId', rule: 'must be a non-empty, well-formed string' });
  } else if (utf8ByteLengthExceeds(clientId, config.clientIdBytesMax)) {
    problems.push({ field: 'clientId', rule: `must be at most ${config.clientIdBytesMax} bytes` });
  }
  checkInteger(problems, 'sequence', sequence, 1);
}

function checkTxn(
  problems: Problems,
  compare: readonly KvCompare[],
  success: readonly KvTxnOp[],
  failure: readonly KvTxnOp[],
  config: KvStoreConfig,
): void {
  const max = config.txnOpsMax;
  for (const [field, list] of [['compare', compare], ['success', success],
    ['failure', failure]] as const) {
    if (list.length > max) {
      problems.push({ field, rule: `at most ${max} entries (has ${list.length})` });
    }
  }
  compare.forEach((c, i) => checkCompare(problems, `compare[${i}]`, c, config));
  success.forEach((op, i) => checkOp(problems, `success[${i}]`, op, config));
  failure.forEach((op, i) => checkOp(problems, `failure[${i}]`, op, config));
  checkWriteConflicts(problems, 'success', success);
  checkWriteConflicts(problems, 'failure', failure);
}

function checkCompare(problems: Problems, at: string, c: KvCompare, config: KvStoreConfig): void {
  checkKey(problems, `${at}.key`, c.key, false, config);
  switch (c.target) {
    case 'value':
      checkValue(problems, `${at}.value`, c.value, config);
      break;
    case 'version':
      checkInteger(problems, `${at}.version`, c.version, 0);
      break;
    case 'createRevision':
      checkInteger(problems, `${at}.createRevision`, c.createRevision, 0);
      break;
    case 'modRevision':
      checkInteger(problems, `${at}.modRevision`, c.modRevision, 0);
      break;
    default:
      return assertNever(c, 'kv compare');
  }
}

function checkOp(problems: Problems, at: string, op: KvTxnOp, config: KvStoreConfig): void {
  switch (op.kind) {
    case 'put':
      checkKey(problems, `${at}.key`, op.key, false, config);
      checkValue(problems, `${at}.value`, op.value, config);
      checkLease(problems, `${at}.lease`, op.lease);
      break;
    case 'delete':
      checkSelector(problems, `${at}.`, op, config);
      break;
    case 'range':
      checkSelector(problems, `${at}.`, op, config);
      if (op.limit !== undefined) checkInteger(problems, `${at}.limit`, op.limit, 0);
      break;
    default:
      return assertNever(op, 'kv txn op');
  }
}

/**
 * Like etcd, a branch may not write one key twice (a put twice, or a put inside a deleted
 * range): each key changes at most once per revision, so watchers see one event per key.
 */
function checkWriteConflicts(problems: Problems, branch: string, ops: readonly KvTxnOp[]): void {
  const putAt = new Map<string, number>();
  ops.forEach((op, i) => {
    if (op.kind !== 'put' || typeof op.key !== 'string') return;
    const first = putAt.get(op.key);
    if (first === undefined) putAt.set(op.key, i);
    else {
      problems.push({ field: `${branch}[${i}].key`,
        rule: `puts the key of ${branch}[${first}] again` });
    }
  });
  ops.forEach((op, i) => {
    if (op.kind !== 'delete' || typeof op.key !== 'string') return;
    for (const [key, j] of putAt) {
      if (op.prefix === true ? key.startsWith(op.key) : key === op.key) {
        problems.push({ field: `${branch}[${i}]`, rule: `deletes the key put by ${branch}[${j}]` });
      }
    }
  });
}

function checkSelector(
  problems: Problems,
  at: string,
  selector: KvKeySelector,
  config: KvStoreConfig,
): void {
  const prefix = selector.prefix;
  if (prefix !== undefined && typeof prefix !== 'boolean') {
    problems.push({ field: `${at}prefix`, rule: 'must be a boolean' });
  }
  checkKey(problems, `${at}key`, selector.key, prefix === true, config);
}

function checkKey(
  problems: Problems,
  field: string,
  key: unknown,
  emptyAllowed: boolean,
  config: KvStoreConfig,
): void {
  if (typeof key !== 'string' || !isWellFormed(key)) {
    problems.push({ field, rule: 'must be a well-formed string' });
  } else if (key.length === 0 && !emptyAllowed) {
    problems.push({ field, rule: 'must not be empty (the empty key only as a prefix: all keys)' });
  } else if (utf8ByteLengthExceeds(key, config.keyBytesMax)) {
    problems.push({ field, rule: `must be at most ${config.keyBytesMax} bytes` });
  }
}

function checkValue(
  problems: Problems,
  field: string,
  value: unknown,
  config: KvStoreConfig,
): void {
  if (typeof value !== 'string' || !isWellFormed(value)) {
    problems.push({ field, rule: 'must be a well-formed string' });
  } else if (utf8ByteLengthExceeds(value, config.valueBytesMax)) {
    problems.push({ field, rule: `must be at most ${config.valueBytesMax} bytes` });
  }
}

function checkInteger(problems: Problems, field: string, value: unknown, min: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    problems.push({ field, rule: `must be an integer >= ${min}` });
  }
}
