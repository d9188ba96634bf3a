// The notebook: cells run in one session's kernel.

import { call, getToken } from './api.js';
import { $, el, showError } from './dom.js';
import { cellOutput } from './render.js';

let session = null;

export function setupNotebook() {
  $('nb-open').addEventListener('click', open);
  $('nb-close').addEventListener('click', close);
  $('nb-add').addEventListener('click', () => addCell('').querySelector('textarea').focus());
  window.addEventListener('pagehide', () => {
    // A session the page leaves open expires by its TTL; try to close it.
    if (session) fetch(`/v1/sessions/${session.id}`, { method: 'DELETE', keepalive: true, headers: authHeaders() }).catch(() => {});
  });
}

function authHeaders() {
  const t = getToken();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

async function open() {
  const opt = $('nb-template').selectedOptions[0];
  const body = opt ? { template: opt.value, language: opt.dataset.language } : {};
  $('nb-open').disabled = true;
  showError('nb-error', null);
  try {
    session = await call('POST', '/v1/sessions', body);
  } catch (err) {
    $('nb-open').disabled = false;
    showError('nb-error', err);
    return;
  }
  $('nb-session').textContent = `session ${session.id} · ${session.template} · start ${session.start}` +
    (session.timing ? ` · opened in ${Math.round(session.timing.total_ms)} ms` : '');
  $('nb-session').dataset.id = session.id;
  $('nb-close').disabled = false;
  $('nb-add').disabled = false;
  $('nb-cells').replaceChildren();
  addCell('');
}

async function close() {
  if (!session) return;
  showError('nb-error', null);
  try {
    await call('DELETE', `/v1/sessions/${session.id}`);
  } catch (err) {
    // A session already gone (expired) is closed all the same.
    if (err.code !== 'session_not_found') {
      showError('nb-error', err);
      return;
    }
  }
  $('nb-session').textContent = `session ${session.id} closed`;
  delete $('nb-session').dataset.id;
  session = null;
  $('nb-close').disabled = true;
  $('nb-add').disabled = true;
  $('nb-open').disabled = false;
  for (const b of $('nb-cells').querySelectorAll('button')) b.disabled = true;
}

function addCell(code) {
  const input = el('textarea', { class: 'code cell-code', rows: 3, spellcheck: 'false' });
  input.value = code;
  const run = el('button', { class: 'cell-run primary' }, 'Run');
  const prompt = el('span', { class: 'prompt' }, 'In [ ]:');
  const out = el('div', { class: 'cell-out' });
  const cell = el('div', { class: 'cell' }, el('div', { class: 'cell-in' }, prompt, input, run), out);
  const go = async () => {
    if (!session) return;
    run.disabled = true;
    prompt.textContent = 'In [*]:';
    out.replaceChildren();
    cell.classList.add('running');
    try {
      const r = await call('POST', `/v1/sessions/${session.id}/execute`, { code: input.value, queue: true });
      prompt.textContent = `In [${r.execution_count}]:`;
      out.replaceChildren(...cellOutput(r));
      cell.dataset.status = r.status;
    } catch (err) {
      prompt.textContent = 'In [!]:';
      out.replaceChildren(el('div', { class: 'error' }, err.text || err.message));
      cell.dataset.status = 'failed';
    } finally {
      cell.classList.remove('running');
      run.disabled = !session;
    }
    // Running the last cell opens the next, as a notebook does.
    if (session && cell === $('nb-cells').lastElementChild && input.value.trim()) addCell('');
  };
  run.addEventListener('click', go);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.shiftKey || e.ctrlKey || e.metaKey)) { e.preventDefault(); go(); }
  });
  $('nb-cells').append(cell);
  return cell;
}
