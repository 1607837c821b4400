/**
 * Scenario `heartbeat`: N nodes heartbeat all-to-all over the simulated network under the
 * nemesis, each running both failure detectors (the fixed timeout and phi accrual) on the same
 * arrivals, plus a sweep of fixed timeouts so the two can be compared at equal mean detection
 * time. Figures per detector: detection time of a crashed node (p50, p99, max), false
 * suspicions per node-hour (a suspicion of a node that is up, paused included), messages per
 * node per second (heartbeat-summary.ts).
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
import {
  drawNemesisPlan, FAULT_KINDS, Nemesis, type NemesisPlan, type NemesisTarget,
} from '../nemesis.js';
import { Prng } from '../prng.js';
import type { Scenario, ScenarioOptions, SeedResult, Violation } from '../scenario.js';
import { Scheduler } from '../scheduler.js';
import type { SimRecorder } from '../sim-recorder.js';
import { SimHost } from '../sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../sim-network.js';
import { SIM_STORAGE_DEFAULTS } from '../sim-storage.js';
import { TraceHash } from '../trace-hash.js';
import { summarizeHeartbeat } from './heartbeat-summary.js';

export const PHI = 'phi-accrual';
export const TIMEOUT = 'timeout';
/** Fixed timeouts swept, as multiples of the heartbeat interval, for the equal-detection view. */
const SWEEP_MULTIPLES: readonly number[] = [2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 10, 12, 15, 20];

export interface DetectorFigures {
  /** Crash-to-suspicion times seen by each live observer. Unit: ms. */
  detectionMs: number[];
  falseSuspicions: number;
  /**
   * False suspicions with no nemesis fault on either node or the network: from loss, jitter and
   * GC stalls.
   */
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
    {
      name: 'nodes', kind: 'integer', description: 'cluster size', defaultValue: 5, min: 2, max: 64,
    },
    {
      name: 'loss', kind: 'number', min: 0, max: 0.9, defaultValue: undefined,
      description: 'base packet loss rate (default: drawn per seed, 0 for half the seeds)',
    },
    {
      name: 'duration-s', kind: 'number', description: 'simulated seconds per seed',
      defaultValue: 600, min: 1, max: 86_400,
    },
    {
      name: 'interval-ms', kind: 'number', description: 'heartbeat interval', defaultValue: 100,
      min: 1, max: 60_000,
    },
  ],
  runSeed: (seed, options, _progress, recorder) => runHeartbeatSeed(seed, options, {}, recorder),
  records: true,
  summarize: (results, options) => summarizeHeartbeat(results,
    numberOption(options, 'interval-ms'), {
      timeout: TIMEOUT, phi: PHI,
      sweep: SWEEP_MULTIPLES.map((m) => ({ multiple: m, name: sweepName(m) })),
    }),
};

/** Test-only knobs, to prove the checker bites (a timeout below the interval must trip it). */
export interface HeartbeatTestOverrides {
  readonly timeoutMs?: number;
}

export function runHeartbeatSeed(seed: number, options: ScenarioOptions,
  overrides: HeartbeatTestOverrides = {}, recorder?: SimRecorder): SeedResult<HeartbeatFigures> {
  const setup = drawSetup(seed, options, overrides, recorder);
  const { prng, scheduler, network, intervalMs, durationMs, lossRate } = setup;
  const checker = new HeartbeatChecker(setup);
  const hosts = createHosts(setup, checker);
  const plan = drawNemesisPlan(prng, {
    kinds: FAULT_KINDS,
    requiredKinds: ['crash'],
    faultIntervalMsMin: 5_000 * setup.scale,
    faultIntervalMsMax: 60_000 * setup.scale,
    downtimeMsMax: 20_000 * setup.scale,
    pauseMsMax: 1_000 * setup.scale,
    partitionMsMax: 10_000 * setup.scale,
    driftRateMax: 0.01,
    crashedMax: Math.max(1, setup.ids.length - 1),
  });
  const nemesis = new Nemesis(prng.fork(), scheduler, nemesisTarget(setup, hosts, checker), plan,
    durationMs * 0.9);
  checker.watch(nemesis);
  nemesis.start();
  if (lossRate > 0) scheduleGcPauses(prng.fork(), scheduler, hosts, intervalMs, durationMs);
  scheduler.runUntil(durationMs);
  return {
    seed,
    traceHash: setup.trace.digest(),
    violations: checker.violations,
    figures: {
      ...checker.figures, nodeHours: checker.nodeMsAt(durationMs) / 3_600_000,
      messagesSent: network.stats.sent, nodes: setup.ids.length, plan,
    },
    simulatedMs: durationMs,
    events: scheduler.eventsRun,
    drawn: { lossRate, ...plan },
  };
}

/** One seed's world and timings, drawn before anything runs. */
interface HeartbeatSetup {
  readonly prng: Prng;
  readonly scheduler: Scheduler;
  readonly trace: TraceHash;
  readonly network: SimNetwork<HeartbeatMessage>;
  readonly ids: readonly NodeId[];
  readonly lossRate: number;
  readonly durationMs: number;
  readonly intervalMs: number;
  /** The interval over the LOCAL defaults' interval: every default duration scales by it. */
  readonly scale: number;
  readonly timeoutMs: number;
  readonly phiConfig: typeof PHI_ACCRUAL_DEFAULTS_LOCAL;
  /**
   * Tolerance after which a healthy peer must never be suspected: the largest silence either
   * default detector accepts, plus one interval and a margin for drift and jitter. Unit: ms.
   */
  readonly healthyWindowMs: number;
}

function drawSetup(seed: number, options: ScenarioOptions,
  overrides: HeartbeatTestOverrides, recorder: SimRecorder | undefined): HeartbeatSetup {
  const nodes = numberOption(options, 'nodes');
  const intervalMs = numberOption(options, 'interval-ms');
  const scale = intervalMs / TIMEOUT_DETECTOR_DEFAULTS_LOCAL.heartbeatIntervalMs;
  const prng = new Prng(seed);
  const scheduler = new Scheduler(recorder);
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
  if (recorder !== undefined) recorder.members = ids;
  if (lossRate > 0) drawLinkQualities(prng, network, ids, lossRate, intervalMs);
  const timeoutMs = overrides.timeoutMs ?? TIMEOUT_DETECTOR_DEFAULTS_LOCAL.timeoutMs * scale;
  const phiConfig = scalePhi(scale);
  const healthyWindowMs = Math.max(timeoutMs,
    phiConfig.acceptableHeartbeatPauseMs + 2 * intervalMs) + 2 * intervalMs;
  return {
    prng, scheduler, trace, network, ids, lossRate, intervalMs, scale, timeoutMs, phiConfig,
    healthyWindowMs, durationMs: numberOption(options, 'duration-s') * 1000,
  };
}

type HeartbeatHosts = ReadonlyMap<NodeId, SimHost<HeartbeatMessage, HeartbeatProcess>>;

/**
 * Who is up since when, the detections awaited, the figures, and the checker: with no loss,
 * a node up and reachable over an undisturbed network for longer than `healthyWindowMs` is
 * never suspected.
 */
class HeartbeatChecker {
  readonly figures = emptyFigures();
  readonly violations: Violation[] = [];
  private readonly downSinceMs = new Map<NodeId, number>();
  private readonly upSinceMs: Map<NodeId, number>;
  /**
   * Crashes awaiting detection: detector/observer/target → crash instant. Only observers that
   * were up and still trusted the target when it crashed measure a detection time.
   */
  private readonly pendingDetection = new Map<string, number>();
  /** Node-time up, of nodes that went down since. Unit: ms. */
  private nodeMs = 0;
  private nemesis: Nemesis | undefined;

  constructor(private readonly setup: HeartbeatSetup) {
    this.upSinceMs = new Map(setup.ids.map((id) => [id, 0]));
  }

  watch(nemesis: Nemesis): void {
    this.nemesis = nemesis;
  }

  /** Node-time up over the whole run, at its end. Unit: ms. */
  nodeMsAt(endMs: number): number {
    let total = this.nodeMs;
    for (const [, since] of this.upSinceMs) total += endMs - since;
    return total;
  }

  onStatusChange(observer: NodeId, change: PeerStatusChange): void {
    if (change.available) return;
    const target = change.peer;
    const stats = this.figures.detectors[change.detector]!;
    const nowMs = this.setup.scheduler.nowMs;
    if (!this.downSinceMs.has(target)) {
      stats.falseSuspicions++;
      const quietSinceMs = this.nemesis?.quietSinceMs(observer, target);
      if (quietSinceMs !== undefined && quietSinceMs < nowMs - 2 * this.setup.healthyWindowMs) {
        stats.falseSuspicionsQuiet++;
      }
      this.checkHealthySuspicion(observer, target, change.detector, nowMs);
      return;
    }
    const key = `${change.detector}/${observer}/${target}`;
    const crashedAtMs = this.pendingDetection.get(key);
    if (crashedAtMs === undefined) return;
    this.pendingDetection.delete(key);
    stats.detectionMs.push(nowMs - crashedAtMs);
  }

  /** `node` has just crashed: every live observer that trusts it starts a detection clock. */
  crashed(node: NodeId, hosts: HeartbeatHosts): void {
    const nowMs = this.setup.scheduler.nowMs;
    this.nodeMs += nowMs - this.upSinceMs.get(node)!;
    this.upSinceMs.delete(node);
    this.downSinceMs.set(node, nowMs);
    for (const [observer, host] of hosts) {
      const runtime = host.process?.runtime;
      if (observer === node || runtime === undefined) continue;
      for (const detector of Object.keys(this.figures.detectors)) {
        if (!runtime.isSuspected(detector, node)) {
          this.pendingDetection.set(`${detector}/${observer}/${node}`, nowMs);
        }
      }
    }
  }

  restarted(node: NodeId): void {
    this.downSinceMs.delete(node);
    this.upSinceMs.set(node, this.setup.scheduler.nowMs);
  }

  /** `node` crashes or restarts: detections it observes or is the target of are void. */
  cancelDetection(node: NodeId): void {
    for (const key of [...this.pendingDetection.keys()]) {
      const [, observer, target] = key.split('/');
      if (observer === node || target === node) this.pendingDetection.delete(key);
    }
  }

  private checkHealthySuspicion(observer: NodeId, target: NodeId, detector: string,
    nowMs: number): void {
    const { lossRate, healthyWindowMs } = this.setup;
    const nemesis = this.nemesis;
    if (lossRate > 0 || nemesis === undefined) return;
    if (detector !== TIMEOUT && detector !== PHI) return;
    if (nowMs - nemesis.quietSinceMs(observer, target) <= healthyWindowMs) return;
    if (nowMs - (this.upSinceMs.get(target) ?? Infinity) <= healthyWindowMs) return;
    if (nowMs - (this.upSinceMs.get(observer) ?? Infinity) <= healthyWindowMs) return;
    this.violations.push({
      checker: 'no-suspicion-when-healthy',
      atMs: nowMs,
      message: `${observer}'s ${detector} detector suspected ${target}, which has been up and `
        + `reachable over a healthy network for over ${healthyWindowMs} ms`,
    });
  }
}

function createHosts(setup: HeartbeatSetup,
  checker: HeartbeatChecker): Map<NodeId, SimHost<HeartbeatMessage, HeartbeatProcess>> {
  const { prng, scheduler, network, ids } = setup;
  const hosts = new Map<NodeId, SimHost<HeartbeatMessage, HeartbeatProcess>>();
  for (const id of ids) {
    const host = new SimHost<HeartbeatMessage, HeartbeatProcess>(id, scheduler, network,
      prng.fork(), {
        clock: { driftRate: 0, monotonicOffsetMs: prng.nextUint32() % 1_000_000, wallOffsetMs: 0 },
        storage: SIM_STORAGE_DEFAULTS,
      }, (context) => {
        const runtime = new HeartbeatRuntime({
          peers: ids.filter((p) => p !== id),
          heartbeatIntervalMs: setup.intervalMs,
          checkIntervalMs: setup.intervalMs / 4,
          incarnation: context.restarts,
        }, {
          clock: context.clock,
          timer: context.timer,
          transport: context.transport,
          detectors: createDetectors(setup),
          onStatusChange: (change) => {
            checker.onStatusChange(id, change);
            recordStatusChange(scheduler, id, change);
          },
        });
        return { runtime, halt: () => runtime.stop() };
      });
    hosts.set(id, host);
  }
  return hosts;
}

/** The default detectors' verdicts into the recording (the sweep's would be 14 times as many). */
function recordStatusChange(scheduler: Scheduler, observer: NodeId, change: PeerStatusChange):
  void {
  if (change.detector !== TIMEOUT && change.detector !== PHI) return;
  scheduler.recorder?.note({ kind: 'member', atMs: scheduler.nowMs, node: change.peer,
    by: observer, state: change.available ? 'alive' : 'suspect', detector: change.detector });
}

/** Both default detectors, and the fixed-timeout sweep, on the same arrivals. */
function createDetectors(setup: HeartbeatSetup): { name: string; detector: MonitoringDetector }[] {
  const { intervalMs, timeoutMs } = setup;
  return [
    {
      name: TIMEOUT,
      // A test override may set a timeout below the real interval (a misconfiguration): the
      // detector is then told a matching shorter interval, which its validation accepts.
      detector: new TimeoutDetector({
        heartbeatIntervalMs: Math.min(intervalMs, timeoutMs / 2), timeoutMs,
      }),
    },
    { name: PHI, detector: new PhiAccrualDetector(setup.phiConfig) },
    ...SWEEP_MULTIPLES.map((m) => ({
      name: sweepName(m),
      detector: new TimeoutDetector({ heartbeatIntervalMs: intervalMs, timeoutMs: m * intervalMs }),
    })),
  ];
}

function nemesisTarget(setup: HeartbeatSetup, hosts: HeartbeatHosts,
  checker: HeartbeatChecker): NemesisTarget {
  return {
    nodeIds: setup.ids,
    network: setup.network as SimNetwork<unknown>,
    isUp: (id) => hosts.get(id)!.isUp,
    crash: (id) => {
      checker.cancelDetection(id);
      hosts.get(id)!.crash();
      checker.crashed(id, hosts);
    },
    restart: (id) => {
      checker.cancelDetection(id);
      hosts.get(id)!.restart();
      checker.restarted(id);
    },
    pause: (id, ms) => hosts.get(id)!.pause(ms),
    setDriftRate: (id, rate) => hosts.get(id)!.clock.setDriftRate(rate),
  };
}

/**
 * Real links differ: about a third of the directed links get extra loss (up to twice the base
 * rate) and extra jitter (mean up to 30 % of the interval). Only when loss is on: with loss 0
 * the network stays timely, which the no-suspicion checker relies on.
 */
function drawLinkQualities(prng: Prng, network: SimNetwork<HeartbeatMessage>,
  ids: readonly NodeId[], lossRate: number, intervalMs: number): void {
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
