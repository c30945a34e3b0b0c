// The dashboard: a hash router over its views, behind a login with an API key.
import { api, apiKey, forgetApiKey, whenUnauthorized } from './api.js';
import { clear, h, problemBox } from './dom.js';
import { renderCompare } from './views/compare.js';
import { renderExperiment, renderExperiments } from './views/experiments.js';
import { renderJob } from './views/job.js';
import { renderJobs } from './views/jobs.js';
import { renderLogin } from './views/login.js';
import { renderQueue } from './views/queue.js';

const main = /** @type {HTMLElement} */ (document.getElementById('view'));
let cleanup = () => {};
/** @type {{ id: string, name: string, role: string } | null} */
let me = null;

const ROUTES = [
  { pattern: /^#\/login$/, view: 'login', render: renderLogin, open: true },
  { pattern: /^#\/jobs\/([0-9a-f-]{36})$/, view: 'jobs', render: renderJob },
  { pattern: /^#\/jobs$/, view: 'jobs', render: renderJobs },
  { pattern: /^#\/experiments\/([0-9a-f-]{36})$/, view: 'experiments', render: renderExperiment },
  { pattern: /^#\/experiments$/, view: 'experiments', render: renderExperiments },
  { pattern: /^#\/queue$/, view: 'queue', render: renderQueue },
  { pattern: /^#\/compare(?:\?(.*))?$/, view: 'compare', render: renderCompare },
];

async function route() {
  cleanup();
  cleanup = () => {};
  const hash = location.hash || '#/jobs';
  const match = ROUTES.map((r) => ({ r, m: r.pattern.exec(hash) })).find((x) => x.m);
  if (!match) {
    location.hash = '#/jobs';
    return;
  }
  if (!match.r.open && !(await signedIn())) {
    location.hash = `#/login`;
    return;
  }
  document.querySelectorAll('[data-nav]').forEach((a) => a.classList.toggle('active', a.getAttribute('data-nav') === match.r.view));
  const controller = new AbortController();
  cleanup = () => controller.abort();
  clear(main, h('div', { class: 'loading' }, 'Loading…'));
  try {
    await match.r.render(main, match.m.slice(1), { signal: controller.signal, me, signedIn: onSignedIn });
  } catch (error) {
    if (!controller.signal.aborted) clear(main, problemBox(error));
  }
}

async function signedIn() {
  if (me) return true;
  if (!apiKey()) return false;
  try {
    onSignedIn(await api('/v1/users/me'));
    return true;
  } catch {
    return false;
  }
}

function onSignedIn(user) {
  me = user;
  document.getElementById('nav').hidden = false;
  document.getElementById('whoami').hidden = false;
  document.getElementById('whoami-name').textContent = `${user.name} · ${user.role}`;
}

function signOut() {
  forgetApiKey();
  me = null;
  document.getElementById('nav').hidden = true;
  document.getElementById('whoami').hidden = true;
  location.hash = '#/login';
}

whenUnauthorized(() => {
  if (location.hash !== '#/login') signOut();
});
document.getElementById('logout').addEventListener('click', signOut);
window.addEventListener('hashchange', route);
route();
