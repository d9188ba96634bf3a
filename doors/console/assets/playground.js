// The playground: one program, one fresh sandbox (POST /v1/run).

import { call } from './api.js';
import { $, el, showError, timingTable } from './dom.js';

const imageTypes = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.svg': 'image/svg+xml' };

export function setupPlayground() {
  $('pg-run').addEventListener('click', run);
  $('pg-code').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); }
  });
}

async function run() {
  const select = $('pg-template');
  const opt = select.selectedOptions[0];
  const body = { code: $('pg-code').value };
  if (opt) {
    body.template = opt.value;
    body.language = opt.dataset.language;
  }
  const patterns = $('pg-outputs').value.split(/[\s,]+/).filter(Boolean);
  if (patterns.length) body.outputs = patterns;
  const button = $('pg-run');
  button.disabled = true;
  button.textContent = 'Running…';
  showError('pg-error', null);
  try {
    show(await call('POST', '/v1/run', body));
  } catch (err) {
    $('pg-result').hidden = true;
    showError('pg-error', err);
  } finally {
    button.disabled = false;
    button.textContent = 'Run';
  }
}

function show(r) {
  $('pg-reason').textContent = r.reason;
  $('pg-reason').className = r.reason === 'ok' ? 'ok' : 'bad';
  $('pg-exit').textContent = String(r.exit_code);
  $('pg-start').textContent = r.start + (r.warm ? ' (warm)' : '');
  $('pg-ran-on').textContent = `${r.template || ''} on ${r.runtime || ''}`;
  timingTable($('pg-timing'), r.timing);
  $('pg-stdout').textContent = r.stdout + (r.stdout_truncated ? '\n[truncated]' : '');
  $('pg-stderr').textContent = r.stderr + (r.stderr_truncated ? '\n[truncated]' : '');
  const files = $('pg-files');
  files.replaceChildren();
  for (const o of r.outputs || []) {
    if (o.error) {
      files.append(el('p', { class: 'note' }, `${o.path || o.pattern}: ${o.error.code}: ${o.error.message}`));
      continue;
    }
    const ext = (o.path.match(/\.[^./]+$/) || [''])[0].toLowerCase();
    const type = imageTypes[ext];
    files.append(el('h3', {}, o.path, el('span', { class: 'muted' }, ` ${o.size} bytes`)));
    if (type) files.append(el('img', { class: 'output', alt: o.path, src: `data:${type};base64,${o.content}` }));
    else files.append(el('pre', { class: 'out' }, decode(o.content)));
  }
  $('pg-result').hidden = false;
}

function decode(b64) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}
