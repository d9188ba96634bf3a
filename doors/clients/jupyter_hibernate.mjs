// Drives a Jupyter kernel with the real @jupyterlab/services client while
// the Paddock session behind it hibernates, and prints one JSON report:
// a cell, then the session paused through /v1 (pause) or left idle until
// the server hibernates it (idle), then a cell on the same open WebSocket.
// Usage: node jupyter_hibernate.mjs BASE_URL TOKEN pause|idle
import { KernelManager, ServerConnection } from '@jupyterlab/services';
import WebSocket from 'ws';

console.debug = console.info = () => {};
console.log = console.warn = (...a) => process.stderr.write(a.join(' ') + '\n');

const [baseUrl, token, mode] = process.argv.slice(2);
const serverSettings = ServerConnection.makeSettings({
  baseUrl, wsUrl: baseUrl.replace(/^http/, 'ws'), token, appendToken: true, WebSocket,
});

// run executes code and gathers its reply and what iopub said about it.
async function run(kernel, code) {
  const future = kernel.requestExecute({ code, stop_on_error: true });
  const out = { results: [], errors: [], statuses: [], inputCount: null };
  future.onIOPub = (msg) => {
    const c = msg.content;
    switch (msg.header.msg_type) {
      case 'execute_input': out.inputCount = c.execution_count; break;
      case 'execute_result': out.results.push({ count: c.execution_count, text: c.data['text/plain'] ?? null }); break;
      case 'error': out.errors.push({ ename: c.ename, evalue: c.evalue, traceback: c.traceback.length }); break;
      case 'status': out.statuses.push(c.execution_state); break;
    }
  };
  const reply = await future.done;
  out.reply = { status: reply.content.status, count: reply.content.execution_count };
  return out;
}

// v1 calls Paddock's own API for the kernel's session, as the same tenant.
async function v1(method, path) {
  const r = await fetch(`${baseUrl}/v1/sessions/${path}`, { method, headers: { Authorization: `Bearer ${token}` } });
  return { status: r.status, body: await r.json() };
}

// hibernated resolves once the server reports the session hibernated,
// asking every 50 ms; the test's own timeout is the safety net.
async function hibernated(id) {
  for (;;) {
    const s = await v1('GET', id);
    if (s.body.state === 'hibernated') return s.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const kernels = new KernelManager({ serverSettings });
const kernel = await kernels.startNew({ name: 'python3' });
await kernel.info;
const session = kernel.id.replaceAll('-', ''); // the Paddock session behind the kernel
const socket = kernel['_ws'];
const report = { mode, connection: [], status: [] };
// Everything the client's kernel object goes through from here on: a
// reconnect or a restart would show here.
kernel.connectionStatusChanged.connect((_, s) => report.connection.push(s));
kernel.statusChanged.connect((_, s) => report.status.push(s));

report.first = await run(kernel, 'x = 41');
if (mode === 'pause') {
  const p = await v1('POST', `${session}/pause`);
  report.paused = { status: p.status, state: p.body.state };
}
report.asleep = await hibernated(session);
const model = await (await fetch(`${baseUrl}/api/kernels/${kernel.id}`, { headers: { Authorization: `token ${token}` } })).json();
report.modelAsleep = { state: model.execution_state, connections: model.connections };
report.second = await run(kernel, 'x + 1');
report.sameSocket = kernel['_ws'] === socket && socket.readyState === WebSocket.OPEN;
report.awake = (await v1('GET', session)).body;
const out = JSON.stringify(report); // before the shutdown's own statuses
await kernel.shutdown();
process.stdout.write(out + '\n');
kernels.dispose();
process.exit(0);
