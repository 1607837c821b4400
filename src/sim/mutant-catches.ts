/**
 * How `conclave sim` speaks of planted mutants (TEST-ONLY `--mutant`): a mutant shows only on
 * seeds whose faults reach its bug, so the help says so and the measured seeds that catch each
 * one (each scenario's `mutantCatches` table) are printed, in the help and in the note of a run
 * that planted a mutant and still passed.
 */
import type { MutantCatch, ScenarioOptions } from './scenario.js';

/** The `--mutant` flag's description; `bug` names what is planted ("Raft bug"). */
export function mutantFlagDescription(bug: string): string {
  return `TEST-ONLY: plant a known ${bug}. A mutant needs the seeds that catch it: a run on `
    + 'other seeds exits 0 and names them ("Mutants" below lists them)';
}

/** `--name value` for each flag (a switch alone), as typed on the command line. */
export function flagText(flags: ScenarioOptions): string {
  return Object.entries(flags)
    .filter(([, value]) => value !== undefined && value !== false)
    .map(([name, value]) => (value === true ? `--${name}` : `--${name} ${String(value)}`))
    .join(' ');
}

/** The command that runs the first catching seed, or undefined when none is known. */
export function mutantCatchCommand(mutant: string, where: MutantCatch): string | undefined {
  const seed = where.caughtOn[0];
  if (seed === undefined) return undefined;
  const flags = flagText(where.flags);
  return `conclave sim --scenario ${where.scenario} --seed ${seed} --mutant ${mutant}`
    + (flags === '' ? '' : ` ${flags}`);
}

/** "seeds 2, 3, 6 of 1–20 of --scenario X (checker)": what was measured, in one phrase. */
export function mutantCatchMeasured(where: MutantCatch): string {
  const range = `${where.first}–${where.first + where.count - 1}`;
  const flags = flagText(where.flags);
  const run = `--scenario ${where.scenario}${flags === '' ? '' : ` ${flags}`}`;
  if (where.caughtOn.length === 0) return `no seed of ${range} of ${run} catches it`;
  const missed: number[] = [];
  for (let seed = where.first; seed < where.first + where.count; seed++) {
    if (!where.caughtOn.includes(seed)) missed.push(seed);
  }
  const seeds = missed.length === 0 ? `every seed of ${range}`
    : missed.length < where.caughtOn.length
      ? `${where.caughtOn.length} of seeds ${range} (all but ${missed.join(', ')})`
      : `${where.caughtOn.length === 1 ? 'seed' : 'seeds'} ${where.caughtOn.join(', ')} `
        + `of ${range}`;
  return `${seeds} of ${run} (${where.checker})`;
}

/** What was measured, the command that replays a catching seed, and the note. */
function entryText(mutant: string, where: MutantCatch): string {
  const command = mutantCatchCommand(mutant, where);
  return mutantCatchMeasured(where) + (command === undefined ? '' : `; run: ${command}`)
    + (where.note === undefined ? '' : `; ${where.note}`);
}

/** One line per mutant of a table, for `conclave sim --help`. */
export function mutantCatchLines(table: Readonly<Record<string, MutantCatch>>): string[] {
  return Object.entries(table).map(([mutant, where]) => `${mutant}: ${entryText(mutant, where)}`);
}

/**
 * The note after a run that planted `mutant` and passed: which seeds catch it (measured), or
 * that none is known and why.
 */
export function mutantEscapedNote(mutant: string,
  where: MutantCatch | undefined): string {
  const head = `note: mutant ${mutant} was planted but no seed of this run exposed it; a `
    + 'mutant needs the seeds that catch it';
  return where === undefined ? `${head}: none measured yet; run more seeds`
    : `${head}: ${entryText(mutant, where)}`;
}
