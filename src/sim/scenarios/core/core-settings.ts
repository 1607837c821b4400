/**
 * The core scenario's flags and what each seed draws: the lease scenario's draw (Raft and lease
 * timing, network, nemesis plan, transfers, client clocks) with snapshots always on, no
 * election or lock clients, and the clients split into KV clients, lease clients and watchers.
 */
import { assert } from '../../../core/assert.js';
import { randomFloat } from '../../../core/random.js';
import { CORE_NO_MUTANTS, type CoreMutants } from '../../../runtime/core/index.js';
import type { Prng } from '../../prng.js';
import { mutantFlagDescription } from '../../mutant-catches.js';
import type { MutantCatch, ScenarioFlag, ScenarioOptions } from '../../scenario.js';
import { drawLeaseSettings, type LeaseSettings } from '../lease/lease-settings.js';

/** The planted server-path bugs (CoreMutants) the scenario knows. */
export const CORE_MUTANT_NAMES: readonly string[] = Object.keys(CORE_NO_MUTANTS);

/**
 * Where each server-path mutant is caught: measured on 2026-12-02 with `conclave sim --scenario
 * core --seed 1 --seeds N --mutant M` (defaults otherwise, stale-leader faults and one reader
 * on every seed), the seeds that failed and the checker that fired first on the first of them.
 * test/sim/mutant-catches.test.ts replays it.
 */
export const CORE_MUTANT_CATCHES: Readonly<Record<keyof CoreMutants, MutantCatch>> = {
  retryReapplied: { scenario: 'core', flags: {}, first: 1, count: 3, caughtOn: [2],
    checker: 'linearizability' },
  watchSkipsEvent: { scenario: 'core', flags: {}, first: 1, count: 3, caughtOn: [1, 2, 3],
    checker: 'watch-complete' },
  readsWithoutReadIndex: { scenario: 'core', flags: {}, first: 1, count: 10,
    caughtOn: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], checker: 'linearizability',
    note: 'a reader left with a stale leader (the stale-leader faults, nemesis.ts) reads a '
      + 'value older than a write the new leader acknowledged before the read began; before '
      + 'those faults: 0 of seeds 1–30' },
};

export const CORE_FLAGS: readonly ScenarioFlag[] = [
  { name: 'nodes', kind: 'integer', description: 'consistent-core members', defaultValue: 5,
    min: 3, max: 7 },
  { name: 'kv-clients', kind: 'integer', description: 'simulated clients issuing puts, '
    + 'deletes, compare-and-swaps and reads (two calls in flight each)', defaultValue: 4, min: 1,
  max: 16 },
  { name: 'readers', kind: 'integer', description: 'simulated clients issuing only '
    + 'linearizable gets (two in flight each); each stale-leader fault leaves them reaching '
    + 'the old leader only', defaultValue: 1, min: 0, max: 16 },
  { name: 'lease-clients', kind: 'integer', description: 'simulated clients granting, keeping '
    + 'and ending leases', defaultValue: 2, min: 0, max: 16 },
  { name: 'watchers', kind: 'integer', description: 'simulated clients watching the KV keys, '
    + 'resuming now and then', defaultValue: 3, min: 0, max: 16 },
  { name: 'safety-s', kind: 'number', description: 'simulated seconds of faults (then heal, '
    + 'and long enough for every lease to end)', defaultValue: 10, min: 1, max: 3600 },
  { name: 'snapshot-count', kind: 'integer', description: 'entries between snapshots (as '
    + '`conclave server --snapshot-count`; default: drawn from 25, 76, 241)',
  defaultValue: undefined, min: 2, max: 1_000_000 },
  { name: 'mutant', kind: 'string', description: mutantFlagDescription('server-path bug'),
    defaultValue: undefined, choices: CORE_MUTANT_NAMES },
];

export interface CoreSettings {
  readonly lease: LeaseSettings;
  readonly kvClients: number;
  /** KV clients that only issue linearizable gets (kv-workload.ts). */
  readonly readers: number;
  readonly leaseClients: number;
  readonly watchers: number;
  /** The KV workload's keys (few, so operations contend). */
  readonly keys: readonly string[];
  /** Mean time between two stale-leader faults (Nemesis.startStaleLeaders). Unit: ms. */
  readonly staleLeaderIntervalMsMean: number;
  readonly mutant: string | undefined;
}

/** The lease scenario's drawn snapshot chunk sizes, scaled up for the KV store's snapshots. */
const CHUNK_SCALE = 16;

/**
 * Every seed has stale-leader faults (nemesis.ts), one every 0.5–1.5 s on average: the leader
 * hands over and at once hears no member, while clients still reach it. It then leads in its
 * own view for up to an election timeout after its successor began to commit writes: the one
 * window in which a linearizable read answered without ReadIndex returns a stale value
 * (`--mutant readsWithoutReadIndex`). Unit: ms.
 */
const STALE_LEADER_INTERVAL_MS_MIN = 500;
const STALE_LEADER_INTERVAL_MS_SPAN = 1_000;

/** The KV keys' prefix (the watchers watch it; lease keys live elsewhere). */
export const KV_PREFIX = 'kv/';

export function drawCoreSettings(prng: Prng, options: ScenarioOptions): CoreSettings {
  const count = (name: string): number => {
    const value = options[name];
    assert(typeof value === 'number' && Number.isSafeInteger(value),
      () => `option ${name} must be an integer: ${String(value)}`);
    return value;
  };
  const kvClients = count('kv-clients');
  const readers = count('readers');
  const leaseClients = count('lease-clients');
  const watchers = count('watchers');
  const mutant = options['mutant'] === undefined ? undefined : String(options['mutant']);
  assert(mutant === undefined || CORE_MUTANT_NAMES.includes(mutant),
    () => `unknown core mutant ${String(mutant)}`);
  const drawn = drawLeaseSettings(prng, { nodes: options['nodes'],
    clients: kvClients + readers + leaseClients + watchers, 'safety-s': options['safety-s'],
    'recipe-clients': 0, snapshots: true });
  const given = options['snapshot-count'];
  const snapshots = drawn.snapshots === undefined ? undefined : {
    ...drawn.snapshots,
    // A snapshot every 8 entries spent a sixth of the run encoding ~100 KB snapshots (the
    // profile in docs/simulation.md): 25, 80 or 250 entries still compact and install often.
    entries: given === undefined ? drawn.snapshots.entries * 3 + 1 : count('snapshot-count'),
    // The KV store's snapshot is ~100 KB (the watch history is in it), the lease scenario's a
    // few hundred bytes: its 64–4096-byte chunks made one transfer ~1,700 round trips (7 s,
    // longer than the settle window). 1–64 KiB keep it 2–100 chunks: chunking, resume, loss
    // and duplicates still exercised, in under a second.
    chunkBytes: drawn.snapshots.chunkBytes * CHUNK_SCALE,
  };
  const coreMutants: CoreMutants | undefined = mutant === undefined ? undefined
    : { ...CORE_NO_MUTANTS, [mutant]: true };
  const keys = Array.from({ length: 3 }, (_, i) => `${KV_PREFIX}${i}`);
  return {
    lease: { ...drawn, snapshots, ...(coreMutants === undefined ? {} : { coreMutants }) },
    kvClients, readers, leaseClients, watchers, keys, mutant,
    staleLeaderIntervalMsMean: STALE_LEADER_INTERVAL_MS_MIN
      + randomFloat(prng) * STALE_LEADER_INTERVAL_MS_SPAN,
  };
}
