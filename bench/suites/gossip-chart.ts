/**
 * The gossip suite's chart: for each condition (calm, storm), Lifeguard on and off side by
 * side: crash detection and dissemination times, false deaths per member-hour, and the load
 * per member.
 */
import { barPanelsSvg } from '../lib/bar-panels.js';
import { SYSTEM_COLOURS } from '../lib/chart.js';
import { GOSSIP_CONDITIONS, type GossipRun } from './gossip.js';

const SERIES = [
  { name: 'Lifeguard on', colour: SYSTEM_COLOURS.conclave, lifeguard: true },
  { name: 'Lifeguard off', colour: '#9aa5b1', lifeguard: false },
];

export function gossipChart(runs: readonly GossipRun[]): string {
  const conditions = GOSSIP_CONDITIONS.map((c) => c.name);
  const run = (condition: string, lifeguard: boolean): GossipRun | undefined =>
    runs.find((r) => r.condition === condition && r.lifeguard === lifeguard);
  const times = conditions.flatMap((c) => [
    { label: `${c}\nfirst dead`, condition: c, pick: (r: GossipRun) => r.firstDeadMsP50 },
    { label: `${c}\neveryone`, condition: c, pick: (r: GossipRun) => r.everyoneDeadMsP50 },
  ]);
  const perCondition = (pick: (r: GossipRun) => number) => Object.fromEntries(SERIES.map((s) =>
    [s.name, conditions.map((c) => {
      const r = run(c, s.lifeguard);
      return r === undefined ? undefined : pick(r);
    })]));
  const members = runs[0]?.members ?? 0;
  return barPanelsSvg({
    title: `gossip: ${members} simulated members (SWIM, profile local), same faults per seed`,
    subtitle: GOSSIP_CONDITIONS.map((c) => `${c.name} (seed ${c.seed}): ${c.faults}`)
      .join('\n'),
    series: SERIES,
    panels: [
      {
        title: 'crash → first \'dead\' / everyone holds it dead\n(p50, s, lower is better)',
        categories: times.map((t) => t.label),
        values: Object.fromEntries(SERIES.map((s) => [s.name, times.map((t) => {
          const r = run(t.condition, s.lifeguard);
          return r === undefined ? undefined : t.pick(r) / 1000;
        })])),
      },
      { title: 'false \'dead\' declarations\n(per member-hour, lower is better)',
        categories: conditions,
        values: perCondition((r) => r.falseDeadDeclarationsPerMemberHour) },
      { title: 'messages per member per s', categories: conditions,
        values: perCondition((r) => r.messagesPerMemberPerS) },
      { title: 'bytes per member per s', categories: conditions,
        values: perCondition((r) => r.bytesPerMemberPerS) },
    ],
    width: 1500,
    height: 500,
  });
}
