/**
 * The heartbeat scenario's report over many seeds: per detector, detection times (p50, p99,
 * max), false suspicions per node-hour and messages per node per second; then phi accrual and
 * the fixed timeout compared at equal mean detection time (the sweep, interpolated).
 */
import type { SeedResult, SummaryReport } from '../scenario.js';
import { formatMs, formatNumber, mean, quantile } from '../stats.js';
import type { HeartbeatFigures } from './heartbeat.js';

export interface DetectorSummary {
  detectionMsP50: number | undefined;
  detectionMsP99: number | undefined;
  detectionMsMax: number | undefined;
  detectionMsMean: number | undefined;
  detections: number;
  falseSuspicions: number;
  falseSuspicionsPerNodeHour: number;
  falseSuspicionsQuietPerNodeHour: number;
}

/** The fixed timeout with phi's mean detection time, and its false-suspicion rates there. */
export interface EqualDetection {
  readonly timeoutMs: number;
  readonly falseSuspicionsPerNodeHour: number;
  readonly falseSuspicionsQuietPerNodeHour: number;
}

/** What summarizeHeartbeat needs to know of the scenario's detectors. */
export interface HeartbeatSummaryNames {
  readonly timeout: string;
  readonly phi: string;
  readonly sweep: readonly { readonly multiple: number; readonly name: string }[];
}

export function summarizeDetector(results: readonly SeedResult<HeartbeatFigures>[],
  name: string, nodeHours: number): DetectorSummary {
  const detectionMs: number[] = [];
  let falseSuspicions = 0;
  let falseSuspicionsQuiet = 0;
  for (const r of results) {
    const d = r.figures.detectors[name]!;
    for (const ms of d.detectionMs) detectionMs.push(ms);
    falseSuspicions += d.falseSuspicions;
    falseSuspicionsQuiet += d.falseSuspicionsQuiet;
  }
  return {
    detectionMsP50: quantile(detectionMs, 0.5),
    detectionMsP99: quantile(detectionMs, 0.99),
    detectionMsMax: quantile(detectionMs, 1),
    detectionMsMean: mean(detectionMs),
    detections: detectionMs.length,
    falseSuspicions,
    falseSuspicionsPerNodeHour: nodeHours > 0 ? falseSuspicions / nodeHours : 0,
    falseSuspicionsQuietPerNodeHour: nodeHours > 0 ? falseSuspicionsQuiet / nodeHours : 0,
  };
}

export function summarizeHeartbeat(results: readonly SeedResult<HeartbeatFigures>[],
  intervalMs: number, names: HeartbeatSummaryNames): SummaryReport {
  const nodeHours = results.reduce((s, r) => s + r.figures.nodeHours, 0);
  const simulatedS = results.reduce((s, r) => s + r.simulatedMs / 1000, 0);
  const nodeSeconds = results.reduce((s, r) => s + r.figures.nodes * r.simulatedMs / 1000, 0);
  const messages = results.reduce((s, r) => s + r.figures.messagesSent, 0);
  const messagesPerNodePerS = nodeSeconds > 0 ? messages / nodeSeconds : 0;
  const timeout = summarizeDetector(results, names.timeout, nodeHours);
  const phi = summarizeDetector(results, names.phi, nodeHours);
  const sweep = names.sweep.map(({ multiple, name }) => ({
    multiple, ...summarizeDetector(results, name, nodeHours),
  }));
  const equal = timeoutAtDetection(sweep, phi.detectionMsMean, intervalMs);
  const line = (name: string, d: DetectorSummary): string =>
    `${name.padEnd(12)} detection p50 ${formatMs(d.detectionMsP50)}, `
    + `p99 ${formatMs(d.detectionMsP99)}, max ${formatMs(d.detectionMsMax)} `
    + `(${d.detections} detections); false suspicions `
    + `${formatNumber(d.falseSuspicionsPerNodeHour)}/node-hour (${d.falseSuspicions}; `
    + `${formatNumber(d.falseSuspicionsQuietPerNodeHour)}/node-hour with no nemesis fault: `
    + `loss, jitter, GC stalls); ${formatNumber(messagesPerNodePerS, 1)} msgs/node/s`;
  const lines = [
    `simulated ${formatNumber(simulatedS / 3600, 2)} h over ${results.length} seeds, `
      + `${formatNumber(nodeHours, 2)} node-hours up`,
    line(names.timeout, timeout),
    line(names.phi, phi),
    equalDetectionLine(phi, equal),
  ];
  return {
    lines,
    data: { nodeHours, messagesPerNodePerS, timeout, phi, sweep, equalDetection: equal },
    violations: [],
  };
}

function equalDetectionLine(phi: DetectorSummary, equal: EqualDetection | undefined): string {
  if (equal === undefined) {
    return 'equal mean detection: phi\'s mean detection time is outside the timeout sweep';
  }
  return `at equal mean detection time (${formatMs(phi.detectionMsMean)}): phi-accrual `
    + `${formatNumber(phi.falseSuspicionsPerNodeHour)} false suspicions/node-hour `
    + `(${formatNumber(phi.falseSuspicionsQuietPerNodeHour)} without nemesis faults), `
    + `fixed timeout of ${formatMs(equal.timeoutMs)}: `
    + `${formatNumber(equal.falseSuspicionsPerNodeHour)}/node-hour `
    + `(${formatNumber(equal.falseSuspicionsQuietPerNodeHour)} without nemesis faults)`;
}

/**
 * Interpolates the timeout sweep (linearly between neighbours) to the fixed timeout whose mean
 * detection time equals `targetMs`, and its false-suspicion rate there.
 */
function timeoutAtDetection(
  sweep: readonly ({ multiple: number } & DetectorSummary)[],
  targetMs: number | undefined,
  intervalMs: number,
): EqualDetection | undefined {
  if (targetMs === undefined) return undefined;
  const points = sweep.filter((s) => s.detectionMsMean !== undefined);
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    const da = a.detectionMsMean!;
    const db = b.detectionMsMean!;
    if (targetMs < da || targetMs > db || db === da) continue;
    const t = (targetMs - da) / (db - da);
    return {
      timeoutMs: (a.multiple + t * (b.multiple - a.multiple)) * intervalMs,
      falseSuspicionsPerNodeHour: lerp(a.falseSuspicionsPerNodeHour,
        b.falseSuspicionsPerNodeHour, t),
      falseSuspicionsQuietPerNodeHour: lerp(a.falseSuspicionsQuietPerNodeHour,
        b.falseSuspicionsQuietPerNodeHour, t),
    };
  }
  return undefined;
}

function lerp(a: number, b: number, t: number): number {
  return a + t * (b - a);
}
