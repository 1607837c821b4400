/**
 * Throughput: puts, reads and keep-alives per second over the cluster (each member counts
 * what it served), and their p99 latency (the worst member's), for the last five minutes.
 * Charts by uPlot (small, fast on canvas; docs/dashboard.md says why).
 */
import uPlot from 'uplot';
import { h } from './dom.js';
import type { ClusterState } from './state.js';

type Series = [number[], number[], number[], number[]];

export class ThroughputTab {
  private rateChart: uPlot | undefined;
  private latencyChart: uPlot | undefined;

  constructor(private readonly panel: Element) {}

  render(state: ClusterState): void {
    const { rates, p99 } = seriesOf(state);
    const width = Math.max(400, Math.min(1100, this.panel.clientWidth - 20));
    if (this.rateChart === undefined) {
      this.panel.append(h('h3', {}, 'Requests per second'));
      this.rateChart = new uPlot(chartOptions(width, 'per second'), rates,
        this.panel.appendChild(h('div.chart', { 'data-testid': 'rates-chart' })));
      this.panel.append(h('h3', {}, 'p99 latency (ms)'));
      this.latencyChart = new uPlot(chartOptions(width, 'ms'), p99,
        this.panel.appendChild(h('div.chart')));
      return;
    }
    this.rateChart.setData(rates);
    this.latencyChart?.setData(p99);
  }
}

function chartOptions(width: number, unit: string): uPlot.Options {
  return {
    width, height: 220,
    scales: { x: { time: true } },
    axes: [{}, { label: unit }],
    series: [{}, { label: 'puts', stroke: '#2563eb' }, { label: 'reads', stroke: '#16a34a' },
      { label: 'keep-alives', stroke: '#d97706' }],
  };
}

/** Per-second sums over members (rates) and maxima (p99), aligned on whole seconds. */
function seriesOf(state: ClusterState): { rates: Series; p99: Series } {
  const bySecond = new Map<number, { put: number; read: number; keepalive: number;
    pPut: number; pRead: number; pKeep: number }>();
  const since = Date.now() / 1000 - 300;
  for (const view of state.members.values()) {
    for (const r of view.rates) {
      const second = Math.round(r.atMs / 1000);
      if (second < since) continue;
      const slot = bySecond.get(second) ?? { put: 0, read: 0, keepalive: 0, pPut: 0, pRead: 0,
        pKeep: 0 };
      slot.put += r.perS.put;
      slot.read += r.perS.read;
      slot.keepalive += r.perS.keepalive;
      slot.pPut = Math.max(slot.pPut, r.msP99.put ?? 0);
      slot.pRead = Math.max(slot.pRead, r.msP99.read ?? 0);
      slot.pKeep = Math.max(slot.pKeep, r.msP99.keepalive ?? 0);
      bySecond.set(second, slot);
    }
  }
  const seconds = [...bySecond.keys()].sort((a, b) => a - b);
  const col = (f: (s: NonNullable<ReturnType<typeof bySecond.get>>) => number): number[] =>
    seconds.map((s) => f(bySecond.get(s)!));
  return {
    rates: [seconds, col((s) => s.put), col((s) => s.read), col((s) => s.keepalive)],
    p99: [seconds, col((s) => s.pPut), col((s) => s.pRead), col((s) => s.pKeep)],
  };
}
