/**
 * `runOnce(client, holding, taskId, fn)`: a leader's action that the leadership as a whole
 * performs once, however often leaders change. The leader records the task in the store under
 * its fencing token: `started` before the action, `done` in ONE transaction with the action's
 * own store writes (the ops `fn` returns), guarded by the leader's candidate key still having
 * its create revision (the fencing token) and by the task record being the one it started. So:
 * - a finished task is never run again: a later leader finds `done` and gets its result;
 * - an unfinished one (the leader died, stalled or was deposed between start and done; or `fn`
 *   threw) is run again by the next `runOnce`, which is told the previous attempt (`previous`)
 *   so an action with effects outside the store can check for them first;
 * - a deposed leader's completion is refused by the store (its key is gone), whatever its
 *   clock says: the next leader retries the task.
 * Both backends: the writes are compare-guarded, so a retried transaction (at-least-once on
 * etcd) is recognized by reading the record back (docs/backends.md).
 *
 *   conclave/election/<name>/tasks/<taskId>   {"state":"started"|"done","fencingToken":...}
 */
import type { KeyValue, KvTxnOp } from '../core/kv/types.js';
import { recipeNameProblem } from '../core/election/keys.js';
import { CoordError, UsageError, type CoordOutcome } from '../errors.js';
import type { KvClient } from './kv.js';
import type { Holding } from './recipe-driver.js';

/** What the store keeps of a task. */
export interface TaskRecord {
  readonly state: 'started' | 'done';
  /** The token of the leader that wrote it. */
  readonly fencingToken: number;
  /** 1 for the first run, +1 for each retry. */
  readonly attempt: number;
  /** What `fn` returned as `result` (done only). */
  readonly result?: unknown;
}

/** What `fn` is told. */
export interface TaskRun {
  readonly taskId: string;
  readonly fencingToken: number;
  readonly attempt: number;
  /** Aborts when the leadership ends: stop, the next leader retries. */
  readonly signal: AbortSignal;
  /** The unfinished attempt before this one, if any. */
  readonly previous?: TaskRecord;
}

/** What `fn` returns: a JSON result to record, and store writes to commit with `done`. */
export interface TaskCompletion<T> {
  readonly result?: T;
  /** Committed atomically with the `done` record (not the task's or the leader's own key). */
  readonly ops?: readonly KvTxnOp[];
}

export interface RunOnceResult<T> {
  /** True when this call ran `fn` and recorded it done; false when it was done before. */
  readonly ran: boolean;
  readonly result: T | undefined;
  /** The record as it now stands (done). */
  readonly record: TaskRecord;
}

/**
 * Longest record read back. Unit: bytes. Why 1 MiB: a task's result is a summary, not a
 * payload (both backends' default value limit is about this size).
 */
export const TASK_RECORD_BYTES_MAX = 1024 * 1024;

/** The task's key, beside the holding's candidates. */
export function taskKey(holding: Pick<Holding, 'key'>, taskId: string): string {
  const problem = recipeNameProblem(taskId);
  if (problem !== undefined) throw new UsageError(`task id: ${problem}`);
  const at = holding.key.lastIndexOf('/candidates/');
  if (at < 0) throw new UsageError(`${holding.key} is not a recipe's candidate key`);
  return `${holding.key.slice(0, at)}/tasks/${taskId}`;
}

/**
 * Runs `fn` for `taskId` unless the leadership already finished it (see the module comment).
 * Rejects with CONCLAVE_LEASE_EXPIRED when the leadership ended before `done` was recorded
 * (the task stays unfinished for the next leader), with what `fn` threw (likewise), or with
 * the CoordError of a store call.
 */
export async function runOnce<T>(kv: Pick<KvClient, 'get' | 'txn'>, holding: Holding,
  taskId: string, fn: (task: TaskRun) => Promise<TaskCompletion<T> | void>
    | TaskCompletion<T> | void): Promise<RunOnceResult<T>> {
  const key = taskKey(holding, taskId);
  const { signal, fencingToken } = holding;
  const found = await kv.get(key, { signal }).catch((error: unknown) => {
    if (!signal.aborted) throw error;
    throw lostError(holding, taskId, 'started', 'failed');
  });
  const previous = found.kv === undefined ? undefined : parseTaskRecord(found.kv, key);
  if (previous?.state === 'done') {
    return { ran: false, result: previous.result as T | undefined, record: previous };
  }
  const started: TaskRecord = { state: 'started', fencingToken,
    attempt: (previous?.attempt ?? 0) + 1 };
  const startedAt = await guardedWrite(kv, holding, key, found.kv?.modRevision ?? 0, started, []);
  if (signal.aborted) throw lostError(holding, taskId, 'started');
  const completion = await fn({ taskId, fencingToken, attempt: started.attempt, signal,
    ...(previous === undefined ? {} : { previous }) }) ?? {};
  const done: TaskRecord = { state: 'done', fencingToken, attempt: started.attempt,
    ...(completion.result === undefined ? {} : { result: completion.result }) };
  await guardedWrite(kv, holding, key, startedAt, done, completion.ops ?? []);
  return { ran: true, result: completion.result, record: done };
}

/**
 * Writes `record` (with `ops`) only while the leader's key keeps its token and the task key
 * is at `modRevision` (0: absent); resolves with the task key's new mod revision. A refused
 * write that finds `record` already there was our own earlier attempt (a retry after an
 * unknown outcome); anything else means the leadership ended.
 */
async function guardedWrite(kv: Pick<KvClient, 'get' | 'txn'>, holding: Holding, key: string,
  modRevision: number, record: TaskRecord, ops: readonly KvTxnOp[]): Promise<number> {
  const value = JSON.stringify(record);
  const taskId = key.slice(key.lastIndexOf('/') + 1);
  const written = await kv.txn({
    compare: [
      { key: holding.key, target: 'createRevision', result: 'equal',
        createRevision: holding.fencingToken },
      { key, target: 'modRevision', result: 'equal', modRevision },
    ],
    success: [{ kind: 'put', key, value }, ...ops],
    failure: [],
  }, { signal: holding.signal }).catch((error: unknown) => {
    // The leadership ended during the write: say so, with the write's outcome (unknown when
    // it may have been applied: the next leader reads the record and knows).
    if (!holding.signal.aborted) throw error;
    throw lostError(holding, taskId, record.state,
      error instanceof CoordError ? error.outcome : 'unknown');
  });
  if (written.succeeded) return written.revision;
  // The read back runs under the leadership's signal too: a loss noticed while it is in
  // flight (the watch on the leader's key beat the read, as on a loaded machine) is the same
  // verdict as the refused write, not an AbortError of a read.
  const now = await kv.get(key, { signal: holding.signal }).catch((error: unknown) => {
    if (!holding.signal.aborted) throw error;
    throw lostError(holding, taskId, record.state, 'failed');
  });
  if (now.kv !== undefined && now.kv.value === value) return now.kv.modRevision;
  throw lostError(holding, taskId, record.state, 'failed');
}

function lostError(holding: Holding, taskId: string, step: string,
  outcome: CoordOutcome = 'failed'): CoordError {
  return new CoordError('CONCLAVE_LEASE_EXPIRED', `task ${taskId}: the leadership with fencing `
    + `token ${holding.fencingToken} ended before the task was recorded ${step}`
    + `${outcome === 'unknown' ? ' (the write may have been applied)' : ''}; the next leader `
    + 'finishes or retries it', { outcome,
    cause: holding.signal.aborted ? holding.signal.reason : undefined });
}

/** A task record read from the store, checked. */
export function parseTaskRecord(kv: KeyValue, key: string): TaskRecord {
  const bad = (why: string): CoordError => new CoordError('CONCLAVE_PROTOCOL',
    `task record ${key} ${why}: ${kv.value.slice(0, 200)}`);
  if (kv.value.length > TASK_RECORD_BYTES_MAX) throw bad('is too large');
  let parsed: unknown;
  try {
    parsed = JSON.parse(kv.value);
  } catch {
    throw bad('is not JSON');
  }
  const r = (parsed ?? {}) as Record<string, unknown>;
  if ((r['state'] !== 'started' && r['state'] !== 'done')
    || !Number.isSafeInteger(r['fencingToken']) || !Number.isSafeInteger(r['attempt'])) {
    throw bad('is not a task record');
  }
  return { state: r['state'], fencingToken: r['fencingToken'] as number,
    attempt: r['attempt'] as number, ...('result' in r ? { result: r['result'] } : {}) };
}
