/**
 * Shared shape of configuration validation: every `validateXConfig` returns all the rules a
 * config breaks at once, so a user fixes them in one round. Applications turn a non-empty list
 * into a `CONCLAVE_CONFIG_INVALID` error.
 */
export interface ConfigProblem {
  /** The field (or fields, for a relation) at fault, as named in the config object. */
  readonly field: string;
  /** The offending value(s). */
  readonly value: unknown;
  /** What the rule is, phrased so the user knows the accepted values. */
  readonly rule: string;
}

/** Formats problems one per line, for errors and CLI output. */
export function formatConfigProblems(problems: readonly ConfigProblem[]): string {
  return problems.map((p) => `${p.field}=${JSON.stringify(p.value)}: ${p.rule}`).join('\n');
}
