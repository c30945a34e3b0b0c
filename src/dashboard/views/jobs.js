import { api } from '../api.js';
import { ago, clear, duration, h, labelChips, number, phase, problemBox, progressBar, severityPill, statusPill } from '../dom.js';
import { EvaluationDropCache } from './evaluations.js';
import { WarningCache } from './warnings.js';

/** The badge of a succeeded run whose last evaluation is far below its best. */
export function dropBadge(drop) {
  if (!drop?.fell) return null;
  return h('span', { class: 'pill badge-eval-fell', title: `${drop.metric}: best ${number(drop.best)} at step ${drop.bestStep}, last ${number(drop.last)} at step ${drop.lastStep}` }, `eval fell: ${number(drop.last)} (best ${number(drop.best)})`);
}

const REFRESH_MS = 5000;
const STATUSES = ['', 'queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'];

/** Every job the caller may see, newest first, with status, owner, its phase's progress and ETA, and badges. */
export async function renderJobs(main, _params, ctx) {
  const warnings = new WarningCache();
  const drops = new EvaluationDropCache();
  const selected = new Set();
  let status = new URLSearchParams(location.hash.split('?')[1] ?? '').get('status') ?? '';
  let archived = false;
  let jobs = [];
  let cursor = null;
  const body = h('tbody');
  const info = h('div', { class: 'muted small' });
  const more = h('button', { type: 'button', class: 'button ghost', hidden: true, onclick: () => load(true) }, 'Load more');
  const compare = h('button', { type: 'button', class: 'button', disabled: true, onclick: () => (location.hash = `#/compare?ids=${[...selected].join(',')}`) }, 'Compare selected');
  const filter = h(
    'select',
    { 'aria-label': 'status', onchange: (e) => ((status = e.target.value), load(false)) },
    STATUSES.map((s) => h('option', { value: s, selected: s === status }, s || 'all statuses')),
  );
  const showArchived = h('label', { class: 'checkbox small' }, h('input', { type: 'checkbox', 'aria-label': 'show archived', onchange: (e) => ((archived = e.target.checked), load(false)) }), 'archived');
  const error = h('div');
  clear(
    main,
    h('div', { class: 'page-header' }, h('div', {}, h('h1', {}, 'Jobs'), info), h('div', { class: 'toolbar' }, filter, showArchived, compare)),
    error,
    h(
      'div',
      { class: 'card table-card' },
      h(
        'table',
        { class: 'table jobs-table' },
        h('thead', {}, h('tr', {}, h('th', { class: 'narrow' }), ['Job', 'Status', 'Owner', 'Environment · algorithm', 'Progress', 'ETA', 'Warnings', 'Created'].map((t) => h('th', {}, t)))),
        body,
      ),
    ),
    h('div', { class: 'center' }, more),
  );

  function row(job) {
    const counts = warnings.counts(job.id);
    const check = h('input', {
      type: 'checkbox',
      'aria-label': `select ${job.name}`,
      checked: selected.has(job.id),
      onchange: (e) => {
        if (e.target.checked) selected.add(job.id);
        else selected.delete(job.id);
        compare.disabled = selected.size < 2;
      },
    });
    const now = phase(job);
    return h(
      'tr',
      { dataset: { jobId: job.id, phase: now.name } },
      h('td', { class: 'narrow' }, check),
      h('td', {}, h('a', { href: `#/jobs/${job.id}`, class: 'job-link' }, job.name), labelChips(job.labels), h('div', { class: 'muted mono small' }, job.id.slice(0, 8))),
      h('td', {}, statusPill(job.status), job.archivedAt ? h('span', { class: 'pill archived' }, job.purgedAt ? 'purged' : 'archived') : null, dropBadge(drops.get(job.id)), job.status === 'queued' && job.queue ? h('div', { class: 'muted small' }, `#${job.queue.position} · ${job.queue.reason}`) : null),
      h('td', {}, job.owner.name),
      h('td', {}, `${job.spec?.environment?.id ?? '?'} · ${job.spec?.algorithm?.id ?? '?'}`),
      h('td', { class: 'progress-cell' }, progressBar(now.fraction, now.label), h('span', { class: 'muted small step-label' }, now.label)),
      h('td', { class: 'eta-cell' }, now.eta === null ? '—' : `${duration(now.eta)}${now.name === 'warm-up' ? ' (warm-up)' : ''}`),
      h(
        'td',
        {},
        h(
          'div',
          { class: 'badges' },
          counts.critical ? severityPill('critical', `${counts.critical} critical`) : null,
          counts.warning ? severityPill('warning', `${counts.warning} warning`) : null,
          counts.info ? severityPill('info', `${counts.info} info`) : null,
          counts.critical + counts.warning + counts.info === 0 ? h('span', { class: 'muted small' }, 'none') : null,
        ),
      ),
      h('td', { class: 'muted', title: job.createdAt }, ago(job.createdAt)),
    );
  }

  function render() {
    clear(body, jobs.length ? jobs.map(row) : h('tr', {}, h('td', { colspan: 9, class: 'empty' }, 'No jobs yet. Submit one with the starlab CLI or POST /v1/jobs.')));
    const running = jobs.filter((j) => j.status === 'running').length;
    info.textContent = `${jobs.length} shown · ${running} running${ctx.me?.role === 'admin' ? ' · all users' : ''}`;
  }

  async function load(append) {
    try {
      const query = new URLSearchParams({ limit: '50', ...(status ? { status } : {}), ...(archived ? { archived: 'true' } : {}), ...(append && cursor ? { after: cursor } : {}) });
      const page = await api(`/v1/jobs?${query}`);
      jobs = append ? [...jobs, ...page.data] : page.data;
      cursor = page.next_cursor;
      more.hidden = !page.has_more;
      await Promise.all([warnings.load(page.data), drops.load(page.data)]);
      clear(error);
      render();
    } catch (e) {
      clear(error, problemBox(e));
    }
  }

  /** Re-reads the jobs already shown (all pages), keeping the selection. */
  async function refresh() {
    if (ctx.signal.aborted || document.hidden) return;
    try {
      const query = new URLSearchParams({ limit: String(Math.min(100, Math.max(50, jobs.length))), ...(status ? { status } : {}), ...(archived ? { archived: 'true' } : {}) });
      const page = await api(`/v1/jobs?${query}`);
      jobs = page.data;
      await Promise.all([warnings.load(jobs), drops.load(jobs)]);
      render();
    } catch {
      /* keep what is shown; the next refresh tries again */
    }
  }

  await load(false);
  const timer = setInterval(refresh, REFRESH_MS);
  ctx.signal.addEventListener('abort', () => clearInterval(timer));
}
