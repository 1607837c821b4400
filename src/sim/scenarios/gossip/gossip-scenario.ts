/**
 * Scenario `gossip`: N members run the real SWIM runtime (Lifeguard on or off) over the
 * simulated network, with the emergent leader on top. Each seed scripts the three leader
 * events (the coordinator crashes, a partition that puts the coordinator in the minority heals,
 * the coordinator leaves gracefully), random member crashes, and the swarm faults it drew
 * (see gossip-plan.ts); the checkers are in gossip-checks.ts and the figures in
 * gossip-summary.ts. With `--lifeguard both` each seed runs twice on the very same script, so
 * the two settings are compared fault for fault.
 */
import { AssertionError } from '../../../core/assert.js';
import { nodeId, type NodeId } from '../../../core/ids.js';
import type { SwimConfig, SwimMessage } from '../../../core/swim/index.js';
import { Prng } from '../../prng.js';
import type {
  Scenario, ScenarioOptions, SeedProgressListener, SeedResult,
} from '../../scenario.js';
import { Scheduler } from '../../scheduler.js';
import type { SimRecorder } from '../../sim-recorder.js';
import { NETWORK_FAULTS_NONE, SimNetwork, type NetworkFaults } from '../../sim-network.js';
import { TraceHash } from '../../trace-hash.js';
import {
  GossipChecks, type AgreementSample, type CrashSample, type FalseDeadCounts,
} from './gossip-checks.js';
import {
  drawGossipPlan, type FaultAction, type GossipPlan, type SwarmKind,
} from './gossip-plan.js';
import {
  GOSSIP_FLAGS, GOSSIP_MUTANT_CATCHES, gossipConfig, gossipSettings, type GossipSettings,
  type GossipTestOverrides,
} from './gossip-settings.js';
import { summarizeGossip } from './gossip-summary.js';
import { GossipWorld } from './gossip-world.js';
import {
  FORGED_MEMBER_PREFIX, GossipHostileActor, type GossipHostileCounts,
} from './hostile-gossip.js';
import { SWIM_VALUE_MAX, type SwimCounters } from '../../../core/swim/index.js';
import { randomFloat } from '../../../core/random.js';

export interface GossipRunFigures {
  readonly lifeguard: boolean;
  readonly traceHash: string;
  readonly events: number;
  /** Virtual time the run took (phases end as soon as the cluster has converged). Unit: ms. */
  readonly simulatedMs: number;
  readonly crashes: readonly CrashSample[];
  readonly agreements: readonly AgreementSample[];
  readonly falseDead: FalseDeadCounts;
  /** The false-dead bound of this run: lives it may wrongly end, and the model's mean. */
  readonly falseDeadAllowed: number;
  readonly falseDeadExpected: number;
  /** Sum over members of the time their process was up. Unit: hours. */
  readonly memberHours: number;
  readonly messages: number;
  /** By `estimateSwimMessageBytes`. Unit: bytes. */
  readonly bytes: number;
  readonly invalidMessages: number;
  readonly refutations: number;
  readonly rejoins: number;
  /** With --hostile: forged messages delivered and refused as malformed, and rejections. */
  readonly hostile?: GossipHostileCounts & { readonly rejected: number };
}

export interface GossipFigures {
  readonly members: number;
  readonly lossRate: number;
  readonly kinds: readonly SwarmKind[];
  readonly runs: readonly GossipRunFigures[];
}

export const gossipScenario: Scenario<GossipFigures> = {
  name: 'gossip',
  summary: 'SWIM membership with Lifeguard and the emergent leader: crash detection, false '
    + 'deaths, load, and leader agreement after a coordinator crash, a heal and a leave',
  flags: GOSSIP_FLAGS,
  mutantCatches: GOSSIP_MUTANT_CATCHES,
  runSeed: (seed, options, progress, recorder) =>
    runGossipSeed(seed, options, {}, progress, recorder),
  records: true,
  summarize: summarizeGossip,
};

/** Simulated time between two progress reports of a seed. Unit: ms. */
const PROGRESS_CHUNK_MS = 10_000;

export function runGossipSeed(
  seed: number, options: ScenarioOptions, overrides: GossipTestOverrides = {},
  progress?: SeedProgressListener, recorder?: SimRecorder,
): SeedResult<GossipFigures> {
  const settings = gossipSettings(options);
  const root = new Prng(seed);
  const plan = drawGossipPlan(root.fork(), settings.members, gossipConfig(settings, true),
    settings.lossRate, settings.durationMs);
  const runSeedValue = root.nextUint32();
  let eventsBefore = 0;
  const runs = settings.lifeguardRuns.map((lifeguard, index) => {
    const report = progress === undefined ? undefined
      : (simulatedMs: number, events: number, phase: string): void => progress({
        seed, simulatedMs, events: eventsBefore + events,
        phase: `${settings.lifeguardRuns.length > 1 ? `lifeguard ${lifeguard ? 'on' : 'off'}, `
          : ''}${phase}`,
      });
    // One time axis per recording: with `--lifeguard both` only the first run (on) is kept.
    const outcome = runOnce(runSeedValue, plan, settings, lifeguard, overrides, report,
      index === 0 ? recorder : undefined);
    eventsBefore += outcome.figures.events;
    return outcome;
  });
  const trace = new TraceHash();
  for (const run of runs) trace.mixString(run.figures.traceHash);
  const many = runs.length > 1;
  return {
    seed,
    traceHash: many ? trace.digest() : (runs[0]?.figures.traceHash ?? trace.digest()),
    violations: runs.flatMap((run) => run.violations),
    figures: {
      members: settings.members, lossRate: plan.lossRate, kinds: plan.kinds,
      runs: runs.map((run) => run.figures),
    },
    simulatedMs: runs.reduce((sum, run) => sum + run.figures.simulatedMs, 0),
    events: runs.reduce((sum, run) => sum + run.figures.events, 0),
    drawn: {
      lossRate: plan.lossRate, kinds: plan.kinds, minority: plan.minority.length + 1,
      faults: plan.segments[0].length + plan.segments[1].length,
      badLinks: plan.badLinks.length,
    },
  };
}

interface RunOutcome {
  readonly figures: GossipRunFigures;
  readonly violations: SeedResult<GossipFigures>['violations'];
}

type RunProgress = (simulatedMs: number, events: number, phase: string) => void;

/** The simulated network of one run: the plan's loss, and its bad links. */
function gossipNetwork(scheduler: Scheduler, prng: Prng, trace: TraceHash,
  plan: GossipPlan): SimNetwork<SwimMessage> {
  const network = new SimNetwork<SwimMessage>(scheduler, prng.fork(), trace, {
    faults: { ...NETWORK_FAULTS_NONE, lossRate: plan.lossRate },
    // Cheap on purpose: time, sender and receiver are mixed in as well, and any divergence
    // shows in them within a few messages. Bytes come from the members' own counters.
    describe: (message) => message.kind,
    sizeBytes: () => 0,
    // Joins and push-pulls travel over TCP in the real transport: loss delays them.
    streamLoss: 'retransmit',
  });
  for (const { member, lossRateExtra } of plan.badLinks) {
    for (const other of plan.ids) {
      if (other === member) continue;
      network.setLinkQuality(member, other, { lossRateExtra, latencyMsMeanExtra: 0 });
      network.setLinkQuality(other, member, { lossRateExtra, latencyMsMeanExtra: 0 });
    }
  }
  return network;
}

function runOnce(
  seed: number, plan: GossipPlan, settings: GossipSettings, lifeguard: boolean,
  overrides: GossipTestOverrides, progress: RunProgress | undefined, recorder?: SimRecorder,
): RunOutcome {
  const prng = new Prng(seed);
  const scheduler = new Scheduler(startRecording(recorder, plan, settings));
  const trace = new TraceHash();
  const network = gossipNetwork(scheduler, prng, trace, plan);
  const config: SwimConfig = { ...gossipConfig(settings, lifeguard), ...overrides.config };
  const world = new GossipWorld(scheduler, network, prng.fork(), {
    ids: plan.ids, seedIds: plan.protectedIds, config,
    joinSpreadMs: plan.timeline.joinSpreadMs,
    drift: new Map(plan.drift.map((d) => [d.member, d.driftRate])),
  });
  const label = settings.lifeguardRuns.length > 1 ? `lifeguard ${lifeguard ? 'on' : 'off'}: ` : '';
  const checks = new GossipChecks({
    world, scheduler, timeline: plan.timeline, label,
    lossless: plan.lossRate === 0 && plan.badLinks.length === 0,
    config, members: settings.members, baseFaults: network.currentFaults,
    badLinks: plan.badLinks,
  });
  let finished = false;
  world.start(checks);
  const actor = settings.hostile
    ? startHostile(prng.fork(), network, world, scheduler, () => finished) : undefined;
  scheduleJoinFlood(settings, plan, network, world, scheduler);
  script(plan, world, checks, network, scheduler, () => { finished = true; });
  const stopAtViolation = overrides.stopAtFirstViolation === true;
  const limitMs = Math.min(plan.timeline.limitMs, overrides.cutAtMs ?? Infinity);
  const stop = (): boolean => finished || (stopAtViolation && checks.violations.length > 0);
  try {
    // In chunks, to report progress; the same events run in the same order either way.
    for (let untilMs = PROGRESS_CHUNK_MS; ; untilMs += PROGRESS_CHUNK_MS) {
      if (scheduler.runUntil(Math.min(untilMs, limitMs), stop) || untilMs >= limitMs) break;
      progress?.(scheduler.nowMs, scheduler.eventsRun, checks.phase);
    }
  } catch (error) {
    // The simulator reports a programmer error with its seed instead of dying (STYLE.md).
    if (!(error instanceof AssertionError)) throw error;
    checks.violations.push({
      checker: 'assertion', atMs: scheduler.nowMs, message: `${label}${error.message}`,
    });
  }
  if (!finished && overrides.cutAtMs === undefined && checks.violations.length === 0) {
    checks.violations.push({
      checker: 'script', atMs: scheduler.nowMs,
      message: `${label}the script did not finish by ${limitMs} ms (the sum of its bounds)`,
    });
  }
  if (actor !== undefined) checkHostileOutcome(world, checks, scheduler.nowMs, label);
  checkJoinFloodOutcome(world, checks, settings.joinFlood, scheduler.nowMs, label);
  const rejected = actor === undefined ? 0 : countRejections(world);
  checks.finishAll();
  checks.checkFalseDeadBound();
  world.harvestAll();
  const t = world.totals;
  return {
    violations: checks.violations,
    figures: {
      lifeguard, traceHash: trace.digest(), events: scheduler.eventsRun,
      simulatedMs: scheduler.nowMs,
      crashes: checks.crashes, agreements: checks.agreements, falseDead: checks.falseDead,
      falseDeadAllowed: checks.bound?.allowed ?? 0,
      falseDeadExpected: checks.bound?.expected ?? 0,
      memberHours: t.upMs / 3_600_000, messages: t.messages, bytes: t.bytes,
      invalidMessages: t.invalidMessages, refutations: t.refutations, rejoins: checks.rejoins,
      ...(actor === undefined ? {} : { hostile: { ...actor.counts, rejected } }),
    },
  };
}

/** The recording names the members, and says which run it is when the seed runs twice. */
function startRecording(recorder: SimRecorder | undefined, plan: GossipPlan,
  settings: GossipSettings): SimRecorder | undefined {
  if (recorder === undefined) return undefined;
  recorder.members = plan.ids;
  if (settings.lifeguardRuns.length > 1) {
    recorder.note({ kind: 'note', atMs: 0, text: 'lifeguard both: this recording is the run '
      + 'with Lifeguard on; the trace hash covers both runs' });
  }
  return recorder;
}

/** The forger acts every ~20 ms of virtual time (bursts of 20 now and then) until the end. */
function startHostile(prng: Prng, network: SimNetwork<SwimMessage>, world: GossipWorld,
  scheduler: Scheduler, finished: () => boolean): GossipHostileActor {
  const actor = hostileActor(prng.fork(), network, world);
  const next = (): void => {
    const gapMs = -Math.log(1 - randomFloat(prng)) * 20;
    scheduler.schedule(gapMs, () => {
      if (finished()) return;
      const acts = randomFloat(prng) < 0.02 ? 20 : 1;
      for (let i = 0; i < acts; i++) actor.act();
      next();
    });
  };
  next();
  return actor;
}

/**
 * With `--join-flood`: the forged joins, once everyone has joined, as the warm-up's agreement
 * watch starts. The watch keeps its bound: the forged joiners never enter a view (their joins
 * are answered, but they never speak again: `SwimMember.answerStranger`), so the flood must
 * not delay agreement at all. Before, every member named no leader from the flood on.
 */
function scheduleJoinFlood(settings: GossipSettings, plan: GossipPlan,
  network: SimNetwork<SwimMessage>, world: GossipWorld, scheduler: Scheduler): void {
  if (settings.joinFlood === 0) return;
  // Its own prng: a flood leaves the other draws (and so the plain runs' traces) alone.
  const flooder = hostileActor(new Prng(0), network, world);
  scheduler.schedule(plan.timeline.joinSpreadMs, () => flooder.joinFlood(settings.joinFlood));
}

function hostileActor(prng: Prng, network: SimNetwork<SwimMessage>,
  world: GossipWorld): GossipHostileActor {
  return new GossipHostileActor(prng, network, () => world.members(), (id) => {
    const runtime = world.isUp(id) ? world.runtime(id) : undefined;
    return runtime === undefined ? undefined : {
      status: () => runtime.status(),
      member: (other) => runtime.member(other),
    };
  });
}

/** No forged joiner of `--join-flood` (`count`, maybe 0) is in any view at the end. */
function checkJoinFloodOutcome(world: GossipWorld, checks: GossipChecks, count: number,
  atMs: number, label: string): void {
  for (const id of world.members()) {
    const runtime = world.isUp(id) ? world.runtime(id) : undefined;
    if (runtime === undefined) continue;
    for (let i = 0; i < count; i++) {
      const forged = nodeId(`${FORGED_MEMBER_PREFIX}join-${i}`);
      if (runtime.member(forged) === undefined) continue;
      checks.violations.push({ checker: 'hostile', atMs,
        message: `${label}${id} took the forged joiner ${forged} into its view` });
      break;
    }
  }
}

/** Nobody follows a forged leader, and no incarnation left the bounds. */
function checkHostileOutcome(world: GossipWorld, checks: GossipChecks, atMs: number,
  label: string): void {
  for (const id of world.members()) {
    const status = world.runtime(id)?.status();
    if (status === undefined) continue;
    if (status.leader?.id.startsWith(FORGED_MEMBER_PREFIX) === true
      || status.oldestLive?.startsWith(FORGED_MEMBER_PREFIX) === true) {
      checks.violations.push({ checker: 'hostile', atMs,
        message: `${label}${id} follows a forged member: ${status.oldestLive}` });
    }
    if (status.incarnation > SWIM_VALUE_MAX || status.generationMax > SWIM_VALUE_MAX) {
      checks.violations.push({ checker: 'hostile', atMs, message: `${label}${id} took a forged `
        + `number: incarnation ${status.incarnation}, generation ${status.generationMax}` });
    }
  }
}

function countRejections(world: GossipWorld): number {
  const keys: (keyof SwimCounters)[] = ['rejectedOutOfRange', 'rejectedIncarnationJump',
    'rejectedAgeJump', 'rejectedAgeDecrease', 'rejectedGenerationJump',
    'rejectedOlderThanLeader', 'rejectedAdmissionRate', 'rejectedClaims'];
  let sum = 0;
  for (const id of world.members()) {
    const counters = world.runtime(id)?.status().counters;
    if (counters !== undefined) for (const key of keys) sum += counters[key];
  }
  return sum;
}

/** Runs the phases of `plan` one after the other (see gossip-plan.ts), then `finished`. */
function script(
  plan: GossipPlan, world: GossipWorld, checks: GossipChecks,
  network: SimNetwork<SwimMessage>, scheduler: Scheduler, finished: () => void,
): void {
  const t = plan.timeline;
  const later = (delayMs: number, run: () => void): void => {
    scheduler.schedule(delayMs, run);
  };
  const restart = (id: NodeId): void => {
    if (world.isUp(id)) return;
    checks.onRestart(id);
    world.restart(id);
  };
  /** The leader everyone names; the oldest protected member still a member otherwise. */
  const coordinator = (): NodeId => world.agreement.unanimous()?.leader
    ?? plan.protectedIds.find((id) => world.isMember(id)) ?? (plan.ids[0] as NodeId);
  const faults = new FaultInjector(plan, world, checks, network, scheduler);

  const coordinatorCrash = (): void => {
    const id = coordinator();
    world.crash(id);
    checks.onCrash(id, true);
    checks.watchAgreement('coordinator-crash', t.agreementBoundMs, () => {
      restart(id);
      faults.segment(0, partition);
    });
  };
  const partition = (): void => {
    const minority = new Set(plan.minority);
    minority.add(coordinator());
    network.partition([[...minority], plan.ids.filter((id) => !minority.has(id))]);
    const fromMs = scheduler.nowMs;
    checks.scriptPhase = 'partition';
    checks.notePartition(fromMs, fromMs + t.partitionMs + t.healAgreementBoundMs);
    later(t.partitionMs, () => {
      network.heal();
      checks.watchAgreement('partition-heal', t.healAgreementBoundMs,
        () => faults.segment(1, coordinatorLeave));
    });
  };
  const coordinatorLeave = (): void => {
    world.leave(coordinator(), t.leaveLingerMs);
    checks.watchAgreement('coordinator-leave', t.agreementBoundMs, finished);
  };
  later(t.joinSpreadMs, () => {
    checks.watchAgreement('warm-up', t.agreementBoundMs, coordinatorCrash);
  });
}

/** Plays a fault segment of the plan, then waits for the cluster to converge again. */
class FaultInjector {
  private crashesDown = 0;
  private spanOver = false;

  constructor(
    private readonly plan: GossipPlan,
    private readonly world: GossipWorld,
    private readonly checks: GossipChecks,
    private readonly network: SimNetwork<SwimMessage>,
    private readonly scheduler: Scheduler,
  ) {}

  /** Injects segment `index`; `next` runs once its faults are over and the cluster converged. */
  segment(index: 0 | 1, next: () => void): void {
    const t = this.plan.timeline;
    this.crashesDown = 0;
    this.spanOver = false;
    this.checks.scriptPhase = `fault segment ${index + 1}`;
    const whenQuiet = (): void => {
      if (!this.spanOver || this.crashesDown > 0) return;
      this.checks.watchAgreement('faults', t.agreementBoundMs, next);
    };
    for (const fault of this.plan.segments[index]) {
      this.scheduler.schedule(fault.atMs, () => this.inject(fault, whenQuiet));
    }
    this.scheduler.schedule(t.faultSpanMs, () => {
      this.spanOver = true;
      whenQuiet();
    });
  }

  private inject(fault: FaultAction, whenQuiet: () => void): void {
    const { world, checks, scheduler } = this;
    switch (fault.kind) {
      case 'crash': {
        const id = fault.member;
        if (!world.isUp(id)) return;
        world.crash(id);
        this.crashesDown++;
        // Restarted (a fresh process joins again) once everyone holds it dead.
        checks.onCrash(id, false, () => scheduler.schedule(
          this.plan.timeline.restartAfterDeadMs, () => {
            checks.onRestart(id);
            world.restart(id);
            this.crashesDown--;
            whenQuiet();
          }));
        return;
      }
      case 'bounce':
        if (!world.isUp(fault.member)) return;
        world.crash(fault.member);
        scheduler.schedule(20, () => world.restart(fault.member));
        return;
      case 'pause':
        world.pause(fault.member, fault.durationMs);
        this.disturbed(fault.durationMs);
        checks.noteMemberFault(fault);
        return;
      case 'slow':
        world.setInboundDelay(fault.member, fault.inboundDelayMs);
        this.disturbed(fault.durationMs);
        checks.noteMemberFault(fault);
        scheduler.schedule(fault.durationMs, () => world.setInboundDelay(fault.member, 0));
        return;
      case 'loss-burst':
      case 'latency-spike':
        this.networkFault(fault);
        return;
      default: {
        const never: never = fault;
        return never;
      }
    }
  }

  private disturbed(durationMs: number): void {
    const nowMs = this.scheduler.nowMs;
    this.checks.noteDisturbance(nowMs, nowMs + durationMs);
  }

  private networkFault(
    fault: Extract<FaultAction, { kind: 'loss-burst' | 'latency-spike' }>,
  ): void {
    const network = this.network;
    const base = network.currentFaults;
    const set = (faults: NetworkFaults): void => {
      network.setFaults(faults);
      this.checks.noteNetwork(faults);
    };
    if (fault.kind === 'loss-burst') {
      set({ ...base, lossRate: Math.max(base.lossRate, fault.lossRate) });
    } else {
      const extraMs = fault.latencyMsExtra;
      set({
        ...base,
        latencyMsMin: base.latencyMsMin + extraMs / 2,
        latencyMsMeanExtra: base.latencyMsMeanExtra + extraMs / 2,
        latencyMsMax: base.latencyMsMax + 2 * extraMs,
      });
    }
    this.disturbed(fault.durationMs);
    this.scheduler.schedule(fault.durationMs, () => set(base));
  }
}
