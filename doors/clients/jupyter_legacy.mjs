// Speaks the legacy JSON text framing of the kernel WebSocket (no
// subprotocol) with ws, then kills the interpreter to see the kernel
// replaced by a fresh one. Prints one JSON report.
// Usage: node jupyter_legacy.mjs BASE_URL TOKEN MAX_MESSAGE_BYTES
import WebSocket from 'ws';
import { randomUUID } from 'node:crypto';

const [baseUrl, token, maxBytes] = process.argv.slice(2);
const auth = { Authorization: `token ${token}` };
const started = await fetch(`${baseUrl}/api/kernels`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'python3' }) });
const model = await started.json();
const report = { startStatus: started.status, location: started.headers.get('location'), model };

const session = randomUUID();
// The Jupyter Server gateway client sends the token as a header on the WebSocket.
const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/kernels/${model.id}/channels?session_id=${session}`, { headers: auth });
const inbox = [];
let waiters = [];
ws.on('message', (data, isBinary) => {
  const msg = JSON.parse(data.toString());
  msg.binary = isBinary;
  inbox.push(msg);
  waiters = waiters.filter((w) => !w(msg));
});
await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject); });
report.protocol = ws.protocol;

function send(channel, msgType, content) {
  const header = { msg_id: randomUUID(), msg_type: msgType, username: 'legacy', session, date: new Date().toISOString(), version: '5.3' };
  ws.send(JSON.stringify({ channel, header, parent_header: {}, metadata: {}, content, buffers: [] }));
  return header.msg_id;
}
// until resolves with the messages answering id once pred has seen one.
function until(id, pred) {
  return new Promise((resolve) => {
    const check = (m) => {
      if (m.parent_header.msg_id === id && pred(m)) {
        resolve(inbox.filter((x) => x.parent_header.msg_id === id));
        return true;
      }
      return false;
    };
    if (!inbox.some(check)) waiters.push(check);
  });
}
const idle = (m) => m.channel === 'iopub' && m.header.msg_type === 'status' && m.content.execution_state === 'idle';
const brief = (msgs) => msgs.map((m) => `${m.channel}:${m.header.msg_type}${m.header.msg_type === 'status' ? ':' + m.content.execution_state : ''}`);

const info = send('shell', 'kernel_info_request', {});
const infoMsgs = await until(info, idle);
report.info = brief(infoMsgs);
report.textFrames = infoMsgs.every((m) => !m.binary);
report.infoReply = infoMsgs.find((m) => m.header.msg_type === 'kernel_info_reply').content.protocol_version;

const ex = send('shell', 'execute_request', { code: '6 * 7', silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true });
const exMsgs = await until(ex, idle);
report.execute = brief(exMsgs);
report.result = exMsgs.find((m) => m.header.msg_type === 'execute_result').content.data['text/plain'];
report.headerOK = exMsgs.every((m) => ['msg_id', 'msg_type', 'username', 'session', 'date', 'version'].every((k) => typeof m.header[k] === 'string') && m.header.version === '5.3');

// Refusals: a message over the server's size limit closes that
// connection (1009); an unknown kernel name is 400, an unknown kernel 404,
// a bad token 403.
const big = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/kernels/${model.id}/channels?token=${token}`);
await new Promise((resolve, reject) => { big.on('open', resolve); big.on('error', reject); });
report.oversizeClose = await new Promise((resolve) => {
  big.on('close', (code) => resolve(code));
  big.send('x'.repeat(Number(maxBytes) + 1));
});
const cobol = await fetch(`${baseUrl}/api/kernels`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'cobol' }) });
report.unknownName = { status: cobol.status, body: await cobol.json() };
const missing = await fetch(`${baseUrl}/api/kernels/00000000-0000-0000-0000-000000000000`, { headers: auth });
report.unknownKernel = missing.status;
const forged = await fetch(`${baseUrl}/api/kernels`, { headers: { Authorization: 'token not-a-jwt' } });
report.badToken = forged.status;
// At most 256 Jupyter sessions per tenant (here all on one kernel).
let made = 0;
let refused = null;
for (let i = 0; i < 300 && refused === null; i++) {
  const r = await fetch(`${baseUrl}/api/sessions`, { method: 'POST', headers: auth,
    body: JSON.stringify({ path: `n${i}.ipynb`, type: 'notebook', name: '', kernel: { id: model.id } }) });
  if (r.status === 201) made++; else refused = r.status;
}
report.sessionsMade = made;
report.sessionsRefused = refused;
const stillThere = send('shell', 'execute_request', { code: '6 * 7', silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true });
report.afterRefusals = (await until(stillThere, idle)).find((m) => m.header.msg_type === 'execute_result').content.data['text/plain'];

// stop_on_error: requests queued behind a failing cell are aborted; one
// sent after its reply runs. The failing cell waits on input() until the
// request behind it is sent: frames on one connection are read in order,
// so the server has queued that request before it hands the cell its
// input, however slow the machine.
const exec = (code, allowStdin = false) => send('shell', 'execute_request', { code, silent: false, store_history: true, user_expressions: {}, allow_stdin: allowStdin, stop_on_error: true });
const failing = exec('input()\n1/0', true);
await until(failing, (m) => m.channel === 'stdin' && m.header.msg_type === 'input_request');
const behind = exec('6 * 7');
ws.send(JSON.stringify({ channel: 'stdin', header: { msg_id: randomUUID(), msg_type: 'input_reply', username: 'legacy', session, date: new Date().toISOString(), version: '5.3' }, parent_header: {}, metadata: {}, content: { value: 'go' }, buffers: [] }));
const replyOf = async (id) => (await until(id, idle)).find((m) => m.channel === 'shell').content.status;
report.stopOnError = [await replyOf(failing), await replyOf(behind)];
report.afterAbort = (await until(exec('6 * 7'), idle)).find((m) => m.header.msg_type === 'execute_result').content.data['text/plain'];

// A lost kernel: the interpreter dies; the server replaces it under the
// same kernel id and says so on iopub (restarting, then starting), as
// Jupyter Server's auto-restart does.
const die = send('shell', 'execute_request', { code: 'import os\nos._exit(3)', silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true });
const dieMsgs = await until(die, (m) => m.channel === 'shell');
const restarted = (m) => m.header.msg_type === 'status' && m.content.execution_state === 'starting';
await new Promise((resolve) => {
  if (inbox.some(restarted)) return resolve();
  waiters.push((m) => { if (restarted(m)) { resolve(); return true; } return false; });
});
report.died = dieMsgs.find((m) => m.channel === 'shell').content;
report.restartStatuses = inbox.filter((m) => m.parent_header.msg_id === die && m.header.msg_type === 'status').map((m) => m.content.execution_state);
const after = await fetch(`${baseUrl}/api/kernels/${model.id}`, { headers: auth });
report.afterState = (await after.json()).execution_state;
const fresh = await until(exec('6 * 7'), idle);
report.afterRestart = fresh.find((m) => m.header.msg_type === 'execute_result')?.content.data['text/plain'] ?? null;
const del = await fetch(`${baseUrl}/api/kernels/${model.id}`, { method: 'DELETE', headers: auth });
report.deleteStatus = del.status;
ws.close();
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(0);
