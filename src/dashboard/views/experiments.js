import { api } from '../api.js';
import { PALETTE, StepChart } from '../chart.js';
import { actionButton, ago, clear, h, problemBox, progressBar, statusPill } from '../dom.js';
import { smoothingControl } from './job.js';

const REFRESH_MS = 5000;
const percent = (x) => (x === null || x === undefined ? '—' : (100 * x).toFixed(1));
const progressText = (e) => `${(100 * e.progress.fraction).toFixed(0)}% · ${Object.entries(e.progress.byStatus).map(([s, n]) => `${n} ${s}`).join(', ')}`;

/** The caller's experiments (admins: everyone's), newest first. */
export async function renderExperiments(main, _params, ctx) {
  let archived = false;
  const body = h('tbody');
  const error = h('div');
  const toggle = h('label', { class: 'checkbox small' }, h('input', { type: 'checkbox', 'aria-label': 'show archived', onchange: (e) => ((archived = e.target.checked), load()) }), 'archived');
  clear(
    main,
    h('div', { class: 'page-header' }, h('div', {}, h('h1', {}, 'Experiments'), h('div', { class: 'muted small' }, 'A base spec × a grid, submitted as one unit: POST /v1/experiments or starlab experiment submit.')), h('div', { class: 'toolbar' }, toggle)),
    error,
    h('div', { class: 'card table-card' }, h('table', { class: 'table experiments-table' }, h('thead', {}, h('tr', {}, ['Experiment', 'Status', 'Owner', 'Cells', 'Jobs', 'Progress', 'Created'].map((t) => h('th', {}, t)))), body)),
  );
  async function load() {
    try {
      const { data } = await api(`/v1/experiments?limit=100${archived ? '&archived=true' : ''}`);
      clear(
        body,
        data.length
          ? data.map((e) =>
              h(
                'tr',
                { dataset: { experimentId: e.id } },
                h('td', {}, h('a', { href: `#/experiments/${e.id}`, class: 'job-link' }, e.name), h('div', { class: 'muted mono small' }, e.id.slice(0, 8))),
                h('td', {}, statusPill(e.status)),
                h('td', {}, e.owner.name),
                h('td', {}, String(e.cells)),
                h('td', {}, String(e.jobs)),
                h('td', { class: 'progress-cell' }, progressBar(e.progress.fraction), h('span', { class: 'muted small' }, progressText(e))),
                h('td', { class: 'muted' }, ago(e.createdAt)),
              ),
            )
          : h('tr', {}, h('td', { colspan: 7, class: 'empty' }, archived ? 'No archived experiments.' : 'No experiments yet.')),
      );
      clear(error);
    } catch (e) {
      clear(error, problemBox(e));
    }
  }
  await load();
  const timer = setInterval(() => !document.hidden && load(), REFRESH_MS);
  ctx.signal.addEventListener('abort', () => clearInterval(timer));
}

/**
 * An experiment: its table (per cell, the seeds' evaluation after the warm-up and after RL, mean
 * and min–max, beside the random agent and the optimum on the same seeds), its curves (a mean
 * line and the seeds' min–max band per cell), its jobs, and its controls.
 */
export async function renderExperiment(main, [id], ctx) {
  let experiment = await api(`/v1/experiments/${id}`);
  const header = h('div', { class: 'card job-header' });
  const tableCard = h('section', { class: 'card' });
  const jobsCard = h('section', { class: 'card' });
  const chartHost = h('div', { class: 'compare-chart' });
  const metricSelect = h('select', { 'aria-label': 'curve metric', onchange: () => drawCurves().catch(showError) });
  const actionError = h('div');
  const showError = (e) => clear(actionError, problemBox(e));
  let chart;
  const smoothing = smoothingControl((weight) => chart?.setSmoothing(weight));
  clear(
    main,
    h('div', { class: 'breadcrumbs' }, h('a', { href: '#/experiments' }, 'Experiments'), ' / ', experiment.name),
    header,
    actionError,
    tableCard,
    h('div', { class: 'section-title' }, h('h2', {}, 'Curves ', h('span', { class: 'muted small' }, 'mean over the seeds, band from min to max')), h('div', { class: 'toolbar' }, smoothing.element, metricSelect)),
    chartHost,
    jobsCard,
  );
  ctx.signal.addEventListener('abort', () => chart?.destroy());

  const control = (label, verb, kind = '') =>
    actionButton(label, async () => (await api(verb === 'archive' ? `/v1/experiments/${id}` : `/v1/experiments/${id}/${verb}`, { method: verb === 'archive' ? 'DELETE' : 'POST' }), await refresh()), actionError, kind);

  function render() {
    const e = experiment;
    const ended = ['succeeded', 'failed', 'cancelled'].includes(e.status);
    clear(
      header,
      h(
        'div',
        { class: 'job-title' },
        h('div', {}, h('h1', {}, e.name, ' ', statusPill(e.status), e.archivedAt ? h('span', { class: 'pill archived' }, e.purgedAt ? 'purged' : 'archived') : null), h('div', { class: 'muted mono small' }, e.id)),
        h(
          'div',
          { class: 'toolbar' },
          ['running', 'queued'].includes(e.status) ? control('Pause all', 'pause') : null,
          e.progress.byStatus.paused ? control('Resume all', 'resume', 'primary') : null,
          !ended ? control('Cancel all', 'cancel', 'danger') : null,
          ended && !e.archivedAt ? control('Archive', 'archive') : null,
        ),
      ),
      h('div', { class: 'job-progress' }, progressBar(e.progress.fraction), h('span', { class: 'muted' }, progressText(e))),
      h('div', { class: 'muted small' }, `grid: ${Object.entries(e.grid).map(([path, values]) => `${path} ∈ ${JSON.stringify(values)}`).join(' × ')} · owner ${e.owner.name} · created ${ago(e.createdAt)}`),
    );
    const reference = (c) => (c.optimal !== null ? `${percent(c.optimal)} (optimal)` : c.expert !== null ? `${percent(c.expert)} (expert)` : '—');
    clear(
      tableCard,
      h('h2', {}, 'Table ', h('span', { class: 'muted small' }, `${e.metric}, % · after the warm-up → after RL, mean (min–max) over the seeds`), e.references === 'computing' ? h('span', { class: 'muted small' }, ' · references computing…') : null),
      h(
        'table',
        { class: 'table compact cells-table' },
        h('thead', {}, h('tr', {}, ['Cell', 'After warm-up → after RL', 'Seeds done', 'Random agent', 'Optimum or expert'].map((t) => h('th', {}, t)))),
        h(
          'tbody',
          {},
          e.cells.map((c) =>
            h('tr', { dataset: { cell: c.index } }, h('td', {}, c.label), h('td', { class: 'cell-main' }, c.table), h('td', {}, `${c.finished} / ${c.seeds.length}`), h('td', { class: 'cell-random' }, percent(c.random)), h('td', {}, reference(c))),
          ),
        ),
      ),
    );
    clear(
      jobsCard,
      h('h2', {}, 'Jobs ', h('span', { class: 'count' }, String(e.jobs))),
      h(
        'table',
        { class: 'table compact experiment-jobs' },
        h('thead', {}, h('tr', {}, ['Job', 'Cell', 'Seed', 'Status', 'Step', 'After warm-up → after RL', 'Digest'].map((t) => h('th', {}, t)))),
        h(
          'tbody',
          {},
          e.cells.flatMap((c) =>
            c.runs.map((r) =>
              h(
                'tr',
                { dataset: { jobId: r.jobId } },
                h('td', {}, h('a', { href: `#/jobs/${r.jobId}` }, r.name)),
                h('td', {}, String(c.index + 1)),
                h('td', {}, String(r.seed)),
                h('td', {}, statusPill(r.status)),
                h('td', {}, `${r.currentStep}/${r.totalSteps}`),
                h('td', {}, `${percent(r.afterWarmup)} → ${percent(r.afterRl)}`),
                h('td', { class: 'mono small muted' }, r.digest),
              ),
            ),
          ),
        ),
      ),
    );
  }

  async function drawCurves() {
    const metric = metricSelect.value || experiment.metric;
    const curves = await api(`/v1/experiments/${id}/curves?metric=${encodeURIComponent(metric)}`);
    if (ctx.signal.aborted) return;
    const rows = new Map();
    curves.cells.forEach((cell, i) => {
      for (const p of cell.points) {
        const row = rows.get(p.step) ?? { step: p.step, metrics: {} };
        Object.assign(row.metrics, { [`cell${i}`]: p.mean, [`cell${i}/min`]: p.min, [`cell${i}/max`]: p.max });
        rows.set(p.step, row);
      }
    });
    chart?.destroy();
    chart = new StepChart(chartHost, {
      title: curves.metric,
      height: 340,
      note: `${curves.cells.length} cells`,
      series: curves.cells.map((cell, i) => ({ name: `cell${i}`, label: cell.label, color: PALETTE[i % PALETTE.length], band: { lower: `cell${i}/min`, upper: `cell${i}/max` } })),
    });
    chart.setSmoothing(smoothing.weight);
    chart.setRows([...rows.values()].sort((a, b) => a.step - b.step));
  }

  async function refresh() {
    experiment = await api(`/v1/experiments/${id}`);
    render();
    await drawCurves();
  }

  const metrics = ['eval/sampled/success', 'eval/greedy/success', 'success/rate', 'reward/mean', 'entropy/mean', 'kl/update', 'reward/std_in_group'];
  clear(metricSelect, [...new Set([experiment.metric, ...metrics])].map((m) => h('option', { value: m, selected: m === experiment.metric }, m)));
  render();
  await drawCurves();
  const timer = setInterval(() => {
    const settled = ['succeeded', 'failed', 'cancelled'].includes(experiment.status) && experiment.references !== 'computing';
    if (document.hidden || settled) return;
    refresh().catch(() => {});
  }, REFRESH_MS);
  ctx.signal.addEventListener('abort', () => clearInterval(timer));
}
