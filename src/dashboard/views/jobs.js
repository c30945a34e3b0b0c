import { api } from '../api.js';
import { ago, clear, duration, eta, h, problemBox, progressBar, severityPill, statusPill } from '../dom.js';
import { WarningCache } from './warnings.js';

const REFRESH_MS = 5000;
const STATUSES = ['', 'queued', 'running', 'paused', 'succeeded', 'failed', 'cancelled'];

/** Every job the caller may see, newest first, with status, owner, progress, ETA and warning badges. */
export async function renderJobs(main, _params, ctx) {
  const warnings = new WarningCache();
  const selected = new Set();
  let status = new URLSearchParams(location.hash.split('?')[1] ?? '').get('status') ?? '';
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
  const error = h('div');
  clear(
    main,
    h('div', { class: 'page-header' }, h('div', {}, h('h1', {}, 'Jobs'), info), h('div', { class: 'toolbar' }, filter, compare)),
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
    const remaining = eta(job);
    return h(
      'tr',
      { dataset: { jobId: job.id } },
      h('td', { class: 'narrow' }, check),
      h('td', {}, h('a', { href: `#/jobs/${job.id}`, class: 'job-link' }, job.name), h('div', { class: 'muted mono small' }, job.id.slice(0, 8))),
      h('td', {}, statusPill(job.status), job.status === 'queued' && job.queue ? h('div', { class: 'muted small' }, `#${job.queue.position} · ${job.queue.reason}`) : null),
      h('td', {}, job.owner.name),
      h('td', {}, `${job.spec?.environment?.id ?? '?'} · ${job.spec?.algorithm?.id ?? '?'}`),
      h('td', { class: 'progress-cell' }, progressBar(job.progress), h('span', { class: 'muted small' }, `${job.currentStep}/${job.totalSteps}`)),
      h('td', {}, remaining === null ? '—' : duration(remaining)),
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
      const query = new URLSearchParams({ limit: '50', ...(status ? { status } : {}), ...(append && cursor ? { after: cursor } : {}) });
      const page = await api(`/v1/jobs?${query}`);
      jobs = append ? [...jobs, ...page.data] : page.data;
      cursor = page.next_cursor;
      more.hidden = !page.has_more;
      await warnings.load(page.data);
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
      const query = new URLSearchParams({ limit: String(Math.min(100, Math.max(50, jobs.length))), ...(status ? { status } : {}) });
      const page = await api(`/v1/jobs?${query}`);
      jobs = page.data;
      await warnings.load(jobs);
      render();
    } catch {
      /* keep what is shown; the next refresh tries again */
    }
  }

  await load(false);
  const timer = setInterval(refresh, REFRESH_MS);
  ctx.signal.addEventListener('abort', () => clearInterval(timer));
}
