/**
 * The read suite's chart: three panels (throughput, p99 latency, server CPU per read), one bar
 * per system for each consistency and number of requests in flight.
 */
import { barPanelsSvg, type BarPanel } from '../lib/bar-panels.js';
import { SYSTEM_COLOURS } from '../lib/chart.js';
import { SYSTEM_NAMES } from '../lib/wire.js';
import {
  READ_CONSISTENCIES, READ_INFLIGHT, READ_WORKLOAD, type ReadLevel, type ReadRuns,
} from './read.js';

export function readChart(runs: ReadRuns): string {
  const systems = SYSTEM_NAMES.filter((s) => runs[s] !== undefined);
  const cells = READ_CONSISTENCIES.flatMap((consistency) =>
    READ_INFLIGHT.map((inflight) => ({ consistency, inflight })));
  const categories = cells.map((c) => `${c.consistency}\n${c.inflight} in flight`);
  const panel = (title: string, pick: (level: ReadLevel) => number): BarPanel => ({
    title, categories,
    values: Object.fromEntries(systems.map((system) => [system, cells.map((cell) => {
      const level = runs[system]?.find((l) =>
        l.consistency === cell.consistency && l.inflight === cell.inflight);
      return level === undefined ? undefined : pick(level);
    })])),
  });
  return barPanelsSvg({
    title: `read: one key of ${READ_WORKLOAD.keySpaceSize / 1000}k per read, ` +
      `${READ_WORKLOAD.valueBytes} B values, 3 members on loopback, to the leader`,
    series: systems.map((name) => ({ name, colour: SYSTEM_COLOURS[name] })),
    panels: [
      panel('throughput (reads/s, higher is better)', (l) => l.opsPerS),
      panel('latency p99 (ms, lower is better)', (l) => l.latency.p99Ms),
      panel('server CPU per read (µs, all 3 members)', (l) => l.serverCpuUsPerOp),
    ],
  });
}
