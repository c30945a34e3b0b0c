import { api } from '../api.js';
import { PALETTE, StepChart } from '../chart.js';
import { clear, h, statusPill } from '../dom.js';
import { EVAL_SUCCESS } from './job.js';

/** Two or more runs on one chart, one metric at a time (#/compare?ids=a,b&metric=name). */
export async function renderCompare(main, [query], ctx) {
  const params = new URLSearchParams(query ?? '');
  const ids = (params.get('ids') ?? '').split(',').filter((id) => /^[0-9a-f-]{36}$/.test(id));
  const recent = (await api('/v1/jobs?limit=50')).data;
  const picker = h(
    'div',
    { class: 'job-picker' },
    recent.map((job) =>
      h(
        'label',
        { class: 'checkbox' },
        h('input', { type: 'checkbox', value: job.id, checked: ids.includes(job.id), onchange: () => go() }),
        ` ${job.name} `,
        statusPill(job.status),
        h('span', { class: 'muted mono small' }, ` ${job.id.slice(0, 8)}`),
      ),
    ),
  );
  const metricSelect = h('select', { 'aria-label': 'metric', onchange: () => go() });
  const chartHost = h('div', { class: 'compare-chart' });
  clear(
    main,
    h('div', { class: 'page-header' }, h('div', {}, h('h1', {}, 'Compare runs'), h('div', { class: 'muted small' }, 'Pick two or more jobs and a metric; steps are aligned.')), h('div', { class: 'toolbar' }, h('span', { class: 'muted small' }, 'metric'), metricSelect)),
    chartHost,
    h('section', { class: 'card' }, h('h2', {}, 'Jobs'), picker),
  );

  function go() {
    const chosen = [...picker.querySelectorAll('input:checked')].map((i) => i.value);
    const next = new URLSearchParams({ ids: chosen.join(','), ...(metricSelect.value ? { metric: metricSelect.value } : {}) });
    location.hash = `#/compare?${next}`;
  }

  if (ids.length === 0) {
    chartHost.append(h('p', { class: 'muted card' }, 'Select jobs below to compare them.'));
    return;
  }
  const runs = await Promise.all(ids.map(async (id) => ({ job: await api(`/v1/jobs/${id}`), rows: (await api(`/v1/jobs/${id}/metrics`)).data })));
  if (ctx.signal.aborted) return;
  const names = [...new Set(runs.flatMap((r) => r.rows.flatMap((row) => Object.keys(row.metrics))))].sort();
  const metric = params.get('metric') && names.includes(params.get('metric')) ? params.get('metric') : (names.find((n) => EVAL_SUCCESS.test(n)) ?? (names.includes('success/rate') ? 'success/rate' : names[0]));
  clear(metricSelect, names.map((n) => h('option', { value: n, selected: n === metric }, n)));
  // One series per run: the rows are merged by step, each run's value under its own key.
  const merged = new Map();
  runs.forEach((run, i) => {
    for (const row of run.rows) {
      if (!Number.isFinite(row.metrics[metric])) continue;
      const entry = merged.get(row.step) ?? { step: row.step, metrics: {} };
      entry.metrics[`run${i}`] = row.metrics[metric];
      merged.set(row.step, entry);
    }
  });
  const chart = new StepChart(chartHost, {
    title: metric,
    height: 360,
    note: `${runs.length} runs`,
    series: runs.map((run, i) => ({ name: `run${i}`, label: `${run.job.name} (${run.job.id.slice(0, 8)})`, color: PALETTE[i % PALETTE.length] })),
  });
  chart.setRows([...merged.values()].sort((a, b) => a.step - b.step));
  ctx.signal.addEventListener('abort', () => chart.destroy());
}
