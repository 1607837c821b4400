/**
 * Every benchmark suite by name. A suite still to be written is listed with what it will
 * measure, so `--help` shows the whole plan and the harness refuses it by name.
 */
import type { Suite } from '../lib/context.js';
import { backupSuite } from './backup.js';
import { dashboardSuite } from './dashboard.js';
import { failoverSuite } from './failover.js';
import { gossipSuite } from './gossip.js';
import { gossipProcessesSuite } from './gossip-processes.js';
import { idleSuite } from './idle.js';
import { leaseSuite } from './lease.js';
import { putSuite } from './put.js';
import { readSuite } from './read.js';
import { snapshotSuite } from './snapshot.js';
import { soakSuite } from './soak.js';
import { stallSuite } from './stall.js';

export const SUITES: readonly Suite[] = [
  putSuite, failoverSuite, readSuite, leaseSuite, idleSuite, gossipSuite, stallSuite,
  snapshotSuite, soakSuite, backupSuite, gossipProcessesSuite, dashboardSuite,
];

/** Suites planned but not written yet, with what each will measure (none at the moment). */
export const LATER_SUITES: Readonly<Record<string, string>> = Object.freeze({});
