import { api, download, followEvents } from '../api.js';
import { StepChart } from '../chart.js';
import { TERMINAL, actionButton, ago, bytes, clear, configText, duration, h, healthPill, labelChips, number, phase, problemBox, progressBar, severityPill, statusPill } from '../dom.js';
import { EVAL_SUCCESS, evaluationDrop } from './evaluations.js';
import { evaluationsPanel, lineagePanel, warmupPanel } from './job-panels.js';
import { dropBadge } from './jobs.js';
import { renderTrajectories } from './trajectories.js';

/** The smoothing slider: its weight as a share, kept for the browser session so every chart page shares it. */
export function smoothingControl(onChange) {
  const saved = Number(sessionStorage.getItem('starlab.smoothing') ?? 0);
  const value = h('span', { class: 'smoothing-value' }, saved.toFixed(2));
  const input = h('input', {
    type: 'range',
    min: '0',
    max: '0.99',
    step: '0.01',
    value: String(saved),
    'aria-label': 'smoothing',
    oninput: (e) => {
      const weight = Number(e.target.value);
      value.textContent = weight.toFixed(2);
      sessionStorage.setItem('starlab.smoothing', String(weight));
      onChange(weight);
    },
  });
  return { element: h('label', { class: 'smoothing', title: 'exponential moving average of the drawn curves (debiased); the data are unchanged' }, 'smoothing', input, value), weight: saved };
}

/** The curves of a job page: the signals RAGEN watches for the Echo Trap. */
const CHARTS = [
  { title: 'Reward', series: [{ name: 'reward/mean', label: 'rollout reward (mean)' }] },
  { title: 'Success', range: [0, 1], series: [{ name: 'success/rate', label: 'rollout success/rate', color: '#16a34a' }], evals: true, note: 'rollout vs evaluation' },
  { title: 'In-group reward std', series: [{ name: 'reward/std_in_group', label: 'all groups' }, { name: 'reward/std_in_group_kept', label: 'kept groups' }], note: 'falls before a collapse' },
  { title: 'Token entropy', series: [{ name: 'entropy/mean', label: 'entropy (mean)', color: '#d97706' }] },
  { title: 'Gradient norm (pre-clip)', series: [{ name: 'grad_norm/actor', label: 'actor', color: '#dc2626' }, { name: 'grad_norm/critic', label: 'critic', color: '#475569' }] },
  { title: 'Diversity', range: [0, 1], series: [{ name: 'diversity/distinct_ratio', label: 'distinct responses per group', color: '#4f46e5' }, { name: 'diversity/identical_groups', label: 'identical groups', color: '#db2777' }] },
  // How far each update moved the policy; kl_spike fires above its threshold (drawn), the first detector to fire on a too-high learning rate.
  { title: 'Policy change per update (kl/update)', series: [{ name: 'kl/update', label: 'KL(before ‖ after), nats per token', color: '#0f766e' }], threshold: 'kl_spike', note: 'kl_spike fires above the line' },
];
/** A chart's threshold lines: its detector's threshold as this job runs it. */
const thresholdsOf = (chart, detectors) => {
  const detector = chart.threshold && detectors?.[chart.threshold];
  return detector?.enabled ? [{ value: detector.threshold, label: `${chart.threshold} threshold ${number(detector.threshold)}` }] : [];
};
const EVAL_COLORS = ['#9333ea', '#ea580c', '#0891b2', '#65a30d'];

/** Series a chart shows for these rows: its own that have any value, plus evaluation success series. */
function chartSeries(chart, rows) {
  const present = new Set(rows.flatMap((r) => Object.keys(r.metrics)));
  const own = chart.series.filter((s) => present.has(s.name));
  if (!chart.evals) return own;
  const evals = [...present].filter((n) => EVAL_SUCCESS.test(n)).sort();
  return [...own, ...evals.map((name, i) => ({ name, label: `evaluation ${name}`, color: EVAL_COLORS[i % EVAL_COLORS.length] }))];
}

/** A job: header, its warm-up, live curves with warning markers, warnings, checkpoint health, evaluations, trajectories. */
export async function renderJob(main, [id], ctx) {
  const [job, metrics, warnings, checkpoints, warmup] = await Promise.all([
    api(`/v1/jobs/${id}`),
    api(`/v1/jobs/${id}/metrics`),
    api(`/v1/jobs/${id}/warnings`),
    api(`/v1/jobs/${id}/checkpoints`),
    api(`/v1/jobs/${id}/warmup`),
  ]);
  const state = { job, rows: metrics.data, warnings: warnings.data, detectors: warnings.detectors, checkpoints: checkpoints.data };
  const header = h('div', { class: 'job-header card' });
  const live = h('span', { class: 'live-indicator', dataset: { state: TERMINAL.has(job.status) ? 'ended' : 'connecting' } });
  const grid = h('div', { class: 'chart-grid' });
  const lineage = h('div');
  const warmupHost = h('div');
  const warningsCard = h('section', { class: 'card' });
  const checkpointsCard = h('section', { class: 'card' });
  const evaluationsHost = h('div');
  const trajectoriesCard = h('section', { class: 'card trajectories-card' });
  const actionError = h('div');
  const smoothing = smoothingControl((weight) => charts.forEach(({ chart }) => chart.setSmoothing(weight)));
  clear(
    main,
    h('div', { class: 'breadcrumbs' }, h('a', { href: '#/jobs' }, 'Jobs'), ' / ', job.name),
    header,
    actionError,
    lineage,
    warmupHost,
    h('div', { class: 'section-title' }, h('h2', {}, 'Training curves ', h('span', { class: 'phase' }, 'RL steps')), h('div', { class: 'toolbar' }, smoothing.element, live)),
    grid,
    h('div', { class: 'two-columns' }, warningsCard, checkpointsCard),
    evaluationsHost,
    trajectoriesCard,
  );
  const showError = (e) => clear(actionError, problemBox(e));
  const warmupView = warmupPanel(warmupHost, warmup, ctx.signal);
  const evaluations = evaluationsPanel(evaluationsHost, id, showError);
  evaluations.load().catch(showError);
  lineagePanel(lineage, job).catch(() => {});
  const charts = CHARTS.map((definition) => ({ definition, chart: new StepChart(grid, { ...definition, series: chartSeries(definition, state.rows), thresholds: thresholdsOf(definition, state.detectors) }) }));
  charts.forEach(({ chart }) => chart.setSmoothing(smoothing.weight));
  ctx.signal.addEventListener('abort', () => charts.forEach(({ chart }) => chart.destroy()));

  function drawCharts() {
    for (const { definition, chart } of charts) {
      chart.setSeries(chartSeries(definition, state.rows));
      chart.setRows(state.rows);
      chart.setWarnings(state.warnings);
    }
  }

  function renderHeader() {
    // The job row and the metrics are read by separate requests, so the row can lag the curves
    // by a step or two: the header never shows less than the newest step drawn.
    const newest = state.rows.reduce((m, r) => Math.max(m, r.step), 0);
    const j = newest > state.job.currentStep ? { ...state.job, currentStep: newest, progress: newest / state.job.totalSteps } : state.job;
    const now = phase(j);
    const drop = j.status === 'succeeded' ? evaluationDrop(state.rows) : null;
    const action = (label, verb, kind = '') => actionButton(label, async () => ((state.job = await api(`/v1/jobs/${j.id}/${verb}`, { method: 'POST' })), renderHeader()), actionError, kind);
    const spec = j.spec ?? {};
    clear(
      header,
      h(
        'div',
        { class: 'job-title' },
        h('div', {}, h('h1', {}, j.name, ' ', statusPill(j.status), dropBadge(drop), j.archivedAt ? h('span', { class: 'pill archived' }, j.purgedAt ? 'purged' : 'archived') : null), h('div', { class: 'muted mono small' }, j.id, labelChips(j.labels))),
        h(
          'div',
          { class: 'toolbar' },
          h('a', { class: 'button ghost', href: `#/compare?ids=${j.id}` }, 'Compare…'),
          ['running', 'queued'].includes(j.status) ? action('Pause', 'pause') : null,
          j.status === 'paused' ? action('Resume', 'resume', 'primary') : null,
          !TERMINAL.has(j.status) ? action('Cancel', 'cancel', 'danger') : null,
          TERMINAL.has(j.status) && !j.archivedAt ? archiveButton(j) : null,
        ),
      ),
      h(
        'div',
        { class: 'job-progress', dataset: { phase: now.name } },
        progressBar(now.fraction),
        h('span', { class: 'job-step', dataset: { step: j.currentStep } }, now.name === 'warm-up' ? now.label : `step ${j.currentStep} / ${j.totalSteps}`),
        now.eta !== null ? h('span', { class: 'muted job-eta' }, `ETA ${duration(now.eta)}${now.name === 'warm-up' ? ' (warm-up)' : ''}`) : null,
      ),
      h(
        'dl',
        { class: 'facts' },
        fact('Owner', j.owner.name),
        fact('Environment', spec.environment?.id ?? '?', configText(spec.environment?.config)),
        fact('Algorithm', spec.algorithm?.id ?? '?', `lr ${spec.training?.learningRate ?? '?'} · ${spec.rollout?.groups ?? '?'}×${spec.rollout?.groupSize ?? '?'} rollouts`),
        fact('Backend · worker', `${j.backend ?? '—'} · ${j.worker ?? '—'}`),
        fact('Attempt', String(j.attempt)),
        fact('Created', ago(j.createdAt)),
        j.finishedAt ? fact('Finished', ago(j.finishedAt)) : fact('Started', ago(j.startedAt)),
        j.queue ? fact('Queue', `#${j.queue.position} · ${j.queue.reason}`) : null,
        j.error ? fact('Error', j.error) : null,
      ),
    );
  }

  /** Archive (DELETE /v1/jobs/{id}): hidden from lists and pickers, results kept. */
  function archiveButton(j) {
    return actionButton('Archive', async () => ((state.job = await api(`/v1/jobs/${j.id}`, { method: 'DELETE' })), renderHeader()), actionError);
  }

  function renderWarnings() {
    clear(
      warningsCard,
      h('h2', {}, 'Collapse warnings ', h('span', { class: 'count' }, String(state.warnings.length))),
      state.warnings.length === 0
        ? h('p', { class: 'muted' }, 'No warnings: no detector fired on this run.')
        : h(
            'table',
            { class: 'table compact warnings-table' },
            h('thead', {}, h('tr', {}, ['Step', 'Severity', 'Detector', 'Value / threshold', 'Why'].map((t) => h('th', {}, t)))),
            h(
              'tbody',
              {},
              state.warnings.map((w) => h('tr', {}, h('td', {}, String(w.step)), h('td', {}, severityPill(w.severity)), h('td', { class: 'mono' }, w.detector), h('td', {}, `${number(w.value)} / ${number(w.threshold)}`), h('td', { class: 'small' }, w.message))),
            ),
          ),
    );
  }

  function renderCheckpoints() {
    const counts = state.checkpoints.reduce((c, k) => ((c[k.health] = (c[k.health] ?? 0) + 1), c), {});
    clear(
      checkpointsCard,
      h('h2', {}, 'Checkpoints ', h('span', { class: 'count' }, String(state.checkpoints.length))),
      h('div', { class: 'badges' }, Object.entries(counts).map(([health, n]) => h('span', { class: `pill health-${health}` }, `${n} ${health}`))),
      state.checkpoints.length === 0
        ? h('p', { class: 'muted' }, 'No checkpoints yet.')
        : h(
            'table',
            { class: 'table compact checkpoints-table' },
            h('thead', {}, h('tr', {}, ['Step', 'Health', 'Size', 'Saved', ''].map((t) => h('th', {}, t)))),
            h(
              'tbody',
              {},
              [...state.checkpoints].reverse().map((c) =>
                h(
                  'tr',
                  { dataset: { step: c.step } },
                  h('td', {}, String(c.step)),
                  h('td', {}, healthPill(c.health)),
                  h('td', {}, bytes(c.sizeBytes)),
                  h('td', { class: 'muted' }, ago(c.createdAt)),
                  h('td', {}, h('button', { type: 'button', class: 'button ghost small', onclick: () => download(c.downloadUrl).catch((e) => clear(actionError, problemBox(e))) }, 'Download')),
                ),
              ),
            ),
          ),
    );
  }

  renderHeader();
  drawCharts();
  renderWarnings();
  renderCheckpoints();
  const trajectories = renderTrajectories(trajectoriesCard, state.job, ctx.signal);

  if (TERMINAL.has(job.status)) return;
  const byStep = new Map(state.rows.map((r) => [r.step, r]));
  let pending = false;
  const redraw = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      state.rows = [...byStep.values()].sort((a, b) => a.step - b.step);
      drawCharts();
      renderHeader();
    });
  };
  // Steps streamed while a reload is in flight may be newer than its snapshot: they are kept
  // aside and laid over it, or the curves would lose a point the stream already drew.
  let streamedDuringReload = null;
  const reload = async () => {
    const streamed = (streamedDuringReload = []);
    const [fresh, rows, checkpointList, warningList] = await Promise.all([api(`/v1/jobs/${id}`), api(`/v1/jobs/${id}/metrics`), api(`/v1/jobs/${id}/checkpoints`), api(`/v1/jobs/${id}/warnings`)]);
    if (streamedDuringReload === streamed) streamedDuringReload = null;
    state.job = fresh;
    state.checkpoints = checkpointList.data;
    state.warnings = warningList.data;
    byStep.clear();
    for (const r of rows.data) byStep.set(r.step, r);
    for (const r of streamed) byStep.set(r.step, r);
    renderCheckpoints();
    renderWarnings();
    redraw();
  };
  followEvents(
    id,
    (event) => {
      if (event.type === 'log' && event.data?.warmup) {
        const etaSeconds = warmupView.report(event.data.warmup, new Date(event.createdAt).getTime());
        state.job = { ...state.job, warmup: { ...(state.job.warmup ?? {}), kind: event.data.warmup.kind, steps: event.data.warmup.steps, completed: event.data.warmup.done, etaSeconds } };
        renderHeader();
      } else if (event.type === 'step') {
        if (event.data.step === 0) {
          warmupView.done(id).catch(() => {});
          state.job = { ...state.job, warmup: state.job.warmup ? { ...state.job.warmup, completed: state.job.warmup.steps } : null };
        }
        const row = { step: event.data.step, metrics: event.data.metrics };
        byStep.set(row.step, row);
        streamedDuringReload?.push(row);
        if (event.data.step >= state.job.currentStep) state.job = { ...state.job, currentStep: event.data.step, progress: event.data.step / state.job.totalSteps, latestMetrics: event.data.metrics };
        redraw();
        trajectories.latestStep(event.data.step);
      } else if (event.type === 'warning') {
        if (!state.warnings.some((w) => w.step === event.data.step && w.detector === event.data.detector)) state.warnings = [...state.warnings, event.data];
        renderWarnings();
        redraw();
      } else if (event.type === 'checkpoint') {
        api(`/v1/jobs/${id}/checkpoints`).then((list) => ((state.checkpoints = list.data), renderCheckpoints()), () => {});
      } else if (event.type === 'state' || event.type === 'audit') {
        // Status changes, resumes and rollbacks: re-read everything (a rollback discards later steps).
        reload().catch(() => {});
      }
    },
    ctx.signal,
    (status) => (live.dataset.state = status),
  ).catch((e) => clear(actionError, problemBox(e)));
}

function fact(label, value, detail) {
  return h('div', { class: 'fact' }, h('dt', {}, label), h('dd', {}, value, detail ? h('div', { class: 'muted small' }, detail) : null));
}
