// Drives the pause, resume and fork of Paddock's E2B door with the real
// @e2b/code-interpreter SDK (on e2b 2.x). cmd/paddock/e2b_e2e_test.go runs
// it against a real Paddock with hibernation on, E2B_API_URL, E2B_SANDBOX_URL
// and E2B_API_KEY set, and asserts the one JSON line it prints. Every step
// records what it saw, errors included, so that one failure does not hide
// the others.
import { Sandbox } from '@e2b/code-interpreter'

const out = {}
const step = async (name, fn) => {
  try {
    out[name] = await fn()
  } catch (e) {
    out[name] = { threw: e?.constructor?.name ?? String(e), message: String(e?.message ?? e).slice(0, 300) }
  }
}
const threw = async (fn) => {
  try {
    await fn()
    return 'did not throw'
  } catch (e) {
    return e?.constructor?.name ?? String(e)
  }
}
const ids = async (state) => (await Sandbox.list({ query: { state } }).nextItems()).map((s) => s.sandboxId)

const sbx = await Sandbox.create({ timeoutMs: 300_000 })
const other = await Sandbox.create({ timeoutMs: 300_000 })
const killed = []

await step('before', async () => {
  const r = await sbx.runCode('x = 41')
  await sbx.files.write('/home/user/kept.txt', 'kept')
  return { count: r.executionCount, error: r.error?.name ?? null }
})
await step('pause', async () => {
  const paused = await sbx.pause()
  const again = await Sandbox.pause(sbx.sandboxId)
  const unknown = await threw(() => Sandbox.pause('no-such-sandbox'))
  return { paused, again, unknown }
})
await step('whilePaused', async () => {
  const info = await sbx.getInfo()
  const paused = await ids(['paused'])
  const running = await ids(['running'])
  const both = await ids(['running', 'paused'])
  return {
    state: info.state,
    onTimeout: info.lifecycle?.onTimeout ?? null,
    listedPaused: paused.includes(sbx.sandboxId) && !paused.includes(other.sandboxId),
    listedRunning: running.includes(other.sandboxId) && !running.includes(sbx.sandboxId),
    listedBoth: both.includes(sbx.sandboxId) && both.includes(other.sandboxId),
    isRunning: await sbx.isRunning(),
    // Created without lifecycle.autoResume: calls are refused, and do not wake it.
    runCode: await threw(() => sbx.runCode('x')),
    command: await threw(() => sbx.commands.run('true')),
    stillPaused: (await sbx.getInfo()).state,
  }
})
await step('connect', async () => {
  const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 120_000 })
  const r = await again.runCode('x + 1')
  const file = await again.files.read('/home/user/kept.txt')
  const info = await again.getInfo()
  const ttl = Math.round((info.endAt.getTime() - Date.now()) / 1000)
  const running = await Sandbox.connect(sbx.sandboxId)
  return { text: r.text, count: r.executionCount, file, state: info.state, timeout: ttl > 100 && ttl <= 120, runningAgain: running.sandboxId === sbx.sandboxId }
})
await step('fork', async () => {
  const forks = await sbx.fork({ count: 2, timeoutMs: 60_000 })
  const seen = []
  for (const f of forks) {
    if (f instanceof Error) {
      seen.push(f.constructor.name)
      continue
    }
    killed.push(f)
    const r = await f.runCode('x + 2')
    seen.push({ text: r.text, count: r.executionCount, own: f.sandboxId !== sbx.sandboxId })
  }
  const parent = await sbx.runCode('x')
  return { forks: seen, parent: parent.text, distinct: new Set(killed.map((f) => f.sandboxId)).size }
})
// lifecycle.onTimeout 'pause': past its 2 s timeout each sandbox pauses
// (at the server's next reaper pass) rather than dies; with autoResume a
// call wakes it, without it the call is refused until Sandbox.connect.
await step('autoPause', async () => {
  const auto = await Sandbox.create({ timeoutMs: 2_000, lifecycle: { onTimeout: 'pause', autoResume: true } })
  const manual = await Sandbox.create({ timeoutMs: 2_000, lifecycle: { onTimeout: 'pause' } })
  killed.push(auto, manual)
  await auto.runCode('y = 7')
  await manual.runCode('z = 8')
  const deadline = Date.now() + 120_000
  let states = []
  while (Date.now() < deadline) {
    states = [(await auto.getInfo()).state, (await manual.getInfo()).state]
    if (states.every((s) => s === 'paused')) break
    await new Promise((r) => setTimeout(r, 250))
  }
  const info = await auto.getInfo()
  const woken = await auto.runCode('y + 1')
  const refused = await threw(() => manual.runCode('z'))
  const again = await Sandbox.connect(manual.sandboxId, { timeoutMs: 60_000 })
  const resumed = await again.runCode('z + 1')
  return {
    paused: states,
    lifecycle: info.lifecycle,
    autoResumed: { text: woken.text, count: woken.executionCount },
    refused,
    connected: { text: resumed.text, count: resumed.executionCount },
  }
})
await step('kill', async () => {
  const paused = await Sandbox.create({ timeoutMs: 300_000 })
  await paused.pause()
  const gone = await paused.kill()
  return { pausedKilled: gone, connectAfter: await threw(() => Sandbox.connect(paused.sandboxId)) }
})
for (const s of [sbx, other, ...killed]) await s.kill()
console.log(JSON.stringify(out))
