import { api } from '../api.js';
import { ago, clear, h, problemBox } from '../dom.js';

const REFRESH_MS = 3000;

/** Capacity, workers, and who waits for what and why (GET /v1/queue). */
export async function renderQueue(main, _params, ctx) {
  const content = h('div');
  clear(main, h('div', { class: 'page-header' }, h('div', {}, h('h1', {}, 'Queue'), h('div', { class: 'muted small' }, 'Fair share across users: the next free slot goes to the user with the fewest active jobs, then the least recent usage.'))), content);
  const table = (headings, rows, empty) =>
    rows.length
      ? h('table', { class: 'table compact' }, h('thead', {}, h('tr', {}, headings.map((t) => h('th', {}, t)))), h('tbody', {}, rows))
      : h('p', { class: 'muted' }, empty);
  const jobCell = (jobId) => (jobId ? h('a', { href: `#/jobs/${jobId}`, class: 'mono' }, jobId.slice(0, 8)) : h('span', { class: 'muted' }, 'hidden'));

  async function load() {
    const q = await api('/v1/queue');
    clear(
      content,
      h(
        'div',
        { class: 'stat-row' },
        Object.entries(q.capacity).map(([device, c]) => stat(`${device.toUpperCase()} slots`, `${c.busy} / ${c.slots}`, c.slots === 0 ? 'no live worker' : `${c.slots - c.busy} free`)),
        stat('Waiting', String(q.waiting.length), `${q.waiting.filter((w) => w.admitted).length} admitted`),
        stat('Running', String(q.running.length), `${q.workers.length} worker${q.workers.length === 1 ? '' : 's'}`),
      ),
      h(
        'section',
        { class: 'card waiting-card' },
        h('h2', {}, 'Waiting'),
        table(
          ['#', 'Owner', 'Job', 'Device', 'Priority', 'Why it waits'],
          q.waiting.map((w) => h('tr', {}, h('td', {}, w.admitted ? '→' : String(w.position)), h('td', {}, w.owner), h('td', {}, jobCell(w.jobId)), h('td', {}, w.device), h('td', {}, String(w.priority)), h('td', { class: 'reason' }, w.reason))),
          'Nobody is waiting.',
        ),
      ),
      h(
        'div',
        { class: 'two-columns' },
        h(
          'section',
          { class: 'card' },
          h('h2', {}, 'Running'),
          table(['Owner', 'Job', 'Worker', 'Step'], q.running.map((r) => h('tr', {}, h('td', {}, r.owner), h('td', {}, jobCell(r.jobId)), h('td', { class: 'mono small' }, r.worker ?? '—'), h('td', {}, `${r.currentStep} / ${r.totalSteps}`))), 'Nothing is running.'),
        ),
        h(
          'section',
          { class: 'card' },
          h('h2', {}, 'Workers'),
          table(
            ['Worker', 'Device', 'Backend', 'Busy', 'Heartbeat'],
            q.workers.map((w) => h('tr', {}, h('td', { class: 'mono small' }, w.id), h('td', {}, w.device), h('td', {}, w.backend), h('td', {}, `${w.running} / ${w.slots}`), h('td', { class: 'muted' }, ago(w.lastHeartbeatAt)))),
            'No live worker: queued jobs wait until one announces itself.',
          ),
        ),
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Users'),
        table(
          ['User', 'Active jobs', 'Limit', 'Recent usage (slot-seconds, decayed)'],
          q.users.map((u) => h('tr', {}, h('td', {}, u.owner), h('td', {}, String(u.active)), h('td', {}, String(u.maxRunning)), h('td', {}, String(u.decayedUsageSlotSeconds)))),
          'No user has active or waiting jobs.',
        ),
      ),
    );
  }

  function stat(label, value, note) {
    return h('div', { class: 'card stat' }, h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value' }, value), h('div', { class: 'muted small' }, note));
  }

  await load();
  const timer = setInterval(() => {
    if (!document.hidden) load().catch((e) => clear(content, problemBox(e)));
  }, REFRESH_MS);
  ctx.signal.addEventListener('abort', () => clearInterval(timer));
}
