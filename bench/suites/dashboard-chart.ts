/**
 * The dashboard suite's chart: each member's CPU with no page and with one page open (the
 * difference is the feed's cost), and the page's longest main-thread task and longest gap
 * between frames in each round, against the 100 ms line of the goal.
 */
import { barPanelsSvg } from '../lib/bar-panels.js';
import type { DashboardFigures } from './dashboard.js';

const NO_PAGE = 'no page open';
const PAGE = 'one page open (on the leader)';

export function dashboardChart(f: DashboardFigures): string {
  const roundNames = f.pages.map((_, i) => `round ${i + 1}`);
  return barPanelsSvg({
    title: 'What the dashboard costs',
    subtitle: `${f.members} members, ${f.leases} leases, ${Math.round(f.putsPerSDone)} puts/s ` +
      `(${f.putsPerSAsked} asked); medians of ${f.rounds} rounds of ${f.windowMs / 1000} s`,
    series: [{ name: NO_PAGE, colour: '#9aa5b1' }, { name: PAGE, colour: '#3b6fd8' }],
    panels: [
      {
        title: 'CPU of each member, % of a core (lower is better)',
        categories: f.cost.map((c) => `${c.name}\n${c.role}`),
        values: {
          [NO_PAGE]: f.cost.map((c) => c.cpuPercentNoPage),
          [PAGE]: f.cost.map((c) => c.cpuPercentWithPage),
        },
      },
      {
        title: 'page: longest task | frame gap, ms (goal < 100)',
        categories: roundNames.flatMap((r) => [`${r}\ntask`, `${r}\nframe gap`]),
        values: {
          [PAGE]: f.pages.flatMap((p) => [p.trace.longestTaskMs, p.probe.longestFrameGapMs]),
        },
      },
    ],
    width: 1100,
  });
}
