/**
 * The failover suite's chart: for each timing setting, each system's kills (or pauses) as dots,
 * with a bar at the median and a whisker from min to max.
 */
import type { EChartsOption } from 'echarts';
import { renderSvg, SYSTEM_COLOURS } from '../lib/chart.js';
import { SYSTEM_NAMES } from '../lib/wire.js';
import type { FailoverFault } from '../lib/context.js';
import { FAILOVER_TIMINGS, FAULT_WORDS, type FailoverRun } from './failover.js';

const WIDTH = 900;
const HEIGHT = 520;

export function failoverChart(runs: readonly FailoverRun[], fault: FailoverFault): string {
  const { signal, round: roundWord } = FAULT_WORDS[fault];
  const systems = SYSTEM_NAMES.filter((s) => runs.some((r) => r.system === s));
  // One category per (timing, system), so median bar, whisker and dots share one x position.
  const cells = FAILOVER_TIMINGS.flatMap((timing) => systems.map((system) => ({
    timing, system, run: runs.find((r) => r.system === system && r.timing === timing),
  })));
  const option: EChartsOption = {
    title: {
      text: `failover: ${signal} the leader → first write acknowledged through a survivor`,
      subtext: `bar: median; whisker: min–max; dots: each ${roundWord} ` +
        '(3 members on loopback, fsync on)',
      left: 'center', top: 6,
    },
    // Legend entries only: empty line series do not take space from the bars.
    legend: { bottom: 8, itemGap: 30, data: systems.map((name) => ({ name, icon: 'rect' })) },
    grid: { left: 70, right: 30, top: 90, bottom: 100 },
    xAxis: {
      type: 'category', axisLabel: { interval: 0, lineHeight: 16 },
      data: cells.map((c) =>
        `${c.system}\nheartbeat ${c.timing.heartbeatMs} ms\n` +
        `election ${c.timing.electionTimeoutMs} ms`),
    },
    yAxis: { type: 'value', name: 'ms', nameLocation: 'middle', nameGap: 48 },
    series: [
      ...systems.map((name) => ({
        type: 'line' as const, name, color: SYSTEM_COLOURS[name], data: [],
      })),
      {
        type: 'bar' as const, barWidth: '45%',
        label: { show: true, position: 'insideBottom' as const, color: '#ffffff', fontSize: 12 },
        data: cells.map((c) => ({
          value: round(c.run?.spread.medianMs), itemStyle: { color: SYSTEM_COLOURS[c.system] },
        })),
      },
      {
        type: 'boxplot' as const, boxWidth: [1, 1],
        itemStyle: { color: '#ffffff', borderColor: '#222222' },
        data: cells.map((c) => {
          const median = round(c.run?.spread.medianMs);
          return [round(c.run?.spread.minMs), median, median, median, round(c.run?.spread.maxMs)];
        }),
      },
      {
        type: 'scatter' as const, symbolSize: 6, itemStyle: { color: '#222222', opacity: 0.6 },
        data: cells.flatMap((c, i) => (c.run?.failoverMs ?? []).map((ms) => [i, Math.round(ms)])),
      },
    ],
  };
  return renderSvg(option, WIDTH, HEIGHT);
}

function round(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) ? Math.round(value) : 0;
}
