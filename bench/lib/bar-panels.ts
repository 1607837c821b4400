/**
 * A row of bar-chart panels side by side, each with its own categories and y axis, one bar
 * per series (a system, or a setting) in each category, the value written on top. The read,
 * lease, idle and gossip charts are all this shape.
 */
import type { EChartsOption } from 'echarts';
import { renderSvg } from './chart.js';

export interface BarSeries {
  readonly name: string;
  readonly colour: string;
}

export interface BarPanel {
  /** Shown above the panel: what is measured, its unit, and which way is better. */
  readonly title: string;
  readonly categories: readonly string[];
  /** By series name: one value per category (NaN or undefined: no bar). */
  readonly values: Readonly<Record<string, readonly (number | undefined)[]>>;
}

export interface BarPanelsChart {
  readonly title: string;
  readonly subtitle?: string;
  readonly series: readonly BarSeries[];
  readonly panels: readonly BarPanel[];
  /** Unit: px. Default: 420 per panel. */
  readonly width?: number;
  /** Unit: px. Default: 460. */
  readonly height?: number;
}

export function barPanelsSvg(chart: BarPanelsChart): string {
  const { panels, series } = chart;
  const width = chart.width ?? 420 * panels.length;
  const height = chart.height ?? 460;
  const panelWidthPct = 100 / panels.length;
  // Each subtitle line past the first pushes the panels down by a line.
  const shiftPx = 16 * Math.max(0, (chart.subtitle ?? '').split('\n').length - 1);
  const option: EChartsOption = {
    title: [
      { text: chart.title, subtext: chart.subtitle ?? '', left: 'center', top: 6 },
      ...panels.map((p, i) => ({
        text: p.title, left: `${i * panelWidthPct + panelWidthPct / 2}%`, top: 62 + shiftPx,
        textAlign: 'center' as const,
        textStyle: { fontSize: 13, fontWeight: 'normal' as const },
      })),
    ],
    legend: { bottom: 8, itemGap: 30, data: series.map((s) => s.name) },
    grid: panels.map((_, i) => ({
      left: `${i * panelWidthPct + 5}%`, width: `${panelWidthPct - 8}%`, top: 110 + shiftPx,
      bottom: 80,
    })),
    xAxis: panels.map((p, i) => ({
      type: 'category' as const, gridIndex: i, data: [...p.categories],
      axisLabel: { interval: 0, fontSize: 11, lineHeight: 14 },
    })),
    yAxis: panels.map((_, i) => ({ type: 'value' as const, gridIndex: i })),
    series: panels.flatMap((panel, i) => series.map((s) => ({
      type: 'bar' as const, name: s.name, xAxisIndex: i, yAxisIndex: i, color: s.colour,
      label: {
        show: true, position: 'top' as const, fontSize: 10, textBorderWidth: 0,
        formatter: (p: { value: unknown }) => short(p.value),
      },
      data: panel.categories.map((_, c) => round(panel.values[s.name]?.[c])),
    }))),
  };
  return renderSvg(option, width, height);
}

function round(value: number | undefined): number | string {
  // '-' is ECharts' "no value": no bar and no label.
  return value !== undefined && Number.isFinite(value) ? Number(value.toPrecision(3)) : '-';
}

function short(value: unknown): string {
  const n = Number(value);
  if (!Number.isFinite(n)) return '';
  return n >= 10_000 ? `${Number((n / 1000).toPrecision(3))}k` : String(n);
}
