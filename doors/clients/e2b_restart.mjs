// Drives Paddock's E2B door with the real @e2b/code-interpreter SDK through
// a cell that cannot be interrupted. cmd/paddock/e2b_e2e_test.go runs it
// against a real Paddock whose cells time out after a second or two, and
// asserts the one JSON line it prints.
import { Sandbox } from '@e2b/code-interpreter'

const out = {}
const step = async (name, fn) => {
  try {
    out[name] = await fn()
  } catch (e) {
    out[name] = { threw: e?.constructor?.name ?? String(e), message: String(e?.message ?? e).slice(0, 300) }
  }
}

const sbx = await Sandbox.create({ timeoutMs: 300_000 })
await step('set', async () => {
  const r = await sbx.runCode('x = 41')
  return { error: r.error?.name ?? null, count: r.executionCount }
})
await step('stuck', async () => {
  // A regular expression stuck in native code ignores the interrupt.
  const r = await sbx.runCode("import re\nre.match(r'(a+)+$', 'a' * 40 + 'b')")
  return { name: r.error?.name ?? null, value: r.error?.value ?? null }
})
await step('next', async () => {
  const r = await sbx.runCode('1 + 1')
  return { text: r.text, count: r.executionCount, error: r.error?.name ?? null }
})
await step('gone', async () => {
  const r = await sbx.runCode('x')
  return { name: r.error?.name ?? null }
})
await sbx.kill()
console.log(JSON.stringify(out))
