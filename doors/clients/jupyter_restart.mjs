// Drives a Jupyter kernel with the real @jupyterlab/services client through
// a cell that cannot be interrupted, and prints one JSON report: the
// cell's reply and the statuses its kernel went through, then a cell on
// the same kernel id once the client has reconnected to the fresh kernel.
// Usage: node jupyter_restart.mjs BASE_URL TOKEN python3|javascript
import { KernelManager, ServerConnection } from '@jupyterlab/services';
import WebSocket from 'ws';

console.debug = console.info = () => {};
console.log = console.warn = (...a) => process.stderr.write(a.join(' ') + '\n');

const [baseUrl, token, kernelName] = process.argv.slice(2);
const serverSettings = ServerConnection.makeSettings({
  baseUrl, wsUrl: baseUrl.replace(/^http/, 'ws'), token, appendToken: true, WebSocket,
});

// run executes code and resolves with its reply and what iopub said.
async function run(kernel, code) {
  const future = kernel.requestExecute({ code, stop_on_error: true });
  const out = { results: [], errors: [] };
  future.onIOPub = (msg) => {
    const c = msg.content;
    if (msg.header.msg_type === 'execute_result') out.results.push(c.data['text/plain'] ?? null);
    if (msg.header.msg_type === 'error') out.errors.push(c.ename);
  };
  const reply = await future.done;
  out.reply = { status: reply.content.status, count: reply.content.execution_count, ename: reply.content.ename ?? null, evalue: reply.content.evalue ?? null };
  return out;
}

// settled resolves once the kernel connection, after a restart, is
// connected and its kernel idle again.
function settled(kernel) {
  return new Promise((resolve) => {
    const check = () => {
      if (kernel.connectionStatus === 'connected' && kernel.status === 'idle') {
        kernel.statusChanged.disconnect(check);
        kernel.connectionStatusChanged.disconnect(check);
        resolve();
      }
    };
    kernel.statusChanged.connect(check);
    kernel.connectionStatusChanged.connect(check);
    check();
  });
}

const kernels = new KernelManager({ serverSettings });
const kernel = await kernels.startNew({ name: kernelName });
await kernel.info;
const py = kernelName === 'python3';
const report = { idBefore: kernel.id };
report.set = await run(kernel, py ? 'x = 41' : 'let x = 41');
if (!py) await run(kernel, 'setImmediate(() => { for (;;) {} })'); // holds node's only thread from now on

// Every status the client's kernel object goes through from here on: on
// the server's "restarting" @jupyterlab/services says "autorestarting",
// clears its state and reconnects (the "starting" that follows is then
// seen as a status, not as an iopub message).
report.clientStatuses = [];
const back = new Promise((resolve) => {
  kernel.statusChanged.connect((_, status) => {
    report.clientStatuses.push(status);
    if (status === 'starting' && report.clientStatuses.includes('autorestarting')) resolve();
  });
});
report.stuck = await run(kernel, py ? "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')" : "'never read'");
await back;
await settled(kernel);
report.next = await run(kernel, '1 + 1');
report.gone = await run(kernel, 'x');
report.idAfter = kernel.id;
const model = await fetch(`${baseUrl}/api/kernels/${kernel.id}`, { headers: { Authorization: `token ${token}` } });
const m = await model.json();
report.state = m.execution_state;
report.modelId = m.id;
await kernel.shutdown();
process.stdout.write(JSON.stringify(report) + '\n');
kernels.dispose();
process.exit(0);
