/**
 * Every benchmark suite by name. A suite still to be written is listed with what it will
 * measure, so `--help` shows the whole plan and the harness refuses it by name.
 */
import type { Suite } from '../lib/context.js';
import { failoverSuite } from './failover.js';
import { putSuite } from './put.js';

export const SUITES: readonly Suite[] = [putSuite, failoverSuite];

/** Suites the benchmark issue plans for later, with what each will measure. */
export const LATER_SUITES: Readonly<Record<string, string>> = Object.freeze({
  read: 'linearizable and serializable range reads, closed loop (not written yet)',
  lease: 'lease grant/keep-alive rate and expiry accuracy (not written yet)',
  idle: 'CPU and memory of an idle cluster (not written yet)',
  gossip: 'SWIM membership: detection and convergence time, bandwidth (not written yet)',
});
