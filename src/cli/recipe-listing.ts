/**
 * Who holds a lock (or leads an election) and who waits, read from the recipe's candidate keys
 * (core/election/keys.ts): the candidate with the lowest create revision holds, the others
 * wait in create-revision order. The fencing token of each is its key's create revision; the
 * generation key's version is the term of the current holding.
 */
import type { ConclaveClient, KeyValue } from '../client/index.js';
import { parseCandidateValue } from '../client/election.js';
import { recipeNameProblem, type RecipeKind } from '../core/election/keys.js';
import { UsageError } from '../errors.js';

export interface Candidate {
  readonly id: string;
  readonly fencingToken: number;
  readonly lease: number | undefined;
}

export interface RecipeListing {
  readonly name: string;
  readonly holder: Candidate | undefined;
  /** In the order they will hold. */
  readonly queue: readonly Candidate[];
  /** The term of the holding (the generation key's version); 0 before the first. */
  readonly term: number;
}

/** The recipes of `kind` that have candidates (all, or only `name`), by name. */
export async function listRecipes(client: ConclaveClient, kind: RecipeKind,
  name?: string): Promise<{ revision: number; listings: RecipeListing[] }> {
  if (name !== undefined) {
    const problem = recipeNameProblem(name);
    if (problem !== undefined) throw new UsageError(`${kind} ${name}: ${problem}`);
  }
  // The recipe's root: its candidates and its generation key (keys.ts' layout).
  const prefix = `conclave/${kind}/${name === undefined ? '' : `${name}/`}`;
  const result = await client.kv.range(prefix, { consistency: 'linearizable' });
  const byName = new Map<string, { candidates: KeyValue[]; term: number }>();
  for (const kv of result.kvs) {
    const m = /^conclave\/(?:election|lock)\/([^/]+)\/(candidates\/.+|generation)$/.exec(kv.key);
    if (m === null) continue;
    const [, recipe = '', rest = ''] = m;
    const entry = byName.get(recipe) ?? { candidates: [], term: 0 };
    if (rest === 'generation') entry.term = kv.version;
    else entry.candidates.push(kv);
    byName.set(recipe, entry);
  }
  const listings = [...byName].filter(([, e]) => name !== undefined || e.candidates.length > 0)
    .map(([recipe, e]) => listingOf(recipe, e.candidates, e.term));
  return { revision: result.revision, listings };
}

function listingOf(name: string, kvs: readonly KeyValue[], term: number): RecipeListing {
  const ordered = [...kvs].sort((a, b) => a.createRevision - b.createRevision)
    .map((kv) => ({ id: parseCandidateValue(kv.value).id, fencingToken: kv.createRevision,
      lease: kv.lease }));
  return { name, holder: ordered[0], queue: ordered.slice(1), term };
}
