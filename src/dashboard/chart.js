// Step-series charts on uPlot: collapse-warning markers, threshold lines, seed bands (min–max)
// and display smoothing drawn over the plot; steps on the x axis are whole numbers.
import uPlot from 'uplot';
import { h, number } from './dom.js';

export const PALETTE = ['#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#db2777', '#65a30d', '#475569'];
/** Tick spacings of the step axis: whole steps only, so a 5-step run is not labelled 0.5, 1.5, … */
const STEP_INCREMENTS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000];

/** Auto range with 10% headroom, stretched to show `extra` values (thresholds); a flat series gets a band around its value. */
function rangeWith(extra) {
  return (_u, dataMin, dataMax) => {
    if (dataMin === null || dataMax === null) return extra.length ? [Math.min(0, ...extra), Math.max(...extra) * 1.2] : [0, 1];
    const min = Math.min(dataMin, ...extra);
    const max = Math.max(dataMax, ...extra);
    if (min === max) {
      const pad = Math.abs(min) * 0.5 || 0.5;
      return [min - pad, max + pad];
    }
    return uPlot.rangeNum(min, max, 0.1, true);
  };
}

/**
 * Exponential moving average for display, debiased as TensorBoard's smoothing is: s_t = w·s_{t−1}
 * + (1 − w)·x_t, divided by 1 − w^t, so the first points are not pulled towards 0. Gaps (null)
 * stay gaps and do not reset the average; w = 0 returns the values unchanged.
 */
export function smooth(values, weight) {
  if (!(weight > 0)) return values;
  let average = 0;
  let count = 0;
  return values.map((v) => {
    if (v === null || !Number.isFinite(v)) return v;
    average = weight * average + (1 - weight) * v;
    count++;
    return average / (1 - weight ** count);
  });
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
   * @param {{ title: string, series: {name: string, label: string, color?: string, band?: {lower: string, upper: string}}[], unit?: string, range?: [number, number], height?: number, note?: string, xLabel?: string, thresholds?: {value: number, label: string}[] }} options
   * A series with `band` is drawn as its mean line over the area between its lower and upper series (the seeds' min–max).
   */
  constructor(host, options) {
    this.options = options;
    this.series = options.series;
    this.rows = [];
    this.warnings = [];
    this.smoothing = 0;
    this.thresholds = options.thresholds ?? [];
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

  /** Horizontal reference lines (a detector's threshold), dashed, with their label. */
  setThresholds(thresholds) {
    const same = JSON.stringify(thresholds) === JSON.stringify(this.thresholds);
    this.thresholds = thresholds;
    this.element.dataset.thresholds = JSON.stringify(thresholds.map((t) => t.value));
    if (!same) this.destroyPlot();
    this.draw();
  }

  /** Display smoothing, 0 (raw) to 0.99: the drawn lines, not the data (see `smooth`). */
  setSmoothing(weight) {
    this.smoothing = weight;
    this.element.dataset.smoothing = String(weight);
    this.draw();
  }

  /** The plotted columns: x, then per series its line, then each band's lower and upper (never smoothed). */
  data() {
    const bands = this.series.filter((s) => s.band);
    const names = [...this.series.map((s) => s.name), ...bands.flatMap((s) => [s.band.lower, s.band.upper])];
    const rows = this.rows.filter((row) => names.some((name) => Number.isFinite(row.metrics[name])));
    const column = (name) => rows.map((r) => (Number.isFinite(r.metrics[name]) ? r.metrics[name] : null));
    return [rows.map((r) => r.step), ...this.series.map((s) => smooth(column(s.name), this.smoothing)), ...bands.flatMap((s) => [column(s.band.lower), column(s.band.upper)])];
  }

  draw() {
    const data = this.data();
    this.element.dataset.points = JSON.stringify(Object.fromEntries(this.series.map((s, i) => [s.name, data[i + 1].filter((v) => v !== null).length])));
    this.element.dataset.thresholds = JSON.stringify(this.thresholds.map((t) => t.value));
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
      ...this.thresholds.map((t) => h('span', { class: 'legend-item threshold', dataset: { threshold: t.value } }, h('span', { class: 'swatch dashed' }), t.label)),
    );
  }

  color(i) {
    return this.series[i].color ?? PALETTE[i % PALETTE.length];
  }

  config() {
    const grid = { stroke: '#e2e8f0', width: 1 };
    const axis = { stroke: '#64748b', grid, ticks: { stroke: '#cbd5e1', width: 1 }, font: '11px system-ui, sans-serif' };
    const bands = this.series.map((s, i) => ({ s, i })).filter(({ s }) => s.band);
    const lowerOf = (k) => 1 + this.series.length + 2 * k;
    return {
      ...this.size(),
      legend: { show: false },
      cursor: { drag: { x: true, y: false }, points: { size: 6 } },
      scales: { x: { time: false }, y: { range: this.options.range ?? rangeWith(this.thresholds.map((t) => t.value)) } },
      axes: [
        {
          ...axis,
          label: this.options.xLabel ?? 'step',
          labelSize: 16,
          labelFont: '11px system-ui, sans-serif',
          incrs: STEP_INCREMENTS,
          // Whole steps only; the ticks drawn are kept on the element, so what is shown can be checked.
          values: (_u, ticks) => {
            const whole = ticks.map((t) => (Number.isInteger(t) ? String(t) : ''));
            this.element.dataset.xTicks = JSON.stringify(ticks.filter((t) => Number.isInteger(t)));
            return whole;
          },
        },
        { ...axis, size: 56, values: (_u, ticks) => ticks.map((t) => number(t, 3)) },
      ],
      series: [
        { label: 'step' },
        ...this.series.map((s, i) => ({ label: s.label, stroke: this.color(i), width: 1.75, spanGaps: true, points: { show: (u) => u.data[0].length < 40, size: 4 } })),
        ...bands.flatMap(({ s }) => [
          { label: `${s.label} min`, stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } },
          { label: `${s.label} max`, stroke: 'transparent', width: 0, spanGaps: true, points: { show: false } },
        ]),
      ],
      bands: bands.map(({ i }, k) => ({ series: [lowerOf(k) + 1, lowerOf(k)], fill: `${this.color(i)}26` })),
      hooks: { draw: [(u) => this.drawThresholds(u), (u) => this.drawWarnings(u)] },
    };
  }

  /** Dashed horizontal lines at each threshold, labelled at the right. */
  drawThresholds(u) {
    const { ctx } = u;
    const dpr = devicePixelRatio || 1;
    for (const threshold of this.thresholds) {
      const y = u.valToPos(threshold.value, 'y', true);
      if (!Number.isFinite(y)) continue;
      ctx.save();
      ctx.strokeStyle = '#dc2626';
      ctx.globalAlpha = 0.8;
      ctx.lineWidth = dpr;
      ctx.setLineDash([6 * dpr, 4 * dpr]);
      ctx.beginPath();
      ctx.moveTo(u.bbox.left, y);
      ctx.lineTo(u.bbox.left + u.bbox.width, y);
      ctx.stroke();
      ctx.fillStyle = '#dc2626';
      ctx.font = `${11 * dpr}px system-ui, sans-serif`;
      ctx.textAlign = 'right';
      ctx.fillText(threshold.label, u.bbox.left + u.bbox.width - 4 * dpr, y - 4 * dpr);
      ctx.restore();
    }
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
