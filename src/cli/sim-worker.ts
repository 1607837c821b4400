/**
 * A worker thread of `conclave sim --jobs N`: runs the seeds it is given, one at a time, and
 * posts each result back. Seeds are independent and each is deterministic, so splitting them
 * over threads changes nothing but the wall time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ScenarioOptions } from '../sim/scenario.js';
import { SCENARIOS } from '../sim/scenarios/index.js';

export interface SimWorkerInput {
  readonly scenario: string;
  readonly seeds: readonly number[];
  readonly options: ScenarioOptions;
}

const input = workerData as SimWorkerInput;
const scenario = SCENARIOS.get(input.scenario);
if (scenario === undefined || parentPort === null) {
  throw new Error(`sim worker: bad input ${input.scenario}`);
}
const port = parentPort;
for (const seed of input.seeds) {
  const result = await scenario.runSeed(seed, input.options,
    (progress) => port.postMessage({ kind: 'progress', progress }));
  port.postMessage({ kind: 'result', result });
}
parentPort.postMessage({ kind: 'done' });
