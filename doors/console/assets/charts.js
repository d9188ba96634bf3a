// Charts drawn as inline SVG, built element by element (no library).

const ns = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(ns, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// The colour class of each start kind.
export function kindClass(kind) {
  return ['pool', 'restore', 'cold', 'kernel'].includes(kind) ? `kind-${kind}` : 'kind-other';
}

// logScale maps milliseconds onto [bottom, top] on a log axis covering
// lo..hi (powers of ten).
function logScale(lo, hi, bottom, top) {
  const a = Math.log10(lo), b = Math.log10(hi);
  return (v) => bottom - ((Math.log10(Math.max(v, lo)) - a) / (b - a)) * (bottom - top);
}

function decades(values) {
  const max = Math.max(1, ...values);
  let hi = 10;
  while (hi < max) hi *= 10;
  return { lo: 1, hi };
}

function axis(g, y, lo, hi, left, right) {
  for (let v = lo; v <= hi; v *= 10) {
    g.append(svg('line', { x1: left, x2: right, y1: y(v), y2: y(v), class: 'gridline' }));
    g.append(svg('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, v >= 1000 ? `${v / 1000} s` : `${v} ms`));
  }
}

function legend(g, kinds, x, y) {
  kinds.forEach((k, i) => {
    g.append(svg('rect', { x: x + i * 90, y: y - 9, width: 10, height: 10, class: kindClass(k) }));
    g.append(svg('text', { x: x + i * 90 + 14, y, class: 'tick' }, k));
  });
}

// barChart draws, per template, a bar per start kind: p50 solid, p99 as
// a lighter bar behind it. rows are GraphQL Aggregate objects.
export function barChart(rows) {
  const templates = [...new Set(rows.map((r) => r.template))].sort();
  const kinds = [...new Set(rows.map((r) => r.startKind))].sort();
  const left = 60, top = 24, bar = 26, gap = 6, groupGap = 30, height = 240;
  const bottom = height - 40;
  const groupWidth = kinds.length * (bar + gap);
  const width = Math.max(420, left + templates.length * (groupWidth + groupGap) + 20);
  const { lo, hi } = decades(rows.map((r) => r.totalP99));
  const y = logScale(lo, hi, bottom, top);
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'p50 and p99 total latency by start kind and template' });
  axis(root, y, lo, hi, left, width - 10);
  templates.forEach((t, ti) => {
    const gx = left + 10 + ti * (groupWidth + groupGap);
    kinds.forEach((k, ki) => {
      const r = rows.find((row) => row.template === t && row.startKind === k);
      if (!r) return;
      const x = gx + ki * (bar + gap);
      const g = svg('g', { class: `bar ${kindClass(k)}`, 'data-template': t, 'data-start-kind': k });
      g.append(svg('rect', { x, y: y(r.totalP99), width: bar, height: Math.max(1, bottom - y(r.totalP99)), class: 'p99' }));
      g.append(svg('rect', { x: x + 4, y: y(r.totalP50), width: bar - 8, height: Math.max(1, bottom - y(r.totalP50)), class: 'p50' }));
      g.append(svg('title', {}, `${t} ${k}: p50 ${r.totalP50} ms, p99 ${r.totalP99} ms over ${r.count} runs`));
      g.append(svg('text', { x: x + bar / 2, y: y(r.totalP99) - 4, 'text-anchor': 'middle', class: 'value' }, String(r.totalP50)));
      root.append(g);
    });
    root.append(svg('text', { x: gx + groupWidth / 2, y: bottom + 18, 'text-anchor': 'middle', class: 'label' }, t));
  });
  legend(root, kinds, left, height - 6);
  return root;
}

// scatter draws recent runs: total time against when each ended, one dot
// per run coloured by its start kind. runs are GraphQL Run objects.
export function scatter(runs) {
  const left = 60, top = 16, width = 720, height = 200, bottom = height - 36, right = width - 10;
  const times = runs.map((r) => Date.parse(r.at));
  const t0 = Math.min(...times), t1 = Math.max(...times);
  const span = Math.max(1, t1 - t0);
  const { lo, hi } = decades(runs.map((r) => r.totalMS));
  const y = logScale(lo, hi, bottom, top);
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'total latency of recent runs' });
  axis(root, y, lo, hi, left, right);
  runs.forEach((r, i) => {
    const x = runs.length === 1 ? (left + right) / 2 : left + 8 + ((times[i] - t0) / span) * (right - left - 16);
    const dot = svg('circle', { cx: x, cy: y(r.totalMS), r: 4, class: `dot ${kindClass(r.startKind)}` });
    dot.append(svg('title', {}, `${r.at} ${r.template} ${r.startKind}: ${r.totalMS} ms (${r.reason ?? r.error})`));
    root.append(dot);
  });
  root.append(svg('text', { x: left, y: bottom + 18, class: 'tick' }, new Date(t0).toLocaleTimeString()));
  root.append(svg('text', { x: right, y: bottom + 18, 'text-anchor': 'end', class: 'tick' }, new Date(t1).toLocaleTimeString()));
  legend(root, [...new Set(runs.map((r) => r.startKind))].sort(), left + 140, height - 4);
  return root;
}
