/**
 * Where an election or a lock keeps its state in the key-value store. Every candidate (or lock
 * waiter) owns one key under the candidate prefix, attached to its lease, so it disappears when
 * the lease ends; the generation key has no lease and counts the leaderships (the seeds'
 * Generation Clock: each new leader bumps it once, so it only grows).
 *
 *   conclave/election/<name>/candidates/<leaseId as 16 hex digits>
 *   conclave/election/<name>/generation
 *   conclave/lock/<name>/...                      (the same layout for locks)
 */

/** Which recipe a name belongs to: elections and locks of the same name never meet. */
export type RecipeKind = 'election' | 'lock';

export interface RecipeKeys {
  /** Every candidate key starts with this. */
  readonly candidatePrefix: string;
  /** Bumped once by each new leader; its version is the leadership's term. */
  readonly generationKey: string;
}

/** Longest name accepted. Why 128: names are path segments of keys, not payloads. */
export const RECIPE_NAME_LENGTH_MAX = 128;

const NAME_PATTERN = /^[A-Za-z0-9._-]+$/;

/**
 * Why a name is unusable, or undefined when it is fine. Names are one path segment of letters,
 * digits, `.`, `_` and `-`, so one election's prefix is never a prefix of another's.
 */
export function recipeNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'the name is empty';
  if (name.length > RECIPE_NAME_LENGTH_MAX) {
    return `the name is ${name.length} characters long; the maximum is ${RECIPE_NAME_LENGTH_MAX}`;
  }
  if (!NAME_PATTERN.test(name)) {
    return `the name ${JSON.stringify(name)} may only hold letters, digits, '.', '_' and '-'`;
  }
  return undefined;
}

/** The keys of election or lock `name` (which must have no `recipeNameProblem`). */
export function recipeKeys(kind: RecipeKind, name: string): RecipeKeys {
  const root = `conclave/${kind}/${name}/`;
  return { candidatePrefix: `${root}candidates/`, generationKey: `${root}generation` };
}

/** The candidate key of the holder of `leaseId`: fixed width, so keys sort like ids. */
export function candidateKey(keys: RecipeKeys, leaseId: number): string {
  return keys.candidatePrefix + leaseId.toString(16).padStart(16, '0');
}
