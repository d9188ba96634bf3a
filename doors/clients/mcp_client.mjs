// Drives Paddock's MCP server with the official TypeScript SDK client and
// prints what it saw as one JSON object; cmd/paddock/mcp_e2e_test.go
// asserts on it.
//
//   node mcp_client.mjs http URL [TOKEN]       Streamable HTTP
//   node mcp_client.mjs stdio PADDOCK_BIN URL [TOKEN]   `paddock mcp` over stdio
//   node mcp_client.mjs noauth URL [TOKEN]     connect only, reporting a refusal
//   node mcp_client.mjs hibernate URL [TOKEN]  pause_session, resume_session and fork_session
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [mode, ...args] = process.argv.slice(2);

function transport() {
  if (mode === 'stdio') {
    const [bin, url, token] = args;
    const env = { PATH: process.env.PATH ?? '' };
    if (token) env.PADDOCK_TOKEN = token;
    return new StdioClientTransport({ command: bin, args: ['mcp', '--url', url], env, stderr: 'inherit' });
  }
  const [url, token] = args;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
}

const texts = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text);

async function main() {
  const client = new Client({ name: 'paddock-e2e', version: '1.0.0' });
  if (mode === 'noauth') {
    try {
      await client.connect(transport());
      return { connected: true };
    } catch (e) {
      return { connected: false, code: e.code ?? null, message: String(e.message ?? e) };
    }
  }
  await client.connect(transport());
  if (mode === 'hibernate') return hibernate(client);
  const out = {};
  const { tools } = await client.listTools();
  out.tools = tools
    .map((t) => ({ name: t.name, input: Object.keys(t.inputSchema.properties ?? {}).sort(), required: t.inputSchema.required ?? [], output: !!t.outputSchema }))
    .sort((a, b) => a.name.localeCompare(b.name));
  out.runCodeDescription = tools.find((t) => t.name === 'run_code').description;

  const run = await client.callTool({ name: 'run_code', arguments: { language: 'python', code: 'print(6*7)' } });
  out.run = { isError: !!run.isError, texts: texts(run), stdout: run.structuredContent?.stdout, exit: run.structuredContent?.exit_code };

  const node = await client.callTool({ name: 'run_code', arguments: { language: 'node', code: 'console.log([1,2,3].map(x => x * 2).join(","))' } });
  out.node = { isError: !!node.isError, texts: texts(node) };

  const created = await client.callTool({ name: 'create_session', arguments: { language: 'python' } });
  const id = created.structuredContent.session_id;
  out.session = { isError: !!created.isError, language: created.structuredContent.language };
  const cell = (code) => client.callTool({ name: 'execute', arguments: { session_id: id, code } });

  await cell('x = 41');
  const second = await cell('x + 1');
  out.state = { isError: !!second.isError, texts: texts(second), result: second.structuredContent.result, count: second.structuredContent.execution_count };

  const plot = await cell('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()');
  const img = plot.content.find((c) => c.type === 'image');
  out.plot = {
    isError: !!plot.isError,
    types: plot.content.map((c) => c.type),
    mimeType: img?.mimeType ?? null,
    head: img ? Buffer.from(img.data, 'base64').subarray(0, 8).toString('hex') : null,
  };

  const bad = await cell('1/0');
  out.error = { isError: !!bad.isError, texts: texts(bad), name: bad.structuredContent?.error?.name ?? null };

  const written = await client.callTool({ name: 'write_file', arguments: { session_id: id, path: 'notes/a.txt', content: 'hello' } });
  const listed = await client.callTool({ name: 'list_files', arguments: { session_id: id, path: 'notes' } });
  const read = await client.callTool({ name: 'read_file', arguments: { session_id: id, path: 'notes/a.txt' } });
  out.files = { written: written.structuredContent, listed: listed.structuredContent.entries.map((e) => e.name), read: texts(read) };

  // A cell stuck in native code outlives its interrupt: its kernel is
  // killed at the timeout, and the session goes on with a fresh one.
  const stuck = await client.callTool({ name: 'execute', arguments: { session_id: id, code: "import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')", timeout_ms: 1000 } });
  const afterStuck = await cell('1 + 1');
  const gone = await cell('x');
  out.stuck = {
    isError: !!stuck.isError,
    texts: texts(stuck),
    reason: stuck.structuredContent?.reason ?? null,
    stateLost: stuck.structuredContent?.state_lost ?? false,
    restarted: stuck.structuredContent?.kernel_restarted ?? false,
    next: texts(afterStuck),
    nextCount: afterStuck.structuredContent?.execution_count ?? null,
    gone: gone.structuredContent?.error?.name ?? null,
  };

  // A session left open ends with the MCP session (the test checks).
  const left = await client.callTool({ name: 'create_session', arguments: { language: 'node' } });
  out.left = left.structuredContent.session_id;
  const nodeCell = await client.callTool({ name: 'execute', arguments: { session_id: out.left, code: 'const y = 20' } });
  const nodeNext = await client.callTool({ name: 'execute', arguments: { session_id: out.left, code: 'y * 2 + 2' } });
  out.nodeState = { isError: !!(nodeCell.isError || nodeNext.isError), texts: texts(nodeNext) };

  const closed = await client.callTool({ name: 'close_session', arguments: { session_id: id } });
  out.closed = closed.structuredContent;
  const after = await cell('x');
  out.afterClose = { isError: !!after.isError, texts: texts(after) };
  // Ending the MCP session (DELETE) closes the sessions it opened; the
  // stdio transport ends it by closing paddock mcp's stdin.
  if (mode === 'http') await client.transport.terminateSession();
  await client.close();
  return out;
}

// hibernate pauses a session between two cells, resumes it, and forks
// it; /v1 (same tenant) says what state the server holds it in meanwhile.
async function hibernate(client) {
  const [url, token] = args;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const stateOnV1 = async (id) => (await (await fetch(new URL(`/v1/sessions/${id}`, url), { headers })).json()).state;
  const call = async (name, a) => {
    const r = await client.callTool({ name, arguments: a });
    return { isError: !!r.isError, texts: texts(r), out: r.structuredContent ?? null };
  };
  const created = await call('create_session', { language: 'python' });
  const id = created.out.session_id;
  const out = { id };
  out.set = await call('execute', { session_id: id, code: 'x = 41' });
  out.paused = await call('pause_session', { session_id: id });
  out.pausedOnV1 = await stateOnV1(id);
  out.woken = await call('execute', { session_id: id, code: 'x + 1' });
  out.wokenOnV1 = await stateOnV1(id);
  out.resumeAwake = await call('resume_session', { session_id: id });
  await call('pause_session', { session_id: id });
  out.resumeAsleep = await call('resume_session', { session_id: id });
  out.forked = await call('fork_session', { session_id: id, count: 2 });
  out.children = [];
  for (const child of out.forked.out?.sessions ?? []) {
    out.children.push({ id: child.session_id, cell: await call('execute', { session_id: child.session_id, code: 'x' }) });
  }
  out.parentAfter = await call('execute', { session_id: id, code: 'x' });
  // Ending the MCP session closes the parent and the forks (the test checks).
  await client.transport.terminateSession();
  await client.close();
  return out;
}

main().then(
  (out) => { console.log(JSON.stringify(out)); process.exit(0); },
  (err) => { console.error(err); process.exit(1); },
);
