/**
 * The two scenarios of issue #8, each run on a fresh shop (and, in core mode, a fresh
 * consistent core), every process stopped by pid at the end whatever happened:
 *
 * - failover: kill -9 a service and the leading monitor at the same moment. Another monitor
 *   takes over and restarts the service, once.
 * - paused-leader: the leader is armed to stop (SIGSTOP) right after it issues its next order;
 *   a service hangs; the leader detects it, issues the restart order and stops before the
 *   order leaves. Another monitor takes over and restarts the service. Then SIGCONT: the old
 *   leader's order goes out with its old token and the supervisor refuses it (409).
 */
import { connect } from 'conclave';
import {
  CORE_TIMING_DEFAULTS, SCENARIO_TIMING_DEFAULTS, type CoreTiming, type MonitorConfig,
  type ScenarioTiming,
} from './config.js';
import { checkRun, runViolations, type RunChecks } from './checks.js';
import { startCoreCluster, type CoreCluster } from './core-cluster.js';
import { ELECTION_NAME } from './core-coordination.js';
import { startEtcdCluster } from './etcd-cluster.js';
import type { EshopEvent, EshopEventBody, EshopEventOf } from './events.js';
import { requestJson } from './http.js';
import { EventLog, ProcessGroup, processState } from './processes.js';
import { startShop, type CoordinationMode, type Shop } from './shop.js';

export type ScenarioName = 'failover' | 'paused-leader';
export const SCENARIOS: readonly ScenarioName[] = Object.freeze(['failover', 'paused-leader']);

export interface ScenarioOptions {
  readonly scenario: ScenarioName;
  readonly coordination: CoordinationMode;
  /** Overrides of the monitors' settings (MONITOR_DEFAULTS otherwise). */
  readonly monitorConfig?: Partial<MonitorConfig>;
  readonly coreTiming?: CoreTiming;
  readonly timing?: ScenarioTiming;
  /** Aborting stops the run (and every process it started). */
  readonly signal?: AbortSignal;
}

export interface ScenarioResult {
  readonly scenario: ScenarioName;
  readonly coordination: CoordinationMode;
  /** Empty when the run showed what it should. */
  readonly violations: readonly string[];
  /** Set when the run could not be carried out (a step timed out, a process failed). */
  readonly error?: string;
  readonly failedService: string;
  /** Wall-clock time of the fault; the timeline counts from here. Unit: ms. */
  readonly startAtMs: number;
  /** Wall-clock time the run began stopping its processes; the timeline ends here. */
  readonly endAtMs: number;
  /** From the first process started to the fault. Unit: ms. */
  readonly setupMs: number;
  /** From the fault to the milestones of the run (undefined when not reached). Unit: ms. */
  readonly after: RunMilestones;
  readonly checks?: RunChecks;
  /** The leader the fault hit (killed, or paused) and its token, once known. */
  readonly oldLeader?: { readonly monitor: string; readonly token: number };
  readonly events: readonly EshopEvent[];
}

export interface RunMilestones {
  /** The first monitor declared the failed service down. */
  readonly detectedMs?: number;
  /** A monitor other than the one hit took the leadership. */
  readonly newLeaderMs?: number;
  /** The supervisor finished the failed service's restart. */
  readonly restartedMs?: number;
}

/** Every process group of a run in progress, for the runner's last-resort exit handler. */
export const RUNNING_GROUPS = new Set<ProcessGroup>();

/** Monitors per shop: three, the smallest group with a majority after one failure. */
const MONITOR_COUNT = 3;
/** Grace for SIGTERM before SIGKILL when a run stops its processes. Unit: ms. */
const STOP_GRACE_MS = 2_000;
/** Quiet time before the fault, so every detector has a rhythm to compare with. Unit: ms. */
const WARM_UP_MS = 500;

interface RunContext {
  readonly options: ScenarioOptions;
  readonly timing: ScenarioTiming;
  readonly log: EventLog;
  readonly group: ProcessGroup;
  readonly shop: Shop;
  /** Records a runner event (a fault) in the log. */
  readonly note: (body: EshopEventBody) => void;
  /** Waits for an event of `kind`; `until` (besides the run's signal) also ends the wait. */
  readonly wait: <K extends EshopEvent['kind']>(kind: K, what: string,
    matches?: (event: EshopEventOf<K>) => boolean, until?: AbortSignal,
  ) => Promise<EshopEventOf<K>>;
}

/** Runs one scenario from scratch and reports what happened; never throws for a failed run. */
export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const timing = options.timing ?? SCENARIO_TIMING_DEFAULTS;
  const log = new EventLog();
  const group = new ProcessGroup(log);
  RUNNING_GROUPS.add(group);
  log.subscribe((event) => {
    if (event.kind === 'service-started') group.adopt(`service ${event.service}`, event.pid);
  });
  const failedService = options.scenario === 'failover' ? 'payment' : 'cart';
  const setupStartMs = Date.now();
  let startAtMs = setupStartMs;
  let endAtMs = setupStartMs;
  let faulted = false;
  let core: CoreCluster | undefined;
  const observing = new AbortController();
  let error: string | undefined;
  let oldLeader: { monitor: string; token: number } | undefined;
  try {
    if (options.coordination !== 'gossip') {
      const start = options.coordination === 'etcd' ? startEtcdCluster : startCoreCluster;
      core = await start(group, options.coreTiming ?? CORE_TIMING_DEFAULTS,
        timing.stepDeadlineMs, options.signal);
      observeElection(core.endpoints, options.coordination, log, observing.signal);
    }
    const shop = await startShop(group, log, { coordination: options.coordination,
      ...(core === undefined ? {} : { endpoints: core.endpoints }),
      monitorCount: MONITOR_COUNT, monitorConfig: options.monitorConfig ?? {},
      stepDeadlineMs: timing.stepDeadlineMs,
      ...(options.signal === undefined ? {} : { signal: options.signal }) });
    await sleep(WARM_UP_MS);
    const context = makeContext(options, timing, log, group, shop);
    startAtMs = Date.now();
    faulted = true;
    const hit = (leader: { monitor: string; token: number }): void => {
      oldLeader = leader;
    };
    if (options.scenario === 'failover') await failover(context, failedService, hit);
    else await pausedLeader(context, failedService, hit);
    await sleep(timing.settleMs);
  } catch (caught) {
    error = [caught instanceof Error ? caught.message : String(caught), ...group.failures()]
      .join('\n');
  } finally {
    endAtMs = Date.now();
    observing.abort();
    await group.stopAll(STOP_GRACE_MS);
    core?.removeData();
    RUNNING_GROUPS.delete(group);
  }
  return summarize({ options, log, failedService, startAtMs, endAtMs, setupStartMs, error,
    oldLeader, faulted });
}

function summarize(run: {
  options: ScenarioOptions; log: EventLog; failedService: string; startAtMs: number;
  endAtMs: number; setupStartMs: number; error: string | undefined;
  oldLeader: { monitor: string; token: number } | undefined;
  /** Whether the run got as far as the fault (else there are no milestones to measure). */
  faulted: boolean;
}): ScenarioResult {
  const { options, log, failedService, startAtMs } = run;
  const paused = options.scenario === 'paused-leader' ? run.oldLeader : undefined;
  const checks = checkRun({ events: log.events, startAtMs, failedService,
    ...(paused === undefined ? {} : { paused }) });
  const violations = run.error === undefined ? runViolations(checks, options.scenario)
    : [`the run failed: ${run.error}`];
  const since = (matches: (e: EshopEvent) => boolean): { readonly ms?: number } => {
    const found = run.faulted
      ? log.events.find((e) => e.atMs >= startAtMs && matches(e)) : undefined;
    return found === undefined ? {} : { ms: found.atMs - startAtMs };
  };
  const detected = since((e) => e.kind === 'service-down' && e.service === failedService);
  const newLeader = since((e) => e.kind === 'became-leader'
    && e.source !== run.oldLeader?.monitor);
  const restarted = since((e) => e.kind === 'restarted' && e.service === failedService);
  return {
    scenario: options.scenario, coordination: options.coordination, violations,
    ...(run.error === undefined ? {} : { error: run.error }),
    failedService, startAtMs, endAtMs: run.endAtMs, setupMs: startAtMs - run.setupStartMs,
    after: {
      ...(detected.ms === undefined ? {} : { detectedMs: detected.ms }),
      ...(newLeader.ms === undefined ? {} : { newLeaderMs: newLeader.ms }),
      ...(restarted.ms === undefined ? {} : { restartedMs: restarted.ms }),
    },
    checks, ...(run.oldLeader === undefined ? {} : { oldLeader: run.oldLeader }),
    events: log.events,
  };
}

function makeContext(options: ScenarioOptions, timing: ScenarioTiming, log: EventLog,
  group: ProcessGroup, shop: Shop): RunContext {
  return {
    options, timing, log, group, shop,
    note: (body) => log.add({ ...body, atMs: Date.now(), source: 'runner' } as EshopEvent),
    wait: (kind, what, matches = () => true, until) => {
      const signals = [options.signal, until].filter((s) => s !== undefined);
      return log.waitFor((e) => e.kind === kind && matches(e as EshopEventOf<typeof kind>),
        what, { deadlineMs: timing.stepDeadlineMs,
          ...(signals.length === 0 ? {} : { signal: AbortSignal.any(signals) }) },
      ) as Promise<EshopEventOf<typeof kind>>;
    },
  };
}

/** The monitor leading now: the latest to have its token registered with the supervisor. */
function currentLeader(log: EventLog): { monitor: string; token: number } {
  const registered = log.events.filter((e) => e.kind === 'leader-registered');
  const last = registered[registered.length - 1];
  if (last === undefined) throw new Error('no monitor has registered as leader');
  return { monitor: last.monitor, token: last.token };
}

type LeaderHit = (leader: { monitor: string; token: number }) => void;

async function failover(context: RunContext, service: string, hit: LeaderHit): Promise<void> {
  const { group, shop, note, log } = context;
  const leader = currentLeader(log);
  hit(leader);
  const monitor = shop.monitors.get(leader.monitor)!;
  const servicePid = lastServicePid(log, service);
  // Both at once, as a machine failure would take them.
  note({ kind: 'fault', action: 'kill -9', target: `service ${service}`, pid: servicePid });
  note({ kind: 'fault', action: 'kill -9', target: `leader ${leader.monitor}`, pid: monitor.pid });
  process.kill(servicePid, 'SIGKILL');
  await group.kill9(monitor);
  await context.wait('restarted', `the restart of ${service}`, (e) => e.service === service);
}

async function pausedLeader(context: RunContext, service: string, hit: LeaderHit):
  Promise<void> {
  const { group, shop, note, wait } = context;
  // Armed on every monitor: whichever leads when the failure is detected orders, and stops.
  for (const monitor of shop.monitors.values()) group.send(monitor, 'pause-before-next-order');
  note({ kind: 'fault', action: 'hang (POST /admin/hang)', target: `service ${service}` });
  await requestJson('POST', `${shop.serviceUrls.get(service)!}/admin/hang`, undefined, 2_000);
  const pausing = await wait('pausing', 'the leader to pause with its order');
  const leader = { monitor: pausing.source, token: pausing.token };
  hit(leader);
  for (const [name, monitor] of shop.monitors) {
    if (name !== leader.monitor) group.send(monitor, 'disarm');
  }
  const monitor = shop.monitors.get(leader.monitor)!;
  await waitUntil(() => processState(monitor.pid) === 'T', context.timing.stepDeadlineMs,
    `${leader.monitor} to be stopped`);
  await wait('restarted', `another monitor to restart ${service}`,
    (e) => e.service === service && e.monitor !== leader.monitor);
  note({ kind: 'fault', action: 'kill -CONT', target: `old leader ${leader.monitor}`,
    pid: monitor.pid });
  group.signal(monitor, 'SIGCONT');
  // Whichever comes first: the refusal, or (a broken fence) the stale order obeyed.
  const settled = new AbortController();
  const mine = (e: { readonly monitor: string; readonly token: number }): boolean =>
    e.monitor === leader.monitor && e.token === pausing.token;
  try {
    await Promise.race([
      wait('rejected', `the supervisor to refuse ${leader.monitor}'s order`, mine,
        settled.signal),
      wait('restarted', 'a stale order obeyed', mine, settled.signal),
      wait('duplicate', 'a stale order obeyed', mine, settled.signal),
    ]);
  } finally {
    settled.abort();
  }
}

/** Core mode: records each change of the election's leader, as any client sees it. */
function observeElection(endpoints: readonly string[], mode: CoordinationMode, log: EventLog,
  signal: AbortSignal): void {
  const client = mode === 'etcd' ? connect({ backend: 'etcd', endpoints: [...endpoints] })
    : connect({ endpoints: [...endpoints] });
  void (async () => {
    let previous: string | undefined;
    try {
      for await (const leader of client.election(ELECTION_NAME).observe({ signal })) {
        log.add({ kind: 'leader-observed', atMs: Date.now(), source: 'core',
          ...(leader === undefined ? {} : { leader: leader.id, token: leader.fencingToken }),
          ...(previous === undefined ? {} : { previous }) });
        previous = leader?.id;
      }
    } catch {
      // The core was stopped under the watch: the run is over.
    } finally {
      client.close();
    }
  })();
}

function lastServicePid(log: EventLog, service: string): number {
  const started = log.events.filter((e) => e.kind === 'service-started' && e.service === service);
  const last = started[started.length - 1];
  if (last === undefined || last.kind !== 'service-started') {
    throw new Error(`${service} never started`);
  }
  return last.pid;
}

async function waitUntil(condition: () => boolean, deadlineMs: number, what: string):
  Promise<void> {
  const endMs = performance.now() + deadlineMs;
  while (!condition()) {
    if (performance.now() > endMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
