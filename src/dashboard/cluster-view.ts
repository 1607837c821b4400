/**
 * What the dashboard reads from this member's key-value store (read-only, serializable: this
 * replica's applied state, which a follower may have a few entries behind): elections and
 * locks from their keys (src/core/election/keys.ts), a page of keys under a prefix, one key's
 * history, and the changes under a watched prefix since a revision.
 */
import { parseCandidateValue } from '../client/election.js';
import type { KeyValue, KvEvent, KvStore } from '../core/kv/index.js';

/** One election or lock, as its keys say. */
export interface RecipeRow {
  readonly kind: 'election' | 'lock';
  readonly name: string;
  /** The first candidate in line: it leads (holds) once its claim bumped the generation. */
  readonly holder: CandidateRow | null;
  /** Whether the holder's claim is written (the generation key moved after its key). */
  readonly claimed: boolean;
  /** The holder's create revision: its fencing token. */
  readonly fencingToken: number | null;
  /** The generation key's version: the leadership's term. */
  readonly term: number;
  /** Candidates (waiters) behind the holder, in line order. */
  readonly waiting: readonly CandidateRow[];
}

export interface CandidateRow {
  /** The candidate's id (`--id`), as the recipe wrote it; a foreign key's raw text. */
  readonly id: string;
  /** The value it campaigns with (an election's proclaimed value; empty for a lock). */
  readonly value: string;
  readonly leaseId: number;
  readonly createRevision: number;
}

/** Keys scanned per recipe kind; more are not shown (the page says so). */
export const RECIPE_KEYS_MAX = 5000;

export function recipesOf(store: KvStore): { rows: RecipeRow[]; truncated: boolean } {
  const rows: RecipeRow[] = [];
  let truncated = false;
  for (const kind of ['election', 'lock'] as const) {
    const result = store.range({ key: `conclave/${kind}/`, prefix: true, limit: RECIPE_KEYS_MAX });
    if (result.kind !== 'range') continue;
    truncated ||= result.more;
    rows.push(...groupRecipes(kind, result.kvs));
  }
  return { rows, truncated };
}

function groupRecipes(kind: 'election' | 'lock', kvs: readonly KeyValue[]): RecipeRow[] {
  const byName = new Map<string, { candidates: CandidateRow[]; generation?: KeyValue }>();
  const root = `conclave/${kind}/`;
  for (const kv of kvs) {
    const rest = kv.key.slice(root.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) continue;
    const name = rest.slice(0, slash);
    const entry = byName.get(name) ?? { candidates: [] };
    byName.set(name, entry);
    const tail = rest.slice(slash + 1);
    if (tail === 'generation') entry.generation = kv;
    else if (tail.startsWith('candidates/')) {
      entry.candidates.push({ ...parseCandidateValue(kv.value),
        leaseId: Number.parseInt(tail.slice(11), 16) || 0,
        createRevision: kv.createRevision });
    }
  }
  return [...byName].map(([name, { candidates, generation }]) => {
    const line = candidates.sort((a, b) => a.createRevision - b.createRevision);
    const holder = line[0] ?? null;
    const claimed = holder !== null && generation !== undefined &&
      generation.modRevision > holder.createRevision;
    return { kind, name, holder, claimed, fencingToken: holder?.createRevision ?? null,
      term: generation?.version ?? 0, waiting: line.slice(1) };
  });
}

/** Keys shown per page of the key browser. */
export const KEYS_PAGE_MAX = 200;
/** Longest value shown in the browser; longer ones are cut (the page says how long). */
const VALUE_CHARS_MAX = 200;

export interface KeyRow {
  readonly key: string;
  readonly value: string;
  readonly valueLength: number;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
  readonly lease: number | null;
}

export function keysUnder(store: KvStore, prefix: string): {
  rows: KeyRow[]; count: number; revision: number;
} {
  const result = store.range({ key: prefix, prefix: true, limit: KEYS_PAGE_MAX });
  if (result.kind !== 'range') return { rows: [], count: 0, revision: store.revision };
  return { rows: result.kvs.map(keyRow), count: result.count, revision: result.revision };
}

export function keyRow(kv: KeyValue): KeyRow {
  return {
    key: kv.key, value: kv.value.slice(0, VALUE_CHARS_MAX), valueLength: kv.value.length,
    createRevision: kv.createRevision, modRevision: kv.modRevision, version: kv.version,
    lease: kv.lease ?? null,
  };
}

export interface ChangeRow {
  readonly type: 'put' | 'delete';
  readonly kv: KeyRow;
}

/** Changes shown per history or watch answer. */
export const CHANGES_MAX = 200;

/**
 * The changes of `key` (or under it when `prefix`) from `fromRevision` on, in the history the
 * store keeps; from the oldest kept when fromRevision is compacted away.
 */
export function changesSince(store: KvStore, key: string, prefix: boolean,
  fromRevision: number): { changes: ChangeRow[]; nextRevision: number; compacted: boolean } {
  let result = store.eventsSince(Math.max(1, fromRevision), { key, prefix }, CHANGES_MAX);
  let compacted = false;
  if (result.kind === 'error' && result.error.code === 'compacted') {
    compacted = true;
    result = store.eventsSince(result.error.compactRevision + 1, { key, prefix }, CHANGES_MAX);
  }
  if (result.kind !== 'events') return { changes: [], nextRevision: fromRevision, compacted };
  return { changes: result.events.map(changeRow), nextRevision: result.nextRevision, compacted };
}

function changeRow(event: KvEvent): ChangeRow {
  return { type: event.type, kv: keyRow(event.kv) };
}
