import { api } from '../api.js';
import { clear, h, number, problemBox } from '../dom.js';

const FOLLOW_MS = 1000;

/**
 * Stored transcripts of sampled episodes at a chosen step, the latest by default. A transcript
 * is "--- turn n ---", the observation, "> " and the response, then "reward r".
 */
export function renderTrajectories(card, job, signal) {
  let latest = job.currentStep;
  let step = latest;
  let following = true;
  const slider = h('input', { type: 'range', min: 0, max: Math.max(latest, 0), value: step, 'aria-label': 'step', oninput: (e) => ((step = Number(e.target.value)), (following = step === latest), show()) });
  const input = h('input', { type: 'number', min: 0, max: latest, value: step, class: 'step-input', 'aria-label': 'step number', onchange: (e) => ((step = clamp(Number(e.target.value))), (following = step === latest), show()) });
  const latestButton = h('button', { type: 'button', class: 'button ghost small', onclick: () => ((step = latest), (following = true), show()) }, 'Latest');
  const list = h('div', { class: 'trajectory-list' });
  const title = h('h2', {}, 'Trajectories');
  clear(card, h('div', { class: 'trajectory-header' }, title, h('div', { class: 'toolbar' }, h('span', { class: 'muted small' }, 'step'), slider, input, latestButton)), list);
  let shown = -1;
  let timer;

  function clamp(n) {
    return Math.max(0, Math.min(latest, Number.isFinite(n) ? Math.round(n) : latest));
  }

  /** A chosen step loads after a short pause; while following a live run, at most once a second. */
  function show() {
    slider.value = String(step);
    input.value = String(step);
    if (following && timer) return;
    clearTimeout(timer);
    timer = setTimeout(load, following ? FOLLOW_MS : 150);
  }

  async function load() {
    timer = undefined;
    if (signal.aborted || shown === step) return;
    const at = step;
    try {
      const { data } = await api(`/v1/jobs/${job.id}/trajectories?step=${at}&withText=true&limit=20`);
      shown = at;
      title.textContent = `Trajectories at step ${at}`;
      clear(list, data.length ? data.map(trajectoryCard) : h('p', { class: 'muted' }, `No stored transcripts at step ${at}.`));
      if (step !== at) show();
    } catch (e) {
      clear(list, problemBox(e));
    }
  }

  load();
  return {
    /** A new step arrived: extend the range, and follow it when the latest step is shown. */
    latestStep(n) {
      if (n <= latest) return;
      latest = n;
      slider.max = String(n);
      input.max = String(n);
      if (following) {
        step = n;
        show();
      }
    },
  };
}

function trajectoryCard(t) {
  return h(
    'article',
    { class: `trajectory ${t.success ? 'succeeded' : 'failed'}`, dataset: { group: t.group, sample: t.sample } },
    h(
      'header',
      {},
      h('strong', {}, `group ${t.group} · sample ${t.sample}`),
      h('span', { class: `pill ${t.success ? 'status-succeeded' : 'status-failed'}` }, t.success ? 'success' : 'no success'),
      h('span', { class: 'muted small' }, `return ${number(t.return)} · ${t.turns} turn${t.turns === 1 ? '' : 's'} · ${t.actions} actions · ${t.formatErrors} format errors · ${t.tokens} tokens · seed ${t.envSeed}`),
    ),
    h('div', { class: 'turns' }, parseTranscript(t.text ?? '').map(turnView)),
  );
}

/** @returns {{ turn: number, observation: string, response: string, reward: string }[]} */
export function parseTranscript(text) {
  const parts = text.split(/^--- turn (\d+) ---$/m);
  const turns = [];
  for (let i = 1; i < parts.length; i += 2) {
    const lines = parts[i + 1].replace(/^\n/, '').split('\n');
    const responseAt = lines.findIndex((l) => l.startsWith('> '));
    const rewardAt = lines.findLastIndex((l) => l.startsWith('reward '));
    turns.push({
      turn: Number(parts[i]),
      observation: lines.slice(0, responseAt < 0 ? lines.length : responseAt).join('\n'),
      response: responseAt < 0 ? '' : lines.slice(responseAt, rewardAt < 0 ? lines.length : rewardAt).join('\n').slice(2),
      reward: rewardAt < 0 ? '' : lines[rewardAt].slice(7),
    });
  }
  if (turns.length === 0 && text) turns.push({ turn: 1, observation: text, response: '', reward: '' });
  return turns;
}

function turnView(turn) {
  return h(
    'div',
    { class: 'turn' },
    h('div', { class: 'turn-label' }, `turn ${turn.turn}`),
    h('div', { class: 'turn-body' }, h('pre', { class: 'observation' }, turn.observation), turn.response ? h('pre', { class: 'response' }, turn.response) : null),
    turn.reward ? h('div', { class: `turn-reward ${/penalty/.test(turn.reward) ? 'penalised' : ''}` }, `reward ${turn.reward}`) : null,
  );
}
