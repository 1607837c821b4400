/**
 * The simulated world of the lease scenario: consistent-core members (the real ConsistentCore:
 * RaftRuntime, write-ahead log on SimStorage, KvStore, LeaseTracker) on SimHosts, clients that
 * are the shipped client (ConclaveClient: Caller, lanes, Lease, lease stream, Watch, recipe
 * driver) on their own drifting clocks over SimClientTransport, one network for Raft and client
 * traffic alike, and an operator that hands leadership over now and then. The lease workload
 * drives `clients`; the election and lock workload drives `recipeClients`. Every client runs on
 * a SimClientHost (its machine: clock, freezes, network cuts); only the recipe clients'
 * machines get faults.
 */
import { ConclaveClient } from '../../../client/client.js';
import type { ClientConfig } from '../../../client/config.js';
import type { Lease } from '../../../client/lease.js';
import { nodeId, type NodeId } from '../../../core/ids.js';
import { KV_STORE_DEFAULTS } from '../../../core/kv/index.js';
import type { RaftMessage } from '../../../core/raft/index.js';
import { randomFloat, randomInt, shuffle } from '../../../core/random.js';
import { SILENT_LOGGER } from '../../../ports/logger.js';
import type { Transport, TransportHandler } from '../../../ports/transport.js';
import { ConsistentCore } from '../../../runtime/core/index.js';
import {
  RAFT_RUNTIME_DEFAULTS, type RaftRuntimeConfig,
} from '../../../runtime/raft/index.js';
import { WAL_DEFAULTS } from '../../../runtime/wal/index.js';
import type { NemesisTarget, StaleLeaderFault } from '../../nemesis.js';
import type { Prng } from '../../prng.js';
import type { Violation } from '../../scenario.js';
import type { Scheduler } from '../../scheduler.js';
import type { SettleGate } from '../../settle.js';
import { SimHost, type HostContext } from '../../sim-host.js';
import { SimNetwork } from '../../sim-network.js';
import type { TraceHash } from '../../trace-hash.js';
import { SimClientHost } from './client-host.js';
import {
  describeLeaseNetMessage, SimMemberServer, type LeaseNetMessage,
} from './core-protocol.js';
import type { LeaseChecker } from './lease-checker.js';
import { HOLDER_MARGIN_MS, RECIPE_MARGIN_MS, type LeaseSettings } from './lease-settings.js';
import { SimClientTransport } from './sim-client-transport.js';
import { SnapshotChecker } from './snapshot-checker.js';

/** One simulated client: the shipped client on its machine. */
export interface SimClient {
  readonly id: NodeId;
  readonly client: ConclaveClient;
  readonly host: SimClientHost;
  readonly transport: SimClientTransport;
  /** Every lease the client was granted (ClientComponents.onLease), by id. */
  readonly leases: ReadonlyMap<number, Lease>;
  /** Tells `listener` of every lease granted from now on, before the grant resolves. */
  onLease(listener: (lease: Lease) => void): void;
}

export interface MemberProcess {
  readonly core: ConsistentCore;
  halt(): void;
}

export type MemberHost = SimHost<LeaseNetMessage, MemberProcess>;

export interface WorldCounts {
  /** Elections won (a member became leader). */
  leaderChanges: number;
  transfers: number;
  /**
   * Leader-only calls refused by a member that knew no leader: NO_LEADER (an election under
   * way) and NO_QUORUM (no leader heard for longer than an election takes).
   */
  noLeaderAnswers: number;
  noQuorumAnswers: number;
}

/** Leader-only calls a member refused knowing no leader, by the verdict it gave. */
export interface LeaderlessCounts {
  /** CONCLAVE_NO_LEADER: it heard from a leader within an election's time (retry soon). */
  readonly noLeader: number;
  /** CONCLAVE_NO_QUORUM: it heard from none for longer (it may be cut off). */
  readonly noQuorum: number;
}

export function leaderlessCounts(counts: WorldCounts): LeaderlessCounts {
  return { noLeader: counts.noLeaderAnswers, noQuorum: counts.noQuorumAnswers };
}

/** The summary line of the leaderless verdicts (lease and core scenarios). */
export function leaderlessLine(noLeader: number, noQuorum: number): string {
  return `members without a leader refused ${noLeader + noQuorum} leader-only calls: `
    + `${noLeader} CONCLAVE_NO_LEADER (an election under way), ${noQuorum} CONCLAVE_NO_QUORUM `
    + '(no leader heard for longer than an election takes)';
}

/** Snapshot steps and file pieces of a member with `--snapshots` (see LeaseSnapshotSettings). */
function snapshotConfig(settings: LeaseSettings): RaftRuntimeConfig {
  const { snapshots } = settings;
  if (snapshots === undefined) return RAFT_RUNTIME_DEFAULTS;
  return { ...RAFT_RUNTIME_DEFAULTS, snapshotEntries: snapshots.entries,
    snapshotCatchUpEntries: snapshots.catchUpEntries,
    snapshotStepIntervalMs: snapshots.stepIntervalMs };
}

export class LeaseWorld {
  readonly network: SimNetwork<LeaseNetMessage>;
  readonly ids: readonly NodeId[];
  readonly hosts = new Map<NodeId, MemberHost>();
  /** The lease workload's clients (c1, c2, ...). */
  readonly clients: SimClient[] = [];
  /** The election and lock clients (r1, r2, ...). */
  readonly recipeClients: SimClient[] = [];
  readonly counts: WorldCounts = { leaderChanges: 0, transfers: 0, noLeaderAnswers: 0,
    noQuorumAnswers: 0 };
  /** Failures of the machinery itself (storage, recovery), reported as violations. */
  readonly violations: Violation[] = [];
  /** Every snapshot taken or installed, compared by index (violations go to `violations`). */
  readonly snapshots: SnapshotChecker;
  /** Clients a stale-leader fault always leaves with the old leader (scenario core's readers). */
  staleLeaderPinned: readonly NodeId[] = [];
  /** The stale-leader cut to make once its leader sends timeout-now (staleLeader). */
  private staleLeaderArmed: { readonly leader: NodeId; readonly pinned: readonly NodeId[] }
    | undefined;

  constructor(
    private readonly prng: Prng,
    readonly scheduler: Scheduler,
    trace: TraceHash,
    readonly settings: LeaseSettings,
    private readonly checker: LeaseChecker,
    /** Settles the clients' promise reactions between events (src/sim/settle.ts). */
    readonly gate: SettleGate,
  ) {
    this.snapshots = new SnapshotChecker(() => scheduler.nowMs, this.violations);
    this.network = new SimNetwork<LeaseNetMessage>(scheduler, prng.fork(), trace, {
      faults: settings.network, describe: describeLeaseNetMessage, sizeBytes: () => 64,
    });
    this.ids = Array.from({ length: settings.nodes }, (_, i) => nodeId(`n${i + 1}`));
    if (scheduler.recorder !== undefined) scheduler.recorder.members = this.ids;
    for (const id of this.ids) {
      this.hosts.set(id, new SimHost(id, scheduler, this.network, prng.fork(), {
        clock: { driftRate: 0, monotonicOffsetMs: randomInt(prng, 0, 100_000), wallOffsetMs: 0 },
        storage: { syncLatencyMs: 0.1 + 0.9 * randomFloat(prng), unsyncedSurvivalRate: 0.5 },
      }, (context) => this.startMember(context)));
    }
    settings.clientDriftRates.forEach((driftRate, i) => {
      this.clients.push(this.addClient(`c${i + 1}`, driftRate, HOLDER_MARGIN_MS));
    });
    settings.recipes.clientDriftRates.forEach((driftRate, i) => {
      this.recipeClients.push(this.addClient(`r${i + 1}`, driftRate, RECIPE_MARGIN_MS));
    });
  }

  /** The member that leads now (by its own account), if exactly one up member says so. */
  leader(): MemberHost | undefined {
    const leaders = [...this.hosts.values()].filter((host) =>
      host.process?.core.status().role === 'leader');
    return leaders.length === 1 ? leaders[0] : undefined;
  }

  /** What the nemesis acts on: the members (clients never crash). */
  nemesisTarget(): NemesisTarget {
    return {
      nodeIds: this.ids,
      network: this.network as SimNetwork<unknown>,
      isUp: (id) => this.host(id).isUp,
      crash: (id) => this.host(id).crash(),
      restart: (id) => {
        if (!this.host(id).isUp) this.host(id).restart();
      },
      pause: (id, ms) => this.host(id).pause(ms),
      setDriftRate: (id, rate) => this.host(id).clock.setDriftRate(rate),
      staleLeader: () => this.staleLeader(),
    };
  }

  /**
   * NemesisTarget.staleLeader: the leader hands over to its most up-to-date follower; when it
   * sends timeout-now (onTransferStage), every member-to-it link is cut, and so are the links
   * between every other member and each of `staleLeaderPinned` and about a quarter of the
   * other `clients`: those reach the old leader only; the others find the new one (the old
   * leader refuses writes while it transfers). The transfer counts in `counts.transfers`.
   */
  private staleLeader(): StaleLeaderFault | undefined {
    const leader = this.leader();
    if (leader === undefined) return undefined;
    const pinned = [...this.staleLeaderPinned, ...this.clients
      .filter((c) => !this.staleLeaderPinned.includes(c.id) && randomFloat(this.prng) < 0.25)
      .map((c) => c.id)];
    const armed = { leader: leader.id, pinned };
    this.staleLeaderArmed = armed;
    this.counts.transfers++;
    leader.submit((p) => p.core.runtime.transferLeadership(undefined, () => undefined));
    return { leader: leader.id, disarm: () => {
      if (this.staleLeaderArmed === armed) this.staleLeaderArmed = undefined;
    } };
  }

  /** A member's transfer went a stage further: the armed stale-leader cut, if it is its. */
  private onTransferStage(id: NodeId, stage: 'started' | 'timeout-now-sent' | 'aborted'): void {
    const armed = this.staleLeaderArmed;
    if (armed?.leader !== id || stage === 'started') return;
    this.staleLeaderArmed = undefined;
    if (stage === 'aborted') return;
    for (const other of this.ids) {
      if (other === id) continue;
      this.network.blockLink(other, id);
      for (const client of armed.pinned) {
        this.network.blockLink(client, other);
        this.network.blockLink(other, client);
      }
    }
    this.scheduler.recorder?.note({ kind: 'partition', atMs: this.scheduler.nowMs,
      links: this.network.blockedLinkPairs() });
  }

  /** Ends every fault: links healed, no duplicates, every member up and running. */
  healAll(): void {
    this.network.heal();
    this.network.setFaults({ ...this.network.currentFaults, lossRate: 0, duplicateRate: 0 });
    for (const host of this.hosts.values()) {
      host.resume();
      if (!host.isUp) host.restart();
    }
  }

  /**
   * Hands leadership over every so often (exponential gaps of `meanMs`) until `stopAtMs`: to
   * a random other member, or (one time in three) to the most up-to-date one. A transfer is
   * an operator's act, not a fault: the lease bounds must hold through it.
   */
  startTransfers(meanMs: number, stopAtMs: number): void {
    const next = (): void => {
      const gapMs = -Math.log(1 - randomFloat(this.prng)) * meanMs;
      if (this.scheduler.nowMs + gapMs >= stopAtMs) return;
      this.scheduler.schedule(gapMs, () => {
        this.transfer();
        next();
      });
    };
    next();
  }

  private transfer(): void {
    const leader = this.leader();
    if (leader === undefined) return;
    const others = this.ids.filter((id) => id !== leader.id);
    const target = randomInt(this.prng, 0, 3) === 0 ? undefined
      : others[randomInt(this.prng, 0, others.length)];
    this.counts.transfers++;
    leader.submit((p) => p.core.runtime.transferLeadership(target, () => undefined));
  }

  private host(id: NodeId): MemberHost {
    return this.hosts.get(id)!;
  }

  /**
   * A client as a user of this cluster would configure the shipped one: every member listed
   * (in its own order), attempts of two election timeouts, four in all, back-offs between a
   * heartbeat and an election timeout, watches presumed dead after four election timeouts
   * without a frame (members send progress every election timeout), ρ as the servers'.
   */
  private addClient(name: string, driftRate: number, leaseMarginMs: number): SimClient {
    const id = nodeId(name);
    const host = new SimClientHost(id, this.scheduler, this.network, {
      driftRate, monotonicOffsetMs: randomInt(this.prng, 0, 100_000), wallOffsetMs: 0,
    }, this.gate);
    const { tuning } = this.settings;
    const config: ClientConfig = {
      endpoints: shuffle(this.prng, [...this.ids]), clientId: name,
      requestTimeoutMs: 2 * tuning.electionTimeoutMsMax,
      retryDeadlineMs: 4 * tuning.electionTimeoutMsMax,
      backoffMsMin: tuning.heartbeatIntervalMs, backoffMsMax: tuning.electionTimeoutMsMax,
      writesInflightMax: 16, redirectsMax: 3,
      watchIdleMsMax: 4 * tuning.electionTimeoutMsMax,
      clockRateErrorMax: tuning.clockRateErrorMax, leaseMarginMs,
    };
    const transport = new SimClientTransport(host.transport);
    const leases = new Map<number, Lease>();
    const listeners: ((lease: Lease) => void)[] = [];
    const client = new ConclaveClient(config, {
      clock: host.processClock, timer: host.processClock, random: this.prng.fork(), transport,
      onLease: (lease) => {
        leases.set(lease.id, lease);
        for (const listener of listeners) listener(lease);
      },
      campaignMutants: this.settings.recipes.mutants,
    });
    return { id, client, host, transport, leases,
      onLease: (listener) => listeners.push(listener) };
  }

  /** Ends every client (their calls and watches stop; nothing more is sent). */
  closeClients(): void {
    for (const c of [...this.clients, ...this.recipeClients]) c.client.close();
  }

  /**
   * One life of a member: its ConsistentCore on the host's ports, Raft messages unwrapped to it,
   * client requests served by a CoreServer. Nothing is sent once the process is halted (a
   * kill -9 says nothing).
   */
  private startMember(context: HostContext<LeaseNetMessage>): MemberProcess {
    let alive = true;
    const send = (to: NodeId, message: LeaseNetMessage): void => {
      if (alive) context.transport.send(to, message);
    };
    let raftHandler: TransportHandler<RaftMessage> | undefined;
    const raftTransport: Transport<RaftMessage> = {
      localId: context.id,
      send: (to, message) => send(to, { kind: 'raft', message }),
      sendDatagram: (to, message) => {
        if (alive) context.transport.sendDatagram(to, { kind: 'raft', message });
      },
      setHandler: (handler) => {
        raftHandler = handler;
      },
      close: () => undefined,
    };
    const { electionTimeoutMsMax } = this.settings.tuning;
    const server = new SimMemberServer({ member: context.id, send,
      nowMs: () => this.scheduler.nowMs, observer: this.checker, timer: context.timer,
      progressIntervalMs: electionTimeoutMsMax, electionTimeoutMsMax,
      recorder: this.scheduler.recorder,
      memberNowMs: () => context.clock.monotonicMs(),
      onLeaderless: (code) => {
        if (code === 'CONCLAVE_NO_LEADER') this.counts.noLeaderAnswers++;
        else this.counts.noQuorumAnswers++;
      } });
    let core: ConsistentCore | undefined;
    context.transport.setHandler({
      onMessage: (from, message) => {
        if (message.kind === 'raft') raftHandler?.onMessage(from, message.message);
        else if (message.kind === 'client' && core !== undefined) {
          server.receive(core, from, message.message);
        }
      },
      onPeerReset: (peer) => raftHandler?.onPeerReset?.(peer),
    });
    this.checker.memberStarted(context.id);
    core = this.openCore(context, raftTransport, server, (restored) => {
      if (core === undefined) return;
      if (restored) this.checker.memberRestored(context.id, core.store);
      else this.checker.memberApplied(context.id, core.store);
      server.onApplied(core);
    });
    server.coreOpened(core);
    // The store may start from a snapshot rather than empty: the checker learns its leases.
    this.checker.memberRestored(context.id, core.store);
    const opened = core;
    server.startProgress(opened);
    return { core: opened, halt: () => {
      alive = false;
      server.stop();
      opened.stop();
    } };
  }

  private openCore(context: HostContext<LeaseNetMessage>, transport: Transport<RaftMessage>,
    server: SimMemberServer, onApplied: (restored: boolean) => void): ConsistentCore {
    const { settings } = this;
    const nowMs = (): number => this.scheduler.nowMs;
    const chunk = settings.snapshots?.chunkBytes;
    let core: ConsistentCore | undefined;
    core = ConsistentCore.open({
      id: context.id, voters: this.ids, kv: KV_STORE_DEFAULTS,
      raft: chunk === undefined ? settings.tuning
        : { ...settings.tuning, snapshotChunkBytesMax: chunk },
      // Small segments with snapshots on, so compaction removes some.
      wal: { ...WAL_DEFAULTS, segmentBytesMax: settings.snapshots === undefined ? 65_536 : 4096 },
      lease: settings.lease, raftRuntime: snapshotConfig(settings),
      ...(settings.coreMutants === undefined ? {} : { mutants: settings.coreMutants }),
    }, {
      clock: context.clock, timer: context.timer, transport, storage: context.storage,
      random: context.random, logger: SILENT_LOGGER,
      onApplied: (_revision, restored) => onApplied(restored === true),
      onRaftEvent: (event) => {
        if (event.kind === 'leadership-transfer') this.onTransferStage(context.id, event.stage);
        if (event.kind !== 'role-changed') return;
        this.scheduler.recorder?.note({ kind: 'role', atMs: nowMs(), node: context.id,
          term: event.term, from: event.from, to: event.to, reason: event.reason });
        if (event.to === 'leader') this.counts.leaderChanges++;
        server.onRoleChanged(event.to === 'leader');
      },
      onFatal: (error) => this.violations.push({ checker: 'storage', atMs: nowMs(),
        message: `${context.id}: ${error.message}` }),
      onSnapshot: (event) => {
        this.snapshots.observe(context.id, event);
        if (event.kind === 'installed' && core !== undefined) {
          this.checker.memberRestored(context.id, core.store);
        }
      },
    });
    return core;
  }
}
