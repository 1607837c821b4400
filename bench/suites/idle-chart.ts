/**
 * The idle suite's chart: each member's CPU and resident memory with no client, one bar per
 * system, leader first.
 */
import { barPanelsSvg } from '../lib/bar-panels.js';
import { SYSTEM_COLOURS } from '../lib/chart.js';
import { fmt } from '../lib/stats.js';
import { SYSTEM_NAMES } from '../lib/wire.js';
import type { IdleMember, IdleRuns } from './idle.js';

const ROLES = ['leader', 'follower', 'follower'];

export function idleChart(runs: IdleRuns): string {
  const systems = SYSTEM_NAMES.filter((s) => runs[s] !== undefined);
  const values = (pick: (m: IdleMember) => number) => Object.fromEntries(systems.map((s) =>
    [s, ROLES.map((_, i) => {
      const member = runs[s]?.members[i];
      return member === undefined ? undefined : pick(member);
    })]));
  const windowS = runs.conclave?.windowMs ?? runs.etcd?.windowMs ?? Number.NaN;
  return barPanelsSvg({
    title: 'idle: 3 members on loopback, no clients, heartbeat 100 ms',
    subtitle: `over ${fmt(windowS / 1000)} s; memory: mean of VmRSS sampled every second`,
    series: systems.map((name) => ({ name, colour: SYSTEM_COLOURS[name] })),
    panels: [
      { title: 'CPU per member (%, 100 = one core, lower is better)', categories: ROLES,
        values: values((m) => m.cpuPercent) },
      { title: 'resident memory per member (MiB, lower is better)', categories: ROLES,
        values: values((m) => m.rssMiBMean) },
    ],
    width: 1000,
  });
}
