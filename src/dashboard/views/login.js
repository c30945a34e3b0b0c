import { api, saveApiKey } from '../api.js';
import { clear, h, problemBox } from '../dom.js';

/** Sign in with an API key: checked against GET /v1/users/me before it is kept. */
export async function renderLogin(main, _params, ctx) {
  const key = h('input', { type: 'password', id: 'api-key', name: 'api-key', autocomplete: 'current-password', placeholder: 'sl_…', required: true, spellcheck: 'false' });
  const remember = h('input', { type: 'checkbox', id: 'remember' });
  const error = h('div');
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'card login-card',
      onsubmit: async (event) => {
        event.preventDefault();
        submit.disabled = true;
        clear(error);
        try {
          const user = await api('/v1/users/me', { key: key.value.trim() });
          saveApiKey(key.value.trim(), remember.checked);
          ctx.signedIn(user);
          location.hash = '#/jobs';
        } catch (e) {
          clear(error, problemBox(e));
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('h1', {}, 'Sign in to StarLab'),
    h('p', { class: 'muted' }, 'Use the API key you use with curl or the starlab CLI. It is sent as a Bearer token and kept only in this browser.'),
    h('label', { for: 'api-key' }, 'API key'),
    key,
    h('label', { class: 'checkbox' }, remember, ' Remember on this browser'),
    error,
    submit,
  );
  clear(main, h('div', { class: 'login' }, form));
  key.focus();
}
