// Small DOM and formatting helpers. Text from the API is only ever inserted as text nodes.

/**
 * h('div', { class: 'card', onclick: fn, dataset: { step: 3 } }, 'text', child, [more])
 * @returns {HTMLElement}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.className = value;
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'value') element.value = value;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A metric value as people read it: 3 decimals, thousands grouped, tiny values in e-notation (gradient norms). */
export function number(value, digits = 3) {
  if (value === undefined || value === null || !Number.isFinite(value)) return '—';
  if (value === 0) return '0';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en');
  if (Math.abs(value) < 10 ** -digits) return value.toExponential(1);
  return Number(value.toFixed(digits)).toString();
}

/** A spec's config object as short `key=value` pairs. */
export function configText(config) {
  return Object.entries(config ?? {})
    .map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : value}`)
    .join(' · ');
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  if (seconds < 60) return `${Math.max(0, Math.round(seconds))}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

export function ago(iso) {
  if (!iso) return '—';
  const seconds = (Date.now() - new Date(iso).getTime()) / 1000;
  if (seconds < 45) return 'just now';
  return `${duration(seconds).split(' ')[0]} ago`;
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * Where a job stands: in its supervised warm-up until step 0 is stored (its own steps, progress
 * and ETA, as the API reports them), then in RL steps. `eta` is the seconds left in the phase,
 * null when not known (not running, or too early to tell).
 */
export function phase(job) {
  const warmup = job.warmup;
  if (warmup && warmup.completed < warmup.steps && job.currentStep === 0 && !TERMINAL.has(job.status)) {
    return { name: 'warm-up', done: warmup.completed, total: warmup.steps, fraction: warmup.completed / warmup.steps, eta: job.status === 'running' ? warmup.etaSeconds : null, label: `warm-up ${warmup.completed}/${warmup.steps}` };
  }
  return { name: 'rl', done: job.currentStep, total: job.totalSteps, fraction: job.progress, eta: job.status === 'running' ? (job.eta?.seconds ?? null) : null, label: `${job.currentStep}/${job.totalSteps}` };
}

/** Label chips (`key=value`), or nothing without labels. */
export function labelChips(labels) {
  const entries = Object.entries(labels ?? {});
  return entries.length ? h('span', { class: 'labels' }, entries.map(([k, v]) => h('span', { class: 'chip', dataset: { label: `${k}=${v}` } }, `${k}=${v}`))) : null;
}

export function statusPill(status) {
  return h('span', { class: `pill status-${status}` }, status);
}

export function severityPill(severity, text = severity) {
  return h('span', { class: `pill severity-${severity}` }, text);
}

export function healthPill(health) {
  return h('span', { class: `pill health-${health}` }, health);
}

export function progressBar(fraction, label) {
  const percent = Math.max(0, Math.min(1, fraction || 0)) * 100;
  return h('div', { class: 'progress', title: label ?? `${percent.toFixed(0)}%` }, h('div', { class: 'progress-fill', style: `width:${percent.toFixed(1)}%` }));
}

/** An error box naming the problem's title, detail and fields. */
export function problemBox(error) {
  const problem = error?.problem ?? {};
  return h(
    'div',
    { class: 'error-box', role: 'alert' },
    h('strong', {}, problem.title ?? 'Something went wrong'),
    problem.detail || error?.message ? h('div', {}, problem.detail ?? error.message) : null,
    problem.errors?.length ? h('ul', {}, problem.errors.map((e) => h('li', {}, h('code', {}, e.field), ' ', e.message))) : null,
  );
}

/**
 * A button that runs `act` (an API call), clearing `errorHost` first and showing the problem
 * there if it fails.
 */
export function actionButton(label, act, errorHost, kind = '') {
  return h(
    'button',
    {
      type: 'button',
      class: `button ${kind}`,
      onclick: async () => {
        clear(errorHost);
        try {
          await act();
        } catch (e) {
          clear(errorHost, problemBox(e));
        }
      },
    },
    label,
  );
}
