/**
 * Three consistent-core members (the real ConsistentCore: Raft runtime, write-ahead log,
 * KvStore and LeaseTracker wired as the server runs them) on SimHosts, for the tests of
 * test/runtime/core: virtual time, simulated network and disks, seeded. Not a test file itself.
 */
import assert from 'node:assert/strict';
import { nodeId, type NodeId } from '../../../src/core/ids.js';
import { KV_STORE_DEFAULTS } from '../../../src/core/kv/index.js';
import {
  RAFT_DEFAULTS_LOCAL, describeRaftMessage, type RaftMessage, type RaftTuning,
} from '../../../src/core/raft/index.js';
import { SILENT_LOGGER } from '../../../src/ports/logger.js';
import type { LeaseConfig } from '../../../src/runtime/lease/index.js';
import {
  ConsistentCore, type KvWrite, type LeaseOutcome, type LeaseStatus, type WriteOutcome,
} from '../../../src/runtime/core/consistent-core.js';
import {
  RAFT_RUNTIME_DEFAULTS, type RaftRuntimeConfig,
} from '../../../src/runtime/raft/index.js';
import type { AutoCompactionConfig } from '../../../src/runtime/core/auto-compaction.js';
import { Prng } from '../../../src/sim/prng.js';
import { Scheduler } from '../../../src/sim/scheduler.js';
import { SimHost } from '../../../src/sim/sim-host.js';
import { NETWORK_FAULTS_NONE, SimNetwork } from '../../../src/sim/sim-network.js';
import { TraceHash } from '../../../src/sim/trace-hash.js';

export type Unstamped<W> = W extends unknown ? Omit<W, 'clientId' | 'sequence'> : never;

export const CORE_LEASE: LeaseConfig = { checkpointIntervalMs: 500, leasesPerEntryMax: 1000,
  retryDelayMs: 50 };

export interface CoreClusterOptions {
  readonly lease?: LeaseConfig;
  readonly raft?: Partial<RaftTuning>;
  readonly raftRuntime?: Partial<RaftRuntimeConfig>;
  readonly autoCompaction?: AutoCompactionConfig;
}

/** Three ConsistentCore members on SimHosts; every wait is virtual. */
export class CoreCluster {
  readonly scheduler = new Scheduler();
  readonly network: SimNetwork<RaftMessage>;
  readonly hosts = new Map<NodeId, SimHost<RaftMessage, { core: ConsistentCore; halt(): void }>>();
  readonly ids = ['n1', 'n2', 'n3'].map(nodeId);
  private sequence = 0;

  constructor(seed: number, options: CoreClusterOptions = {}) {
    const prng = new Prng(seed);
    this.network = new SimNetwork<RaftMessage>(this.scheduler, prng.fork(), new TraceHash(), {
      faults: NETWORK_FAULTS_NONE, describe: describeRaftMessage, sizeBytes: () => 64 });
    for (const id of this.ids) {
      this.hosts.set(id, new SimHost(id, this.scheduler, this.network, prng.fork(), {
        clock: { driftRate: 0, monotonicOffsetMs: 1000, wallOffsetMs: 0 },
        storage: { syncLatencyMs: 0.2, unsyncedSurvivalRate: 0.5 },
      }, (context) => {
        const runtime = { ...RAFT_RUNTIME_DEFAULTS, ...options.raftRuntime };
        const core = ConsistentCore.open({ id, voters: this.ids,
          raft: { ...RAFT_DEFAULTS_LOCAL, ...options.raft }, kv: KV_STORE_DEFAULTS,
          lease: options.lease ?? CORE_LEASE, raftRuntime: runtime,
          ...(options.autoCompaction === undefined ? {}
            : { autoCompaction: options.autoCompaction }) },
        { ...context, logger: SILENT_LOGGER });
        return { core, halt: () => core.stop() };
      }));
    }
  }

  core(id: NodeId): ConsistentCore {
    const core = this.hosts.get(id)?.process?.core;
    assert.ok(core !== undefined, `${id} is down`);
    return core;
  }

  get nowMs(): number {
    return this.scheduler.nowMs;
  }

  leader(): NodeId | undefined {
    return this.ids.find((id) => this.hosts.get(id)?.process?.core.leases.leaderTerm !== undefined
      && this.hosts.get(id)?.process?.core.status().role === 'leader');
  }

  /** Runs until a member leads and committed its first entry, then a little more. */
  elect(): NodeId {
    this.scheduler.runUntil(this.nowMs + 5000, () => {
      const id = this.leader();
      return id !== undefined
        && this.core(id).status().commitIndex === this.core(id).status().lastIndex;
    });
    const id = this.leader();
    assert.ok(id !== undefined, 'no leader');
    this.run(100);
    return id;
  }

  run(ms: number): void {
    this.scheduler.runUntil(this.nowMs + ms);
  }

  /** Calls `start` on member `id` and runs virtual time until its callback. */
  call<T>(id: NodeId, start: (core: ConsistentCore, done: (value: T) => void) => void): T {
    let result: { value: T } | undefined;
    this.hosts.get(id)?.submit((p) => start(p.core, (value) => {
      result = { value };
    }));
    this.scheduler.runUntil(this.nowMs + 5000, () => result !== undefined);
    assert.ok(result !== undefined, 'no answer in 5 s');
    return result.value;
  }

  write(id: NodeId, write: Unstamped<KvWrite>): WriteOutcome {
    return this.writeAs(id, write, 'test', ++this.sequence);
  }

  /** A write stamped with the given client id and sequence (a retry when they repeat). */
  writeAs(id: NodeId, write: Unstamped<KvWrite>, clientId: string, sequence: number): WriteOutcome {
    const stamped = { ...write, clientId, sequence } as KvWrite;
    return this.call(id, (core, done) => core.write(stamped, done));
  }

  keepAlive(id: NodeId, leaseId: number): LeaseOutcome<LeaseStatus> {
    return this.call(id, (core, done) => core.keepAlive(leaseId, done));
  }

  grant(id: NodeId, ttlMs: number): number {
    const outcome = this.write(id, { kind: 'lease-grant', ttlMs });
    assert.equal(outcome.kind, 'applied', JSON.stringify(outcome));
    const result = outcome.kind === 'applied' ? outcome.result : undefined;
    assert.equal(result?.kind, 'lease-grant');
    return (result as { leaseId: number }).leaseId;
  }
}
