/**
 * The simulator in the browser (a Web Worker, so the page stays responsive): runs one seed of
 * a scenario with a recorder, exactly as `conclave sim --record` does, and posts the
 * recording back. The same code as the CLI's: the core and the simulator are pure.
 */
import { SCENARIOS } from '../../sim/scenarios/index.js';
import { SimRecorder } from '../../sim/sim-recorder.js';
import type { ScenarioOptions } from '../../sim/scenario.js';

export interface SimRunRequest {
  readonly scenario: string;
  readonly seed: number;
  readonly options: ScenarioOptions;
  readonly skipFaults: readonly number[];
}

self.onmessage = async (message: MessageEvent<SimRunRequest>) => {
  const { scenario: name, seed, options, skipFaults } = message.data;
  const scenario = SCENARIOS.get(name);
  if (scenario === undefined || scenario.records !== true) {
    self.postMessage({ error: `scenario ${name} cannot be recorded` });
    return;
  }
  const full: Record<string, number | boolean | string | undefined> = {};
  for (const flag of scenario.flags) full[flag.name] = options[flag.name] ?? flag.defaultValue;
  const recorder = new SimRecorder(undefined, new Set(skipFaults));
  const result = await scenario.runSeed(seed, full, undefined, recorder);
  self.postMessage({ recording: recorder.recording({ scenario: name, seed, options: full,
    traceHash: result.traceHash, simulatedMs: result.simulatedMs,
    violations: result.violations }) });
};
