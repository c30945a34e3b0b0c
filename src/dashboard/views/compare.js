import { api } from '../api.js';
import { PALETTE, StepChart } from '../chart.js';
import { clear, h, labelChips, statusPill } from '../dom.js';
import { EVAL_SUCCESS } from './evaluations.js';
import { smoothingControl } from './job.js';

const STATUSES = ['', 'queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'];

/**
 * Two or more runs on one chart, one metric at a time (#/compare?ids=a,b&metric=name). The picker
 * lists the caller's jobs that match its search (name), label (key=value), status and
 * environment, as the API filters them; archived jobs are left out. Chosen jobs stay listed.
 */
export async function renderCompare(main, [query], ctx) {
  const params = new URLSearchParams(query ?? '');
  const ids = (params.get('ids') ?? '').split(',').filter((id) => /^[0-9a-f-]{36}$/.test(id));
  const environments = (await api('/v1/environments')).data.map((e) => e.id);
  const filters = { q: params.get('q') ?? '', label: params.get('label') ?? '', status: params.get('status') ?? '', environment: params.get('environment') ?? '' };
  const picker = h('div', { class: 'job-picker' });
  const pickerInfo = h('div', { class: 'muted small picker-info' });
  const filter = (name, element) => {
    element.addEventListener(element.tagName === 'INPUT' ? 'input' : 'change', () => {
      filters[name] = element.value.trim();
      refreshPicker();
    });
    return element;
  };
  const search = filter('q', h('input', { type: 'text', placeholder: 'search names', 'aria-label': 'search', value: filters.q }));
  const label = filter('label', h('input', { type: 'text', placeholder: 'label key=value', 'aria-label': 'label', value: filters.label }));
  const status = filter('status', h('select', { 'aria-label': 'picker status' }, STATUSES.map((s) => h('option', { value: s, selected: s === filters.status }, s || 'any status'))));
  const environment = filter('environment', h('select', { 'aria-label': 'picker environment' }, ['', ...environments].map((e) => h('option', { value: e, selected: e === filters.environment }, e || 'any environment'))));
  const metricSelect = h('select', { 'aria-label': 'metric', onchange: () => go() });
  const chartHost = h('div', { class: 'compare-chart' });
  let chart;
  const smoothing = smoothingControl((weight) => chart?.setSmoothing(weight));
  clear(
    main,
    h(
      'div',
      { class: 'page-header' },
      h('div', {}, h('h1', {}, 'Compare runs'), h('div', { class: 'muted small' }, 'Pick two or more jobs and a metric; steps are aligned.')),
      h('div', { class: 'toolbar' }, smoothing.element, h('span', { class: 'muted small' }, 'metric'), metricSelect),
    ),
    chartHost,
    h('section', { class: 'card' }, h('h2', {}, 'Jobs'), h('div', { class: 'picker-filters' }, search, label, status, environment), pickerInfo, picker),
  );

  const chosen = new Set(ids);
  let pending = 0;
  /** Re-reads the picker's jobs for the current filters; an older answer arriving late is dropped. */
  async function refreshPicker() {
    const mine = ++pending;
    const labelOk = filters.label === '' || /^[A-Za-z0-9_.-]{1,64}=.{0,256}$/.test(filters.label);
    const query = new URLSearchParams({
      limit: '100',
      ...(filters.q ? { q: filters.q } : {}),
      ...(filters.label && labelOk ? { label: filters.label } : {}),
      ...(filters.status ? { status: filters.status } : {}),
      ...(filters.environment ? { environment: filters.environment } : {}),
    });
    const found = (await api(`/v1/jobs?${query}`)).data;
    if (mine !== pending || ctx.signal.aborted) return;
    const missing = [...chosen].filter((id) => !found.some((j) => j.id === id));
    const kept = await Promise.all(missing.map((id) => api(`/v1/jobs/${id}`).catch(() => null)));
    if (mine !== pending) return;
    const jobs = [...kept.filter(Boolean), ...found];
    pickerInfo.textContent = `${found.length}${found.length === 100 ? '+' : ''} matching${labelOk ? '' : ' (a label filter is key=value)'}`;
    clear(
      picker,
      jobs.map((job) =>
        h(
          'label',
          { class: 'checkbox', dataset: { jobId: job.id } },
          h('input', {
            type: 'checkbox',
            value: job.id,
            checked: chosen.has(job.id),
            onchange: (e) => {
              if (e.target.checked) chosen.add(job.id);
              else chosen.delete(job.id);
              go();
            },
          }),
          ` ${job.name} `,
          statusPill(job.status),
          h('span', { class: 'muted small' }, ` ${job.spec?.environment?.id ?? '?'}`),
          labelChips(job.labels),
          h('span', { class: 'muted mono small' }, ` ${job.id.slice(0, 8)}`),
        ),
      ),
    );
  }

  function go() {
    const next = new URLSearchParams({ ids: [...chosen].join(','), ...(metricSelect.value ? { metric: metricSelect.value } : {}), ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v)) });
    location.hash = `#/compare?${next}`;
  }

  await refreshPicker();
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
  chart = new StepChart(chartHost, {
    title: metric,
    height: 360,
    note: `${runs.length} runs`,
    series: runs.map((run, i) => ({ name: `run${i}`, label: `${run.job.name} (${run.job.id.slice(0, 8)})`, color: PALETTE[i % PALETTE.length] })),
  });
  chart.setSmoothing(smoothing.weight);
  chart.setRows([...merged.values()].sort((a, b) => a.step - b.step));
  ctx.signal.addEventListener('abort', () => chart.destroy());
}
