/**
 * @packageDocumentation
 * The consistent core on one member, free of I/O of its own: a RaftRuntime over the write-ahead
 * log whose state machine is the revisioned key-value store with leases (src/core/kv), and the
 * leader's LeaseTracker. The server (src/server) puts HTTP in front of it over TCP; the
 * simulator (src/sim/scenarios/lease) runs the very same class on simulated hosts, storage and
 * network, so what the lease scenario proves is what ships.
 *
 * Invariants: every answer says applied, failed (definitely not applied) or unknown (maybe);
 * only the leader expires leases, and only through the log (docs/leases.md).
 *
 * @example
 * ```ts
 * const core = ConsistentCore.open(options, { clock, timer, transport, storage, random, logger });
 * core.write({ kind: 'put', key: 'k', value: 'v', clientId: 'c1', sequence: 1 },
 *   (outcome) => console.log(outcome.kind));
 * ```
 */
export * from './consistent-core.js';
