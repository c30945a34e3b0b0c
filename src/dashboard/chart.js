// Step-series charts on uPlot, with collapse-warning markers drawn over the plot.
import uPlot from 'uplot';
import { h, number } from './dom.js';

export const PALETTE = ['#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#db2777', '#65a30d', '#475569'];
/** Auto range with 10% headroom; a flat series gets a band around its value instead of 0–100. */
function flatSafeRange(_u, min, max) {
  if (min === null || max === null) return [0, 1];
  if (min === max) {
    const pad = Math.abs(min) * 0.5 || 0.5;
    return [min - pad, max + pad];
  }
  return uPlot.rangeNum(min, max, 0.1, true);
}

const SEVERITY_COLOR = { info: '#64748b', warning: '#d97706', critical: '#dc2626' };

/**
 * One chart of step series: `series` is [{ name, label }], `rows` the API's [{ step, metrics }].
 * Each series keeps its own points (steps where it has no value are gaps), and the container
 * records how many points each series has (data-points), so what is drawn can be checked.
 */
export class StepChart {
  /**
   * @param {HTMLElement} host
   * @param {{ title: string, series: {name: string, label: string, color?: string}[], unit?: string, range?: [number, number], height?: number, note?: string }} options
   */
  constructor(host, options) {
    this.options = options;
    this.series = options.series;
    this.rows = [];
    this.warnings = [];
    this.plotHost = h('div', { class: 'chart-plot' });
    this.legend = h('div', { class: 'chart-legend' });
    this.element = h(
      'section',
      { class: 'card chart-card', dataset: { chart: options.title } },
      h('header', { class: 'chart-header' }, h('h3', {}, options.title), options.note ? h('span', { class: 'chart-note' }, options.note) : null),
      this.plotHost,
      this.legend,
    );
    host.append(this.element);
    this.resize = new ResizeObserver(() => this.plot?.setSize(this.size()));
    this.resize.observe(this.plotHost);
  }

  size() {
    return { width: Math.max(240, this.plotHost.clientWidth), height: this.options.height ?? 220 };
  }

  /** Replaces the series shown (e.g. when a new evaluation series appears). */
  setSeries(series) {
    const same = series.length === this.series.length && series.every((s, i) => s.name === this.series[i].name);
    this.series = series;
    if (!same) this.destroyPlot();
    this.draw();
  }

  setRows(rows) {
    this.rows = rows;
    this.draw();
  }

  setWarnings(warnings) {
    this.warnings = warnings;
    this.plot?.redraw(false, false);
  }

  data() {
    const rows = this.rows.filter((row) => this.series.some((s) => Number.isFinite(row.metrics[s.name])));
    return [rows.map((r) => r.step), ...this.series.map((s) => rows.map((r) => (Number.isFinite(r.metrics[s.name]) ? r.metrics[s.name] : null)))];
  }

  draw() {
    const data = this.data();
    this.element.dataset.points = JSON.stringify(Object.fromEntries(this.series.map((s, i) => [s.name, data[i + 1].filter((v) => v !== null).length])));
    this.renderLegend(data);
    if (data[0].length === 0) {
      this.destroyPlot();
      this.plotHost.replaceChildren(h('div', { class: 'chart-empty', style: `height:${this.size().height}px` }, 'no data yet'));
      return;
    }
    if (this.plot) {
      this.plot.setData(data);
      return;
    }
    this.plotHost.replaceChildren();
    this.plot = new uPlot(this.config(), data, this.plotHost);
  }

  renderLegend(data) {
    this.legend.replaceChildren(
      ...this.series.map((s, i) => {
        const values = data[i + 1].filter((v) => v !== null);
        return h(
          'span',
          { class: 'legend-item', dataset: { series: s.name } },
          h('span', { class: 'swatch', style: `background:${this.color(i)}` }),
          s.label,
          h('span', { class: 'legend-value' }, values.length ? number(values[values.length - 1]) : '—'),
        );
      }),
    );
  }

  color(i) {
    return this.series[i].color ?? PALETTE[i % PALETTE.length];
  }

  config() {
    const grid = { stroke: '#e2e8f0', width: 1 };
    const axis = { stroke: '#64748b', grid, ticks: { stroke: '#cbd5e1', width: 1 }, font: '11px system-ui, sans-serif' };
    return {
      ...this.size(),
      legend: { show: false },
      cursor: { drag: { x: true, y: false }, points: { size: 6 } },
      scales: { x: { time: false }, y: { range: this.options.range ?? flatSafeRange } },
      axes: [
        { ...axis, label: 'step', labelSize: 16, labelFont: '11px system-ui, sans-serif' },
        { ...axis, size: 56, values: (_u, ticks) => ticks.map((t) => number(t, 3)) },
      ],
      series: [
        { label: 'step' },
        ...this.series.map((s, i) => ({ label: s.label, stroke: this.color(i), width: 1.75, spanGaps: true, points: { show: (u) => u.data[0].length < 40, size: 4 } })),
      ],
      hooks: { draw: [(u) => this.drawWarnings(u)] },
    };
  }

  /** Vertical marks at warning steps (canvas), with DOM markers carrying the details. */
  drawWarnings(u) {
    const { ctx } = u;
    const { top, height } = u.bbox;
    const dpr = devicePixelRatio || 1;
    u.over.querySelectorAll('.warning-marker').forEach((m) => m.remove());
    for (const warning of this.warnings) {
      const x = u.valToPos(warning.step, 'x', true);
      if (!Number.isFinite(x) || x < u.bbox.left - 1 || x > u.bbox.left + u.bbox.width + 1) continue;
      ctx.save();
      ctx.strokeStyle = SEVERITY_COLOR[warning.severity] ?? SEVERITY_COLOR.warning;
      ctx.globalAlpha = 0.7;
      ctx.lineWidth = 1.5 * dpr;
      ctx.setLineDash([4 * dpr, 3 * dpr]);
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
      ctx.restore();
      const left = u.valToPos(warning.step, 'x');
      u.over.append(
        h('div', {
          class: `warning-marker severity-${warning.severity}`,
          style: `left:${left}px`,
          dataset: { step: warning.step, detector: warning.detector },
          title: `step ${warning.step} · ${warning.severity} · ${warning.detector}\n${warning.message}`,
        }),
      );
    }
  }

  destroyPlot() {
    this.plot?.destroy();
    this.plot = undefined;
  }

  destroy() {
    this.resize.disconnect();
    this.destroyPlot();
    this.element.remove();
  }
}
