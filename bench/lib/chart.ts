/**
 * Charts as SVG, drawn by Apache ECharts' server-side renderer (no browser, no native canvas).
 * Conclave and etcd always get the same two colours, Conclave first.
 */
import * as echarts from 'echarts';
import type { SystemName } from './wire.js';

export const SYSTEM_COLOURS: Readonly<Record<SystemName, string>> = Object.freeze({
  conclave: '#3b6fb6',
  etcd: '#e07b39',
});

/** Renders an ECharts option to an SVG document of `width` × `height` pixels. */
export function renderSvg(option: echarts.EChartsOption, width: number, height: number): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    chart.setOption({ animation: false, backgroundColor: '#ffffff', ...option });
    return chart.renderToSVGString();
  } finally {
    chart.dispose();
  }
}
