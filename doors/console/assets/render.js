// Rich outputs of a cell. HTML (a pandas table too) is shown only in a
// sandboxed frame (sandbox="", srcdoc): never parsed into the console's
// own page, and no script of it runs.

import { el } from './dom.js';

// The ANSI colour codes of IPython's tracebacks.
const ansi = /\x1b\[[0-9;]*[A-Za-z]/g;

function utf8Base64(s) {
  const bytes = new TextEncoder().encode(s);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

// bundle renders one MIME bundle, richest type first.
export function bundle(data) {
  if (typeof data['text/html'] === 'string') {
    const frame = el('iframe', { sandbox: '', class: 'html-output', title: 'HTML output' });
    frame.srcdoc = data['text/html'];
    return el('div', { class: 'frame-box' }, frame);
  }
  if (typeof data['image/png'] === 'string') return el('img', { class: 'output', alt: 'image/png output', src: `data:image/png;base64,${data['image/png'].trim()}` });
  if (typeof data['image/jpeg'] === 'string') return el('img', { class: 'output', alt: 'image/jpeg output', src: `data:image/jpeg;base64,${data['image/jpeg'].trim()}` });
  if (typeof data['image/svg+xml'] === 'string') {
    return el('img', { class: 'output', alt: 'image/svg+xml output', src: `data:image/svg+xml;base64,${utf8Base64(data['image/svg+xml'])}` });
  }
  if ('application/json' in data) return el('pre', { class: 'out' }, JSON.stringify(data['application/json'], null, 2));
  for (const t of ['text/markdown', 'text/latex', 'text/plain']) {
    if (typeof data[t] === 'string') return el('pre', { class: 'out' }, data[t]);
  }
  return el('pre', { class: 'out muted' }, `[${Object.keys(data).join(', ')}]`);
}

// cellOutput renders an ExecuteResponse.
export function cellOutput(r) {
  const parts = [];
  if (r.stdout) parts.push(el('pre', { class: 'out' }, r.stdout));
  if (r.stderr) parts.push(el('pre', { class: 'out err' }, r.stderr));
  for (const item of r.results || []) {
    parts.push(el('div', { class: item.main ? 'result main' : 'result' },
      item.main ? el('span', { class: 'prompt' }, `Out[${r.execution_count}]:`) : null, bundle(item.data || {})));
  }
  if (r.error) {
    parts.push(el('div', { class: 'traceback' },
      el('strong', {}, `${r.error.name}: ${r.error.value}`),
      el('pre', { class: 'out err' }, (r.error.traceback || []).join('\n').replace(ansi, ''))));
  }
  const note = [`status ${r.status}`, `reason ${r.reason}`];
  if (r.state_lost) note.push(`state lost: ${r.state_lost_reason || ''}`);
  if (r.kernel_restarted) note.push('kernel restarted');
  if (r.timing) note.push(`exec ${Math.round(r.timing.exec_ms)} ms, total ${Math.round(r.timing.total_ms)} ms`);
  parts.push(el('div', { class: 'cell-meta muted' }, note.join(' · ')));
  return parts;
}
