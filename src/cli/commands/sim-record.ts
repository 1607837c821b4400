/**
 * `conclave sim --record FILE`: after the run, the seed worth looking at (the first that
 * failed, else the first of the run) is run once more with a recorder, and its recording
 * written as JSON for `conclave replay FILE`. The rerun must give the same trace hash (the
 * simulator is deterministic); if it does not, that is reported, not hidden.
 */
import { writeFileSync } from 'node:fs';
import type { Scenario, ScenarioOptions, SeedResult } from '../../sim/scenario.js';
import { SimRecorder } from '../../sim/sim-recorder.js';
import type { CliIo } from '../io.js';

export async function recordSeed(io: CliIo, scenario: Scenario<unknown>, file: string,
  results: readonly SeedResult<unknown>[], options: ScenarioOptions, json: boolean):
  Promise<boolean> {
  const chosen = results.find((r) => r.violations.length > 0) ?? results[0];
  if (chosen === undefined) return true;
  const recorder = new SimRecorder();
  const rerun = await scenario.runSeed(chosen.seed, options, undefined, recorder);
  const recording = recorder.recording({ scenario: scenario.name, seed: chosen.seed, options,
    traceHash: rerun.traceHash, simulatedMs: rerun.simulatedMs, violations: rerun.violations });
  writeFileSync(file, JSON.stringify(recording));
  const same = rerun.traceHash === chosen.traceHash;
  if (!json) {
    io.out(`recorded seed ${chosen.seed} (${recording.messages.length} messages, ` +
      `${recording.events.length} events${recording.truncated.messages > 0
        ? `, ${recording.truncated.messages} messages not kept` : ''}) to ${file}; ` +
      `open it: npx conclave replay ${file}`);
  }
  if (!same) {
    io.err(`conclave sim: the recorded rerun of seed ${chosen.seed} gave trace ` +
      `${rerun.traceHash}, not ${chosen.traceHash}: the simulation is not deterministic`);
  }
  return same;
}
