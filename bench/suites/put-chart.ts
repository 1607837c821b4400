/**
 * The put suite's chart: three panels side by side (throughput, p99 latency, server CPU per
 * put), one bar per system at each number of requests in flight.
 */
import type { EChartsOption } from 'echarts';
import { renderSvg, SYSTEM_COLOURS } from '../lib/chart.js';
import { SYSTEM_NAMES } from '../lib/wire.js';
import type { PutLevel, PutRuns } from './put.js';

interface Panel {
  readonly title: string;
  readonly pick: (level: PutLevel) => number;
}

const PANELS: readonly Panel[] = [
  { title: 'throughput (ops/s, higher is better)', pick: (l) => l.opsPerS },
  { title: 'latency p99 (ms, lower is better)', pick: (l) => l.latency.p99Ms },
  { title: 'server CPU per put (µs, all 3 members)', pick: (l) => l.serverCpuUsPerOp },
];

const WIDTH = 1260;
const HEIGHT = 440;

export function putChart(runs: PutRuns): string {
  const systems = SYSTEM_NAMES.filter((s) => runs[s] !== undefined);
  const inflight = [...new Set(systems.flatMap((s) => runs[s]!.map((l) => l.inflight)))];
  const panelWidthPct = 100 / PANELS.length;
  const option: EChartsOption = {
    title: [
      {
        text: 'put: 8 B keys / 100k, 256 B values, 3 members on loopback, fsync on',
        left: 'center', top: 6,
      },
      ...PANELS.map((p, i) => ({
        text: p.title, left: `${i * panelWidthPct + panelWidthPct / 2}%`, top: 44,
        textAlign: 'center' as const,
        textStyle: { fontSize: 13, fontWeight: 'normal' as const },
      })),
    ],
    legend: { top: 410, itemGap: 30, data: systems },
    grid: PANELS.map((_, i) => ({
      left: `${i * panelWidthPct + 5}%`, width: `${panelWidthPct - 8}%`, top: 90, bottom: 70,
    })),
    xAxis: PANELS.map((_, i) => ({
      type: 'category' as const, gridIndex: i, data: inflight.map(String), name: 'in flight',
      nameLocation: 'middle' as const, nameGap: 24,
    })),
    yAxis: PANELS.map((_, i) => ({ type: 'value' as const, gridIndex: i })),
    series: PANELS.flatMap((panel, i) => systems.map((system) => ({
      type: 'bar' as const, name: system, xAxisIndex: i, yAxisIndex: i,
      color: SYSTEM_COLOURS[system],
      label: {
        show: true, position: 'top' as const, fontSize: 10, textBorderWidth: 0,
        formatter: (p: { value: unknown }) => short(p.value),
      },
      data: inflight.map((n) => {
        const level = runs[system]!.find((l) => l.inflight === n);
        return level === undefined ? 0 : round(panel.pick(level));
      }),
    }))),
  };
  return renderSvg(option, WIDTH, HEIGHT);
}

function round(value: number): number {
  return Number.isFinite(value) ? Number(value.toPrecision(3)) : 0;
}

function short(value: unknown): string {
  const n = Number(value);
  if (!Number.isFinite(n)) return '';
  return n >= 10_000 ? `${Number((n / 1000).toPrecision(3))}k` : String(n);
}
