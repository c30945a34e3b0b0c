// The job page's panels besides its training curves: the warm-up as a phase of its own, the
// evaluations of its checkpoints, and where it comes from (fork lineage, experiment).
import { api } from '../api.js';
import { StepChart } from '../chart.js';
import { ago, clear, duration, h, number, progressBar } from '../dom.js';

/**
 * The warm-up: its state, progress and ETA and its loss curve, from GET /v1/jobs/{id}/warmup, then
 * live from the stream's warm-up reports (`report`) until step 0 is stored (`done`).
 */
export function warmupPanel(host, initial, signal) {
  let warmup = initial;
  const status = h('div');
  const card = h('section', { class: 'card warmup-card', dataset: { state: warmup.state } }, h('h2', {}, 'Warm-up ', h('span', { class: 'phase' }, 'supervised, before RL')), status);
  host.append(card);
  const chart = new StepChart(card, { title: 'Warm-up loss', xLabel: 'warm-up step', height: 160, series: [{ name: 'loss', label: 'supervised loss (mean over each 10 steps)', color: '#7c3aed' }] });
  signal.addEventListener('abort', () => chart.destroy());

  function render() {
    card.dataset.state = warmup.state;
    const fraction = warmup.steps ? warmup.completed / warmup.steps : 0;
    const what = { none: 'No warm-up: RL starts from the initial model.', pending: 'Not started yet.', running: 'Running.', done: warmup.reused ? 'Done: reused from the worker’s warm-up cache.' : `Done${warmup.seconds !== null ? ` in ${duration(warmup.seconds)}` : ''}.` }[warmup.state];
    clear(
      status,
      h(
        'div',
        { class: 'job-progress' },
        progressBar(fraction),
        h('span', { class: 'warmup-step', dataset: { completed: warmup.completed } }, `${warmup.kind} · ${warmup.completed} / ${warmup.steps} steps`),
        warmup.state === 'running' && warmup.etaSeconds !== null ? h('span', { class: 'muted warmup-eta' }, `ETA ${duration(warmup.etaSeconds)}`) : null,
        warmup.finalLoss !== null ? h('span', { class: 'muted' }, `final loss ${number(warmup.finalLoss)}`) : null,
      ),
      h('div', { class: 'muted small' }, what),
    );
    chart.setRows(warmup.loss.map((p) => ({ step: p.step, metrics: { loss: p.loss } })));
  }
  render();
  return {
    /** A progress line from the stream (`{kind, done, steps, loss}`) at `at` (ms); returns the warm-up's ETA in seconds (null when unknown). */
    report(line, at) {
      if (warmup.state === 'done') return null;
      const loss = [...warmup.loss.filter((p) => p.step < line.done), { step: line.done, loss: line.loss }];
      const first = warmup.firstAt ?? { at, done: line.done };
      const perStep = line.done > first.done ? (at - first.at) / 1000 / (line.done - first.done) : null;
      warmup = { ...warmup, state: 'running', completed: line.done, loss, firstAt: first, etaSeconds: perStep === null ? warmup.etaSeconds : perStep * (line.steps - line.done) };
      render();
      return warmup.etaSeconds;
    },
    /** Step 0 is stored: re-read the phase's final state. */
    async done(jobId) {
      warmup = await api(`/v1/jobs/${jobId}/warmup`);
      render();
    },
  };
}

/** Evaluations of the job's checkpoints (POST /v1/jobs/{id}/evaluations), newest first, with a button to evaluate the latest one. */
export function evaluationsPanel(host, jobId, onError) {
  const card = h('section', { class: 'card evaluations-card' });
  host.append(card);
  let evaluations = [];
  const evaluate = h(
    'button',
    {
      type: 'button',
      class: 'button small',
      onclick: async () => {
        try {
          await api(`/v1/jobs/${jobId}/evaluations`, { method: 'POST', body: {} });
          await load();
        } catch (e) {
          onError(e);
        }
      },
    },
    'Evaluate the latest checkpoint',
  );
  const percent = (x) => (x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`);
  function render() {
    clear(
      card,
      h('h2', {}, 'Evaluations ', h('span', { class: 'count' }, String(evaluations.length)), evaluate),
      evaluations.length === 0
        ? h('p', { class: 'muted' }, 'No evaluations yet: a worker plays a checkpoint on the held-out seeds (success and pass@k), on this environment or another config.')
        : h(
            'table',
            { class: 'table compact evaluations-table' },
            h('thead', {}, h('tr', {}, ['Step', 'Environment', 'Seeds × k', 'Status', 'Success', 'pass@k', 'Requested'].map((t) => h('th', {}, t)))),
            h(
              'tbody',
              {},
              evaluations.map((e) =>
                h(
                  'tr',
                  { dataset: { evaluationId: e.id, status: e.status } },
                  h('td', {}, String(e.step)),
                  h('td', { class: 'small' }, `${e.environment.id} ${Object.keys(e.environment.config).length ? JSON.stringify(e.environment.config) : ''}`),
                  h('td', {}, `${e.episodes} × ${e.k} · T ${e.temperature}`),
                  h('td', {}, e.status, e.error ? h('div', { class: 'muted small' }, e.error) : null),
                  h('td', { class: 'evaluation-success' }, percent(e.success)),
                  h('td', {}, percent(e.passAtK)),
                  h('td', { class: 'muted' }, ago(e.createdAt)),
                ),
              ),
            ),
          ),
    );
  }
  async function load() {
    evaluations = (await api(`/v1/jobs/${jobId}/evaluations`)).data;
    render();
    // An evaluation in progress is polled until it ends.
    if (evaluations.some((e) => e.status === 'queued' || e.status === 'running')) setTimeout(() => load().catch(() => {}), 2000);
  }
  render();
  return { load };
}

/** Where the job comes from and what came of it: its fork parent, its forks, its experiment; links both ways. */
export async function lineagePanel(host, job) {
  const forks = (await api(`/v1/jobs?forkedFrom=${job.id}&limit=100`)).data;
  const archivedForks = (await api(`/v1/jobs?forkedFrom=${job.id}&limit=100&archived=true`)).data;
  const items = [];
  if (job.forkedFrom) items.push(h('span', { class: 'lineage-parent' }, 'forked from ', h('a', { href: `#/jobs/${job.forkedFrom.jobId}`, dataset: { jobId: job.forkedFrom.jobId } }, job.forkedFrom.jobId.slice(0, 8)), ` at step ${job.forkedFrom.step}`));
  const children = [...forks, ...archivedForks];
  if (children.length) items.push(h('span', { class: 'lineage-forks' }, `forks (${children.length}): `, children.map((f, i) => [i ? ', ' : '', h('a', { href: `#/jobs/${f.id}`, dataset: { jobId: f.id } }, f.name), ` at step ${f.forkedFrom?.step ?? '?'}`])));
  if (job.experiment) items.push(h('span', { class: 'lineage-experiment' }, 'run of ', h('a', { href: `#/experiments/${job.experiment.id}` }, 'experiment ', job.experiment.id.slice(0, 8)), ` (cell ${job.experiment.cell + 1})`));
  if (items.length) host.append(h('div', { class: 'lineage card' }, items.flatMap((item, i) => (i ? [h('span', { class: 'muted' }, '·'), item] : [item]))));
}

