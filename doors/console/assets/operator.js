// The operator view: pools, recent runs and latencies from /v1/graphql,
// polled every 2 s while the view is shown.

import { gql } from './api.js';
import { $, el, showError } from './dom.js';
import { barChart, kindClass, scatter } from './charts.js';

const pollEvery = 2000;

const poolsQuery = `query ConsolePools {
  pools { template target floor ceiling ready inUse starting waiting hits misses hitRate restores coldStarts restoreFailures snapshot image healthy }
}`;
const historyQuery = `query ConsoleHistory($first: Int, $all: Boolean) {
  runs(first: $first, filter: {allTenants: $all}) { items { id kind at tenant door template runtime startKind queueMS acquireMS startMS execMS totalMS reason error exitCode network { mode allow } } }
  aggregates(filter: {allTenants: $all}) { startKind template count totalP50 totalP99 acquireP50 acquireP99 startP50 startP99 }
}`;
const viewerQuery = 'query ConsoleViewer { viewer { tenant scopes historyEnabled } }';

let timer = null;
let active = false;

export function showOperator(on) {
  active = on;
  clearTimeout(timer);
  if (on) poll();
}

// Each round waits for the previous one: a slow server is never asked
// twice at once.
async function poll() {
  await Promise.all([viewer(), pools(), history()]);
  if (active) timer = setTimeout(poll, pollEvery);
}

// failed shows why a GraphQL request got no answer at all (a refusal
// before GraphQL, such as a 401 or a server without the door).
function failed(err) {
  if (err.status === 404) {
    showError('op-error', { text: `This server does not serve GraphQL at /v1/graphql (${err.text}).` });
  } else {
    showError('op-error', err);
  }
}

let viewerShown = false;
async function viewer() {
  if (viewerShown) return;
  try {
    const { data } = await gql(viewerQuery);
    if (!data) return;
    const v = data.viewer;
    $('op-viewer').textContent = `Signed in as ${v.tenant || 'the anonymous tenant'} (${v.scopes.join(', ') || 'no scopes'}); history ${v.historyEnabled ? 'on' : 'off'}.`;
    viewerShown = true;
  } catch {
    // pools() reports a failed request.
  }
}

async function pools() {
  let answer;
  try {
    answer = await gql(poolsQuery);
  } catch (err) {
    failed(err);
    return;
  }
  showError('op-error', null);
  showError('op-pools-error', answer.errors[0]);
  if (!answer.data) return;
  const cols = ['template', 'ready', 'target', 'floor', 'ceiling', 'inUse', 'starting', 'waiting', 'hits', 'misses', 'hitRate', 'coldStarts', 'restores', 'image', 'snapshot', 'healthy'];
  $('op-pools').replaceChildren(
    el('tr', {}, cols.map((c) => el('th', {}, c))),
    ...answer.data.pools.map((p) => el('tr', { 'data-template': p.template }, cols.map((c) => el('td', { 'data-col': c }, cell(c, p[c]))))),
  );
}

function cell(col, v) {
  if (v === null || v === undefined) return '—';
  if (col === 'hitRate') return `${Math.round(v * 100)}%`;
  return String(v);
}

// historyNote says why the history gave nothing: "history off" for a
// server that keeps none, else the error verbatim.
function historyNote(err) {
  if (!err) return null;
  if (err.code === 'history_off') return { text: 'History off: this server keeps no history of runs (--history-db off).' };
  return err;
}

async function history() {
  let answer;
  try {
    answer = await gql(historyQuery, { first: 30, all: $('op-all').checked });
  } catch (err) {
    failed(err);
    return;
  }
  const data = answer.data || {};
  const errOf = (field) => answer.errors.find((e) => e.code === 'history_off') || (data[field] ? null : answer.errors[0]);
  showError('op-runs-error', historyNote(errOf('runs')));
  showError('op-aggregates-error', historyNote(errOf('aggregates')));
  if (data.runs) runs(data.runs.items);
  if (data.aggregates) {
    $('op-chart').replaceChildren(data.aggregates.length ? barChart(data.aggregates) : el('p', { class: 'muted' }, 'No runs in the last hour.'));
  }
}

function runs(items) {
  const cols = ['at', 'kind', 'door', 'tenant', 'template', 'startKind', 'queueMS', 'acquireMS', 'startMS', 'execMS', 'totalMS', 'reason', 'exitCode', 'network'];
  const cell = (r, c) => {
    switch (c) {
      case 'reason': return r.reason ?? `error ${r.error}`;
      case 'at': return new Date(r.at).toLocaleTimeString();
      case 'network': return networkText(r.network);
      default: return String(r[c]);
    }
  };
  $('op-runs').replaceChildren(
    el('tr', {}, cols.map((c) => el('th', {}, c))),
    ...items.map((r) => el('tr', { 'data-id': r.id, class: kindClass(r.startKind) }, cols.map((c) => el('td', { 'data-col': c }, cell(r, c))))),
  );
  $('op-scatter').replaceChildren(items.length ? scatter(items) : el('p', { class: 'muted' }, 'No runs yet.'));
}

// networkText is a run's egress policy as the table shows it: the hosts
// it allowed, "none" for a networked one that allowed nothing, and a
// dash for one without a network.
function networkText(n) {
  if (!n) return '—';
  return n.mode === 'none' ? 'none' : n.allow.join(' ');
}
