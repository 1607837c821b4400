/**
 * Scenario `heartbeat`: N nodes heartbeat all-to-all over the simulated network under the
 * nemesis, each running both failure detectors (the fixed timeout and phi accrual) on the same
 * arrivals, plus a sweep of fixed timeouts so the two can be compared at equal mean detection
 * time. Figures per detector: detection time of a crashed node (p50, p99, max), false suspicions
 * per node-hour (a suspicion of a node that is up, paused included), messages per node per second.
 *
 * Checker (after every detector evaluation): with no loss configured, a node that has been up,
 * unpaused and reachable over an undisturbed network for longer than the detector's tolerance
 * is never suspected by either detector.
 */
import { assert } from '../../core/assert.js';
import {
  PHI_ACCRUAL_DEFAULTS_LOCAL,
  PhiAccrualDetector,
  TIMEOUT_DETECTOR_DEFAULTS_LOCAL,
  TimeoutDetector,
} from '../../core/detector/index.js';
import { nodeId, type NodeId } from '../../core/ids.js';
import {
  HeartbeatRuntime,
  type HeartbeatMessage,
  type MonitoringDetector,
  type PeerStatusChange,
} from '../../runtime/heartbeat/heartbeat-runtime.js';
import { drawNemesisPlan, FAULT_KINDS, Nemesis, type NemesisPlan } from '../nemesis.js';
import { Prng } from '../prng.js';
import type { Scenario, ScenarioOptions, SeedResult, Violation } from '../scenario.js';
import { Scheduler } from '../scheduler.js';
import { SimHost } from '../sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../sim-network.js';
import { SIM_STORAGE_DEFAULTS } from '../sim-storage.js';
import { formatMs, formatNumber, mean, quantile } from '../stats.js';
import { TraceHash } from '../trace-hash.js';

export const PHI = 'phi-accrual';
export const TIMEOUT = 'timeout';
/** Fixed timeouts swept, as multiples of the heartbeat interval, for the equal-detection view. */
const SWEEP_MULTIPLES: readonly number[] = [2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 10, 12, 15, 20];

export interface DetectorFigures {
  /** Crash-to-suspicion times seen by each live observer. Unit: ms. */
  detectionMs: number[];
  falseSuspicions: number;
  /** False suspicions with no nemesis fault on either node or the network: from loss, jitter and GC stalls. */
  falseSuspicionsQuiet: number;
}

export interface HeartbeatFigures {
  readonly detectors: Readonly<Record<string, DetectorFigures>>;
  /** Sum over nodes of the time each was up. Unit: hours. */
  readonly nodeHours: number;
  readonly messagesSent: number;
  readonly nodes: number;
  readonly plan: NemesisPlan;
}

interface HeartbeatProcess {
  readonly runtime: HeartbeatRuntime;
  halt(): void;
}

export const heartbeatScenario: Scenario<HeartbeatFigures> = {
  name: 'heartbeat',
  summary: 'all-to-all heartbeats with timeout and phi-accrual detectors under the nemesis',
  flags: [
    { name: 'nodes', kind: 'integer', description: 'cluster size', defaultValue: 5, min: 2, max: 64 },
    {
      name: 'loss', kind: 'number', min: 0, max: 0.9, defaultValue: undefined,
      description: 'base packet loss rate (default: drawn per seed, 0 for half the seeds)',
    },
    { name: 'duration-s', kind: 'number', description: 'simulated seconds per seed', defaultValue: 600, min: 1, max: 86_400 },
    { name: 'interval-ms', kind: 'number', description: 'heartbeat interval', defaultValue: 100, min: 1, max: 60_000 },
  ],
  runSeed: (seed, options) => runHeartbeatSeed(seed, options),
  summarize: summarizeHeartbeat,
};

/** Test-only knobs, to prove the checker bites (a timeout below the interval must trip it). */
export interface HeartbeatTestOverrides {
  readonly timeoutMs?: number;
}

export function runHeartbeatSeed(seed: number, options: ScenarioOptions,
  overrides: HeartbeatTestOverrides = {}): SeedResult<HeartbeatFigures> {
  const nodes = numberOption(options, 'nodes');
  const durationMs = numberOption(options, 'duration-s') * 1000;
  const intervalMs = numberOption(options, 'interval-ms');
  const scale = intervalMs / TIMEOUT_DETECTOR_DEFAULTS_LOCAL.heartbeatIntervalMs;
  const prng = new Prng(seed);
  const scheduler = new Scheduler();
  const trace = new TraceHash();
  const lossRate = typeof options['loss'] === 'number'
    ? options['loss']
    : (prng.nextUint32() % 2 === 0 ? 0 : 0.1 * (prng.nextUint32() / 2 ** 32));
  const network = new SimNetwork<HeartbeatMessage>(scheduler, prng.fork(), trace, {
    faults: { ...NETWORK_FAULTS_NONE, lossRate },
    describe: (m) => `hb ${m.incarnation}.${m.sequence}`,
    sizeBytes: () => 16,
  });
  const ids = Array.from({ length: nodes }, (_, i) => nodeId(`n${i + 1}`));
  if (lossRate > 0) drawLinkQualities(prng, network, ids, lossRate, intervalMs);
  const figures = emptyFigures();
  const violations: Violation[] = [];
  const downSinceMs = new Map<NodeId, number>();
  const upSinceMs = new Map<NodeId, number>(ids.map((id) => [id, 0]));
  let nodeMs = 0;
  const timeoutMs = overrides.timeoutMs ?? TIMEOUT_DETECTOR_DEFAULTS_LOCAL.timeoutMs * scale;
  const phiConfig = scalePhi(scale);
  // Tolerance after which a healthy peer must never be suspected: the largest silence either
  // default detector accepts, plus one interval and a margin for drift and jitter.
  const healthyWindowMs = Math.max(timeoutMs, phiConfig.acceptableHeartbeatPauseMs + 2 * intervalMs) + 2 * intervalMs;
  let nemesis: Nemesis | undefined;

  // Crashes awaiting detection: observer/detector/target → crash instant. Only observers that
  // were up and still trusted the target when it crashed measure a detection time.
  const pendingDetection = new Map<string, number>();
  const onStatusChange = (observer: NodeId, change: PeerStatusChange): void => {
    if (change.available) return;
    const target = change.peer;
    const stats = figures.detectors[change.detector]!;
    const nowMs = scheduler.nowMs;
    if (!downSinceMs.has(target)) {
      stats.falseSuspicions++;
      if (nemesis !== undefined && nemesis.quietSinceMs(observer, target) < nowMs - 2 * healthyWindowMs) {
        stats.falseSuspicionsQuiet++;
      }
      checkHealthySuspicion(observer, target, change.detector, nowMs);
      return;
    }
    const key = `${change.detector}/${observer}/${target}`;
    const crashedAtMs = pendingDetection.get(key);
    if (crashedAtMs === undefined) return;
    pendingDetection.delete(key);
    stats.detectionMs.push(nowMs - crashedAtMs);
  };
  const startDetection = (target: NodeId): void => {
    for (const [observer, host] of hosts) {
      const runtime = host.process?.runtime;
      if (observer === target || runtime === undefined) continue;
      for (const detector of Object.keys(figures.detectors)) {
        if (!runtime.isSuspected(detector, target)) {
          pendingDetection.set(`${detector}/${observer}/${target}`, scheduler.nowMs);
        }
      }
    }
  };
  const cancelDetection = (node: NodeId): void => {
    for (const key of [...pendingDetection.keys()]) {
      const [, observer, target] = key.split('/');
      if (observer === node || target === node) pendingDetection.delete(key);
    }
  };
  const checkHealthySuspicion = (observer: NodeId, target: NodeId, detector: string, nowMs: number): void => {
    if (lossRate > 0 || nemesis === undefined) return;
    if (detector !== TIMEOUT && detector !== PHI) return;
    if (nowMs - nemesis.quietSinceMs(observer, target) <= healthyWindowMs) return;
    if (nowMs - (upSinceMs.get(target) ?? Infinity) <= healthyWindowMs) return;
    if (nowMs - (upSinceMs.get(observer) ?? Infinity) <= healthyWindowMs) return;
    violations.push({
      checker: 'no-suspicion-when-healthy',
      atMs: nowMs,
      message: `${observer}'s ${detector} detector suspected ${target}, which has been up and ` +
        `reachable over a healthy network for over ${healthyWindowMs} ms`,
    });
  };

  const hosts = new Map<NodeId, SimHost<HeartbeatMessage, HeartbeatProcess>>();
  for (const id of ids) {
    const host = new SimHost<HeartbeatMessage, HeartbeatProcess>(id, scheduler, network, prng.fork(), {
      clock: { driftRate: 0, monotonicOffsetMs: prng.nextUint32() % 1_000_000, wallOffsetMs: 0 },
      storage: SIM_STORAGE_DEFAULTS,
    }, (context) => {
      const detectors: { name: string; detector: MonitoringDetector }[] = [
        {
          name: TIMEOUT,
          // A test override may set a timeout below the real interval (a misconfiguration): the
          // detector is then told a matching shorter interval, which its validation accepts.
          detector: new TimeoutDetector({ heartbeatIntervalMs: Math.min(intervalMs, timeoutMs / 2), timeoutMs }),
        },
        { name: PHI, detector: new PhiAccrualDetector(phiConfig) },
        ...SWEEP_MULTIPLES.map((m) => ({
          name: sweepName(m),
          detector: new TimeoutDetector({ heartbeatIntervalMs: intervalMs, timeoutMs: m * intervalMs }),
        })),
      ];
      const runtime = new HeartbeatRuntime({
        peers: ids.filter((p) => p !== id),
        heartbeatIntervalMs: intervalMs,
        checkIntervalMs: intervalMs / 4,
        incarnation: context.restarts,
      }, {
        clock: context.clock,
        timer: context.timer,
        transport: context.transport,
        detectors,
        onStatusChange: (change) => onStatusChange(id, change),
      });
      return { runtime, halt: () => runtime.stop() };
    });
    hosts.set(id, host);
  }
  const plan = drawNemesisPlan(prng, {
    kinds: FAULT_KINDS,
    requiredKinds: ['crash'],
    faultIntervalMsMin: 5_000 * scale,
    faultIntervalMsMax: 60_000 * scale,
    downtimeMsMax: 20_000 * scale,
    pauseMsMax: 1_000 * scale,
    partitionMsMax: 10_000 * scale,
    driftRateMax: 0.01,
    crashedMax: Math.max(1, nodes - 1),
  });
  nemesis = new Nemesis(prng.fork(), scheduler, {
    nodeIds: ids,
    network: network as SimNetwork<unknown>,
    isUp: (id) => hosts.get(id)!.isUp,
    crash: (id) => {
      cancelDetection(id);
      hosts.get(id)!.crash();
      nodeMs += scheduler.nowMs - upSinceMs.get(id)!;
      upSinceMs.delete(id);
      downSinceMs.set(id, scheduler.nowMs);
      startDetection(id);
    },
    restart: (id) => {
      cancelDetection(id);
      hosts.get(id)!.restart();
      downSinceMs.delete(id);
      upSinceMs.set(id, scheduler.nowMs);
    },
    pause: (id, ms) => hosts.get(id)!.pause(ms),
    setDriftRate: (id, rate) => hosts.get(id)!.clock.setDriftRate(rate),
  }, plan, durationMs * 0.9);
  nemesis.start();
  if (lossRate > 0) scheduleGcPauses(prng.fork(), scheduler, hosts, intervalMs, durationMs);
  scheduler.runUntil(durationMs);
  for (const [, since] of upSinceMs) nodeMs += durationMs - since;
  return {
    seed,
    traceHash: trace.digest(),
    violations,
    figures: { ...figures, nodeHours: nodeMs / 3_600_000, messagesSent: network.stats.sent, nodes, plan },
    simulatedMs: durationMs,
    events: scheduler.eventsRun,
    drawn: { lossRate, ...plan },
  };
}

/**
 * Real links differ: about a third of the directed links get extra loss (up to twice the base
 * rate) and extra jitter (mean up to 30 % of the interval). Only when loss is on: with loss 0
 * the network stays timely, which the no-suspicion checker relies on.
 */
function drawLinkQualities(prng: Prng, network: SimNetwork<HeartbeatMessage>, ids: readonly NodeId[],
  lossRate: number, intervalMs: number): void {
  for (const from of ids) {
    for (const to of ids) {
      if (from === to || prng.nextUint32() % 3 !== 0) continue;
      network.setLinkQuality(from, to, {
        lossRateExtra: Math.min(0.5, 2 * lossRate * (prng.nextUint32() / 2 ** 32)),
        latencyMsMeanExtra: intervalMs * (prng.nextUint32() / 2 ** 32),
      });
    }
  }
}

/**
 * Node's own failure mode: a third of the processes stall now and then (garbage collection, a
 * burst of synchronous work): every 2–10 intervals on average, for 1–4 intervals. Only in an
 * imperfect environment (loss on), like the link qualities.
 */
function scheduleGcPauses(prng: Prng, scheduler: Scheduler,
  hosts: ReadonlyMap<NodeId, SimHost<HeartbeatMessage, HeartbeatProcess>>,
  intervalMs: number, durationMs: number): void {
  for (const host of hosts.values()) {
    if (prng.nextUint32() % 3 !== 0) continue;
    const everyMsMean = intervalMs * (2 + 8 * (prng.nextUint32() / 2 ** 32));
    const pauseMsMax = intervalMs * (1 + 3 * (prng.nextUint32() / 2 ** 32));
    const next = (): void => {
      const gapMs = -Math.log(1 - prng.nextUint32() / 2 ** 32) * everyMsMean;
      if (scheduler.nowMs + gapMs >= durationMs) return;
      scheduler.schedule(gapMs, () => {
        host.pause(pauseMsMax * (0.25 + 0.75 * (prng.nextUint32() / 2 ** 32)));
        next();
      });
    };
    next();
  }
}

function emptyFigures(): { detectors: Record<string, DetectorFigures> } {
  const detectors: Record<string, DetectorFigures> = {};
  for (const name of [TIMEOUT, PHI, ...SWEEP_MULTIPLES.map(sweepName)]) {
    detectors[name] = { detectionMs: [], falseSuspicions: 0, falseSuspicionsQuiet: 0 };
  }
  return { detectors };
}

function sweepName(multiple: number): string {
  return `timeout-x${multiple}`;
}

function scalePhi(scale: number): typeof PHI_ACCRUAL_DEFAULTS_LOCAL {
  const c = PHI_ACCRUAL_DEFAULTS_LOCAL;
  return {
    ...c,
    minStdDeviationMs: c.minStdDeviationMs * scale,
    acceptableHeartbeatPauseMs: c.acceptableHeartbeatPauseMs * scale,
    firstHeartbeatEstimateMs: c.firstHeartbeatEstimateMs * scale,
  };
}

function numberOption(options: ScenarioOptions, name: string): number {
  const value = options[name];
  assert(typeof value === 'number', () => `option ${name} must be a number: ${String(value)}`);
  return value;
}

interface DetectorSummary {
  detectionMsP50: number | undefined;
  detectionMsP99: number | undefined;
  detectionMsMax: number | undefined;
  detectionMsMean: number | undefined;
  detections: number;
  falseSuspicions: number;
  falseSuspicionsPerNodeHour: number;
  falseSuspicionsQuietPerNodeHour: number;
}

function summarizeDetector(results: readonly SeedResult<HeartbeatFigures>[], name: string, nodeHours: number): DetectorSummary {
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

function summarizeHeartbeat(results: readonly SeedResult<HeartbeatFigures>[], options: ScenarioOptions) {
  const intervalMs = numberOption(options, 'interval-ms');
  const nodeHours = results.reduce((s, r) => s + r.figures.nodeHours, 0);
  const simulatedS = results.reduce((s, r) => s + r.simulatedMs / 1000, 0);
  const nodeSeconds = results.reduce((s, r) => s + r.figures.nodes * r.simulatedMs / 1000, 0);
  const messages = results.reduce((s, r) => s + r.figures.messagesSent, 0);
  const messagesPerNodePerS = nodeSeconds > 0 ? messages / nodeSeconds : 0;
  const timeout = summarizeDetector(results, TIMEOUT, nodeHours);
  const phi = summarizeDetector(results, PHI, nodeHours);
  const sweep = SWEEP_MULTIPLES.map((m) => ({ multiple: m, ...summarizeDetector(results, sweepName(m), nodeHours) }));
  const equal = timeoutAtDetection(sweep, phi.detectionMsMean, intervalMs);
  const line = (name: string, d: DetectorSummary): string =>
    `${name.padEnd(12)} detection p50 ${formatMs(d.detectionMsP50)}, p99 ${formatMs(d.detectionMsP99)}, ` +
    `max ${formatMs(d.detectionMsMax)} (${d.detections} detections); ` +
    `false suspicions ${formatNumber(d.falseSuspicionsPerNodeHour)}/node-hour (${d.falseSuspicions}; ` +
    `${formatNumber(d.falseSuspicionsQuietPerNodeHour)}/node-hour with no nemesis fault: loss, jitter, GC stalls); ` +
    `${formatNumber(messagesPerNodePerS, 1)} msgs/node/s`;
  const lines = [
    `simulated ${formatNumber(simulatedS / 3600, 2)} h over ${results.length} seeds, ${formatNumber(nodeHours, 2)} node-hours up`,
    line(TIMEOUT, timeout),
    line(PHI, phi),
    equal === undefined
      ? 'equal mean detection: phi\'s mean detection time is outside the timeout sweep'
      : `at equal mean detection time (${formatMs(phi.detectionMsMean)}): phi-accrual ` +
        `${formatNumber(phi.falseSuspicionsPerNodeHour)} false suspicions/node-hour ` +
        `(${formatNumber(phi.falseSuspicionsQuietPerNodeHour)} without nemesis faults), fixed timeout ` +
        `of ${formatMs(equal.timeoutMs)}: ${formatNumber(equal.falseSuspicionsPerNodeHour)}/node-hour ` +
        `(${formatNumber(equal.falseSuspicionsQuietPerNodeHour)} without nemesis faults)`,
  ];
  return {
    lines,
    data: { nodeHours, messagesPerNodePerS, timeout, phi, sweep, equalDetection: equal },
    violations: [],
  };
}

/**
 * Interpolates the timeout sweep (linearly between neighbours) to the fixed timeout whose mean
 * detection time equals `targetMs`, and its false-suspicion rate there.
 */
function timeoutAtDetection(
  sweep: readonly ({ multiple: number } & DetectorSummary)[],
  targetMs: number | undefined,
  intervalMs: number,
): { timeoutMs: number; falseSuspicionsPerNodeHour: number; falseSuspicionsQuietPerNodeHour: number } | undefined {
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
      falseSuspicionsPerNodeHour: lerp(a.falseSuspicionsPerNodeHour, b.falseSuspicionsPerNodeHour, t),
      falseSuspicionsQuietPerNodeHour: lerp(a.falseSuspicionsQuietPerNodeHour, b.falseSuspicionsQuietPerNodeHour, t),
    };
  }
  return undefined;
}

function lerp(a: number, b: number, t: number): number {
  return a + t * (b - a);
}
