// Drives Paddock's E2B door with the real @e2b/code-interpreter SDK.
// cmd/paddock/e2b_e2e_test.go runs it with E2B_API_URL, E2B_SANDBOX_URL and
// E2B_API_KEY pointed at a real Paddock, OTHER_KEY another tenant's token, and
// asserts the one JSON line it prints. Every step records what it saw, errors
// included, so that one failure does not hide the others.
import { Sandbox, NotFoundError, CommandExitError } from '@e2b/code-interpreter'

const out = {}
const step = async (name, fn) => {
  try {
    out[name] = await fn()
  } catch (e) {
    out[name] = { threw: e?.constructor?.name ?? String(e), message: String(e?.message ?? e).slice(0, 300) }
  }
}

const sbx = await Sandbox.create({ timeoutMs: 300_000 })

await step('state', async () => {
  await sbx.runCode('x = 41')
  const r = await sbx.runCode('x + 1')
  return { text: r.text, count: r.executionCount }
})
await step('plot', async () => {
  const r = await sbx.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()')
  const png = r.results.find((x) => x.png)
  return { png: png ? Buffer.from(png.png, 'base64').subarray(0, 8).toString('hex') : null, main: png?.isMainResult ?? null }
})
await step('error', async () => {
  const r = await sbx.runCode('1/0')
  return { name: r.error?.name, value: r.error?.value, traceback: (r.error?.traceback ?? '').includes('ZeroDivisionError') }
})
await step('stdout', async () => {
  const lines = []
  const r = await sbx.runCode('print("streamed")', { onStdout: (m) => lines.push(m.line) })
  return { logs: r.logs.stdout, callback: lines }
})
await step('js', async () => {
  const ctx = await sbx.createCodeContext({ language: 'js' })
  await sbx.runCode('const a = 40', { context: ctx })
  const r = await sbx.runCode('a + 2', { context: ctx })
  const contexts = (await sbx.listCodeContexts()).map((c) => c.language)
  return { language: ctx.language, text: r.text, contexts }
})
await step('command', async () => {
  const r = await sbx.commands.run('echo hi')
  return { stdout: r.stdout, exitCode: r.exitCode }
})
await step('pid', async () => {
  // The handle's pid is the start event's: the PID the command runs as.
  const h = await sbx.commands.run('echo $$', { background: true })
  const r = await h.wait()
  return { pid: h.pid > 1, same: `${h.pid}\n` === r.stdout }
})
await step('commandFails', async () => {
  try {
    await sbx.commands.run('echo oops >&2; exit 3')
    return 'did not throw'
  } catch (e) {
    return { exitError: e instanceof CommandExitError, exitCode: e.exitCode, stderr: e.stderr }
  }
})
await step('files', async () => {
  await sbx.files.write('/home/user/data/hello.txt', 'hello e2b')
  const read = await sbx.files.read('/home/user/data/hello.txt')
  const list = (await sbx.files.list('/home/user/data')).map((e) => `${e.name}:${e.type}:${e.size}`)
  const exists = await sbx.files.exists('/home/user/data/hello.txt')
  const missing = await sbx.files.exists('/home/user/nope.txt')
  const info = await sbx.files.getInfo('/home/user/data/hello.txt')
  const seen = await sbx.runCode("open('data/hello.txt').read()")
  return { read, list, exists, missing, info: `${info.name}:${info.type}:${info.path}`, python: seen.text }
})
await step('outside', async () => {
  try {
    await sbx.files.read('/etc/passwd')
    return 'read'
  } catch (e) {
    return e.constructor.name
  }
})
await step('otherTenant', async () => {
  try {
    await Sandbox.connect(sbx.sandboxId, { apiKey: process.env.OTHER_KEY })
    return 'connected'
  } catch (e) {
    return e instanceof NotFoundError ? 'NotFoundError' : `${e.constructor.name}: ${e.message}`
  }
})
await step('noToken', async () => {
  // The other tenant's key, the sandbox id, no access token: a raw call.
  const res = await fetch(`${process.env.E2B_SANDBOX_URL}/execute`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-KEY': process.env.OTHER_KEY,
      'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49999' },
    body: JSON.stringify({ code: 'x' }),
  })
  return res.status
})
await step('control', async () => {
  const info = await Sandbox.getInfo(sbx.sandboxId)
  const page = await Sandbox.list().nextItems()
  await sbx.setTimeout(120_000)
  return { template: info.templateId, state: info.state, listed: page.some((s) => s.sandboxId === sbx.sandboxId), running: await sbx.isRunning() }
})
await step('kill', async () => {
  const killed = await sbx.kill()
  let after
  try {
    await sbx.runCode('1')
    after = 'ran'
  } catch (e) {
    after = e instanceof NotFoundError ? 'NotFoundError' : `${e.constructor.name}: ${e.message}`
  }
  return { killed, after, again: await Sandbox.kill(sbx.sandboxId) }
})
console.log(JSON.stringify(out))
