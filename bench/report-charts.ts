/**
 * The charts of docs/results.md, as Vega-Lite specs rendered to SVG in Node (no browser): each a
 * curve per series, the mean over seeds as a line and the seeds' min–max as a band
 * (src/training/experiment/cells.ts, `band`), with a reference as a dashed rule.
 */
import { band } from '../src/training/experiment/cells';

// vega and vega-lite are CommonJS builds; their types are loose here on purpose (specs are data).
const vega = require('vega') as { View: new (runtime: unknown, options: { renderer: 'none' }) => { toSVG(): Promise<string>; finalize(): void }; parse(spec: unknown): unknown };
const vegaLite = require('vega-lite') as { compile(spec: unknown): { spec: unknown } };

/** One series of a panel: its seeds' eval curves (step → success in 0–1). */
export interface Series {
  panel: string;
  label: string;
  curves: Readonly<Record<number, number>>[];
}

/** A dashed horizontal rule in a panel, e.g. the random agent. */
export interface Rule {
  panel: string;
  label: string;
  value: number;
}

const FONT = 'Helvetica, Arial, sans-serif';
const PALETTE = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#0891b2', '#db2777', '#65a30d', '#475569'];

/** The rows Vega-Lite draws: per series and step, the mean, min and max in percent and the seeds counted. */
function rowsOf(series: readonly Series[]) {
  return series.flatMap((s) => band(s.curves).map((p) => ({ panel: s.panel, series: `${s.label} (${s.curves.length} seed${s.curves.length === 1 ? '' : 's'})`, step: p.step, mean: 100 * p.mean, min: 100 * p.min, max: 100 * p.max })));
}

/**
 * Panels side by side (one per distinct `panel`, in order), eval success (%) by RL step: each
 * series' mean line over its min–max band, and the rules dashed.
 */
export function bandChart(options: { title: string; series: readonly Series[]; rules?: readonly Rule[]; columns?: number; width?: number; height?: number }): unknown {
  const panels = [...new Set(options.series.map((s) => s.panel))];
  const labels = [...new Set(rowsOf(options.series).map((r) => r.series))];
  const color = { field: 'series', type: 'nominal', title: null, scale: { domain: labels, range: PALETTE }, legend: { orient: 'bottom', columns: 3 } };
  const x = { field: 'step', type: 'quantitative', title: 'RL step', axis: { tickMinStep: 10, grid: false } };
  const y = { type: 'quantitative', title: 'eval success (%)', scale: { domain: [0, 100] } };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: options.title, anchor: 'start', fontSize: 13 },
    config: { font: FONT, view: { stroke: '#cbd5e1' }, axis: { labelFontSize: 10, titleFontSize: 11 }, header: { labelFontSize: 11, title: null }, legend: { labelFontSize: 10, labelLimit: 400 } },
    data: { values: [...rowsOf(options.series).map((r) => ({ kind: 'curve', ...r })), ...(options.rules ?? []).map((r) => ({ kind: 'rule', panel: r.panel, label: r.label, value: 100 * r.value }))] },
    facet: { field: 'panel', type: 'nominal', sort: panels, header: { title: null } },
    columns: options.columns ?? panels.length,
    spec: {
      width: options.width ?? 220,
      height: options.height ?? 160,
      layer: [
        { transform: [{ filter: "datum.kind === 'curve'" }], mark: { type: 'area', opacity: 0.15 }, encoding: { x, y: { ...y, field: 'min' }, y2: { field: 'max' }, color } },
        { transform: [{ filter: "datum.kind === 'curve'" }], mark: { type: 'line', strokeWidth: 1.75, point: { size: 14 } }, encoding: { x, y: { ...y, field: 'mean' }, color } },
        { transform: [{ filter: "datum.kind === 'rule'" }], mark: { type: 'rule', strokeDash: [4, 3], color: '#64748b' }, encoding: { y: { ...y, field: 'value' } } },
        {
          transform: [{ filter: "datum.kind === 'rule'" }],
          mark: { type: 'text', align: 'right', baseline: 'bottom', dx: -3, dy: -2, fontSize: 9, color: '#64748b' },
          encoding: { x: { value: options.width ?? 220 }, y: { ...y, field: 'value' }, text: { field: 'label' } },
        },
      ],
    },
  };
}

/** A Vega-Lite spec drawn as SVG, without a browser (text is measured by Vega's estimate, so output is the same everywhere). */
export async function toSvg(spec: unknown): Promise<string> {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return `${await view.toSVG()}\n`;
  } finally {
    view.finalize();
  }
}
