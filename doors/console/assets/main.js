// The console's entry: token entry, the three views, and the templates
// both run views offer.

import { call, getToken, onAuth, setToken } from './api.js';
import { $, fillTemplates, showError } from './dom.js';
import { setupNotebook } from './notebook.js';
import { showOperator } from './operator.js';
import { setupPlayground } from './playground.js';

const views = ['playground', 'notebook', 'operator'];

function route() {
  const want = location.hash.slice(1);
  const view = views.includes(want) ? want : 'playground';
  for (const v of views) {
    $(v).hidden = v !== view;
    $(`nav-${v}`).classList.toggle('active', v === view);
  }
  showOperator(view === 'operator');
}

// The one banner a 401 shows, cleared by the next answer that is not one.
onAuth((err) => {
  const box = $('auth-message');
  if (!err) {
    box.hidden = true;
    return;
  }
  box.textContent = getToken()
    ? `The server refused this token (${err.code}: ${err.message}). Paste a valid bearer token above and press Save.`
    : `This server needs a token (${err.code}: ${err.message}). Paste a bearer token above and press Save.`;
  box.hidden = false;
});

function tokenState() {
  $('token-state').textContent = getToken() ? 'token set (this tab only)' : 'no token';
}

// templates loads GET /v1/templates into both views' pickers.
async function templates() {
  try {
    const list = await call('GET', '/v1/templates');
    const all = list.templates || [];
    const defaultFor = (use) => (ts) => ts.find((t) => t.language === 'python' && (t.default_for || []).includes(use)) || ts.find((t) => t.language === 'python') || ts[0];
    fillTemplates($('pg-template'), all, defaultFor('runs'));
    fillTemplates($('nb-template'), all, defaultFor('sessions'));
    document.body.dataset.templates = 'loaded';
  } catch (err) {
    // A 401 is the banner's; the pickers stay empty and a run goes to
    // the server's default template for Python.
    if (err.status !== 401) showError('pg-error', err);
    document.body.dataset.templates = 'failed';
  }
}

function setup() {
  $('version').textContent = document.body.dataset.version || '';
  $('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    setToken($('token').value.trim());
    $('token').value = '';
    tokenState();
    templates();
  });
  $('token-clear').addEventListener('click', () => {
    setToken('');
    tokenState();
    templates();
  });
  setupPlayground();
  setupNotebook();
  window.addEventListener('hashchange', route);
  tokenState();
  route();
  templates();
}

setup();
