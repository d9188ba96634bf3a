// Small DOM helpers: elements are built, never parsed from HTML.

export const $ = (id) => document.getElementById(id);

// el makes an element: attrs are set as attributes (class, id, ...),
// children are nodes or strings (text).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// showError puts err's text (or clears it) in the element of id.
export function showError(id, err) {
  const box = $(id);
  if (!err) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  box.textContent = err.text || err.message || String(err);
  box.hidden = false;
}

// ms formats a duration in milliseconds.
export function ms(v) {
  if (v === null || v === undefined) return '';
  return v >= 100 ? `${Math.round(v)} ms` : `${Number(v).toFixed(1)} ms`;
}

// timingTable fills table with a Timing object's phases.
export function timingTable(table, timing) {
  table.replaceChildren(
    el('tr', {}, ['queue', 'acquire', 'start', 'exec', 'total'].map((p) => el('th', {}, p))),
    el('tr', {}, ['queue_ms', 'acquire_ms', 'start_ms', 'exec_ms', 'total_ms'].map((k) => el('td', { 'data-phase': k }, ms(timing?.[k])))),
  );
}

// fillTemplates fills a select with the templates, by name.
export function fillTemplates(select, templates, pick) {
  const keep = select.value;
  select.replaceChildren(...templates.map((t) => el('option', { value: t.name, 'data-language': t.language }, `${t.name} (${t.language})`)));
  const want = templates.find((t) => t.name === keep) || pick(templates);
  if (want) select.value = want.name;
}
