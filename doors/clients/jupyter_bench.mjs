// Times cell round trips through @jupyterlab/services: from sending an
// execute_request to its future being done (reply and status idle both in).
// Usage: node jupyter_bench.mjs BASE_URL TOKEN N
// Prints {"samples_ms": [...], "result": "<the cell's value>"}.
import { KernelManager, ServerConnection } from '@jupyterlab/services';
import WebSocket from 'ws';
import { performance } from 'node:perf_hooks';

console.debug = console.info = () => {};
console.log = console.warn = (...a) => process.stderr.write(a.join(' ') + '\n');

const [baseUrl, token, n] = process.argv.slice(2);
const serverSettings = ServerConnection.makeSettings({
  baseUrl, wsUrl: baseUrl.replace(/^http/, 'ws'), token, appendToken: true, WebSocket,
});
const kernels = new KernelManager({ serverSettings });
const kernel = await kernels.startNew({ name: 'python3' });
await kernel.info;

async function cell(code) {
  let value = null;
  const future = kernel.requestExecute({ code });
  future.onIOPub = (msg) => {
    if (msg.header.msg_type === 'execute_result') value = msg.content.data['text/plain'];
  };
  const reply = await future.done;
  if (reply.content.status !== 'ok') throw new Error(`${code}: ${reply.content.status}`);
  return value;
}

await cell('x = 41');
for (let i = 0; i < 5; i++) await cell('x + 1'); // first-use costs on both sides
const samples = [];
let result = null;
for (let i = 0; i < Number(n); i++) {
  const start = performance.now();
  result = await cell('x + 1');
  samples.push(performance.now() - start);
}
await kernel.shutdown();
kernels.dispose();
process.stdout.write(JSON.stringify({ samples_ms: samples, result }) + '\n');
process.exit(0);
