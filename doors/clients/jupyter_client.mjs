// Drives a Jupyter kernel service with the real @jupyterlab/services
// client (ws as its WebSocket) and prints one JSON report of what came back.
// Usage: node jupyter_client.mjs BASE_URL TOKEN python3|javascript [keep]
// With "keep", the first kernel is left running after a cell wrote
// paddock-proof.txt in its working directory, for the caller to find.
import { KernelManager, ServerConnection, SessionManager, KernelSpecManager } from '@jupyterlab/services';
import WebSocket from 'ws';

// The client library logs its connection steps; stdout carries only the report.
console.debug = console.info = () => {};
console.log = console.warn = (...a) => process.stderr.write(a.join(' ') + '\n');

const [baseUrl, token, kernelName, keep] = process.argv.slice(2);
const serverSettings = ServerConnection.makeSettings({
  baseUrl, wsUrl: baseUrl.replace(/^http/, 'ws'), token, appendToken: true, WebSocket,
});

// run executes code and gathers what the kernel's iopub said about it.
async function run(kernel, code, opts = {}) {
  const future = kernel.requestExecute({ code, allow_stdin: !!opts.input, stop_on_error: true });
  const out = { streams: '', results: [], displays: [], errors: [], inputCount: null, statuses: [], prompts: [] };
  future.onIOPub = (msg) => {
    const c = msg.content;
    switch (msg.header.msg_type) {
      case 'stream': out.streams += c.text; break;
      case 'execute_input': out.inputCount = c.execution_count; break;
      case 'execute_result': out.results.push({ count: c.execution_count, text: c.data['text/plain'] ?? null }); break;
      case 'display_data': out.displays.push(Object.keys(c.data)); break;
      case 'error': out.errors.push({ ename: c.ename, evalue: c.evalue, traceback: c.traceback.length }); break;
      case 'status': out.statuses.push(c.execution_state); break;
    }
  };
  if (opts.input) {
    future.onStdin = (msg) => {
      out.prompts.push(msg.content.prompt);
      future.sendInputReply({ status: 'ok', value: opts.input }, msg.header);
    };
  }
  if (opts.started) opts.started(future);
  const reply = await future.done;
  out.reply = { status: reply.content.status, count: reply.content.execution_count, ename: reply.content.ename ?? null };
  out.parentMatches = reply.parent_header.msg_id === future.msg.header.msg_id;
  return out;
}

// waitFor resolves once the kernel's iopub shows an execute_input for future.
function executing(kernel, future) {
  return new Promise((resolve) => {
    const seen = (_, msg) => {
      if (msg.header.msg_type === 'execute_input' && msg.parent_header.msg_id === future.msg.header.msg_id) {
        kernel.iopubMessage.disconnect(seen);
        resolve();
      }
    };
    kernel.iopubMessage.connect(seen);
  });
}

// ready resolves with the kernel's info. Jupyter Server 1.23's gateway
// mode drops a message that reaches it before its own connection to the
// gateway exists (its first kernel_info_request, at times), so a request
// not answered within a generous 15 s is asked again, at most 3 times.
async function ready(conn) {
  for (let i = 0; ; i++) {
    let timer;
    const late = new Promise((resolve) => { timer = setTimeout(resolve, 15000, null); });
    const info = await Promise.race([conn.info, late]);
    clearTimeout(timer);
    if (info) return info;
    if (i === 2) throw new Error('kernel_info_request unanswered 3 times');
    process.stderr.write('jupyter_client: kernel_info unanswered, asking again\n');
    await Promise.race([conn.requestKernelInfo(), new Promise((resolve) => setTimeout(resolve, 15000))]);
  }
}

const report = {};
const step = (name) => process.stderr.write(`jupyter_client: ${name}\n`);
const specs = new KernelSpecManager({ serverSettings });
await specs.refreshSpecs();
report.specs = { default: specs.specs.default, names: Object.keys(specs.specs.kernelspecs).sort(),
  display: specs.specs.kernelspecs[kernelName].display_name, language: specs.specs.kernelspecs[kernelName].language };

const kernels = new KernelManager({ serverSettings });
step('startNew');
const kernel = await kernels.startNew({ name: kernelName });
report.kernelId = kernel.id;
step('info');
const info = await ready(kernel);
report.info = { protocol: info.protocol_version, language: info.language_info.name, version: info.language_info.version };
report.protocol = kernel.serverSettings && kernel['_ws'] ? kernel['_ws'].protocol : null;

// A second client on the same kernel sees its iopub.
const other = kernels.connectTo({ model: { id: kernel.id, name: kernelName } });
step('other.info');
await ready(other);
// It resolves once the other client has seen the hello printed by the first.
const otherSaw = new Promise((resolve) => {
  other.iopubMessage.connect((_, msg) => {
    if (msg.header.msg_type === 'stream' && msg.content.text.includes('hello')) resolve(msg.content.text);
  });
});

const py = kernelName === 'python3';
step('first');
report.first = await run(kernel, py ? 'x = 41' : 'const x = 41');
step('second');
report.second = await run(kernel, 'x + 1');
step('print');
report.print = await run(kernel, py ? "print('hello from paddock')" : "console.log('hello from paddock')");
step('otherSaw');
report.otherSaw = await otherSaw;
if (py) {
  report.plot = await run(kernel, 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()');
  report.fail = await run(kernel, '1/0');
} else {
  report.await = await run(kernel, 'await new Promise(r => setTimeout(() => r(7), 10))');
  report.fail = await run(kernel, 'null.x');
}
const complete = await kernel.requestComplete({ code: py ? 'import o' : 'Math.fl', cursor_pos: py ? 8 : 7 });
report.complete = { status: complete.content.status, matches: complete.content.matches };
const inspect = await kernel.requestInspect({ code: py ? 'len' : 'Math', cursor_pos: py ? 3 : 4, detail_level: 0 });
report.inspect = { status: inspect.content.status, found: inspect.content.found, text: (inspect.content.data || {})['text/plain'] ?? null };
const isComplete = await kernel.requestIsComplete({ code: py ? 'for i in range(3):' : 'function f() {' });
report.isComplete = isComplete.content.status;

// Interrupt a busy loop; the state stays.
let looping;
const loop = run(kernel, py ? 'while True: pass' : 'while (true) {}', { started: (f) => { looping = executing(kernel, f); } });
await looping;
await kernel.interrupt();
step('interrupted');
report.interrupted = await loop;
step('afterInterrupt');
report.afterInterrupt = await run(kernel, 'x');

step('noStdin');
report.noStdin = await run(kernel, py ? "input('who? ')" : "await input('who? ')");
step('input');
report.input = await run(kernel, py ? "name = input('who? ')\nprint('hi ' + name)" : "const name = await input('who? ')\nconsole.log('hi ' + name)", { input: 'paddock' });

const hist = await kernel.requestHistory({ hist_access_type: 'tail', n: 3, output: false, raw: true });
report.history = hist.content.history.map((h) => h[2]);

step('restart');
await kernel.restart();
await ready(kernel);
step('afterRestart');
report.afterRestart = await run(kernel, 'x');

// JupyterLab's session manager: a notebook path with a kernel.
const sessions = new SessionManager({ kernelManager: kernels, serverSettings });
const session = await sessions.startNew({ path: 'paddock.ipynb', type: 'notebook', name: 'paddock.ipynb', kernel: { name: kernelName } });
report.session = { path: session.path, kernelName: session.kernel.name };
step('sessionRun');
await ready(session.kernel);
report.sessionRun = await run(session.kernel, py ? '6 * 7' : '6 * 7');
report.sessionKernel = session.kernel.id;
await session.shutdown();

other.dispose();
if (keep === 'keep') {
  report.proof = await run(kernel, py
    ? "open('paddock-proof.txt', 'w').write('written by kernel ' + " + JSON.stringify(kernel.id) + ")"
    : "require('fs').writeFileSync('paddock-proof.txt', 'written by kernel ' + " + JSON.stringify(kernel.id) + ")");
} else {
  await kernel.shutdown();
}
const left = await fetch(`${baseUrl}/api/kernels`, { headers: { Authorization: `token ${token}` } });
report.kernelsLeft = (await left.json()).length;
const anon = await fetch(`${baseUrl}/api/kernels`);
report.anonymousStatus = anon.status;

process.stdout.write(JSON.stringify(report) + '\n');
kernels.dispose();
sessions.dispose();
process.exit(0);
