// Drives Paddock's E2B door with the real @e2b/code-interpreter SDK across
// a server restart. `node e2b_survive.mjs before` makes a sandbox with
// metadata, sets x and writes a file, and prints its id; `node
// e2b_survive.mjs after <id>` reconnects to it on the next server and
// prints what it finds. cmd/paddock/restart_e2e_test.go runs both.
import { Sandbox } from '@e2b/code-interpreter'

const [phase, id] = process.argv.slice(2)
if (phase === 'before') {
  const sbx = await Sandbox.create({ timeoutMs: 600_000, metadata: { owner: 'survivor' } })
  const r = await sbx.runCode('x = 41')
  await sbx.files.write('/home/user/kept.txt', 'kept')
  console.log(JSON.stringify({ id: sbx.sandboxId, count: r.executionCount, error: r.error?.name ?? null }))
} else {
  const out = {}
  try {
    const listed = await Sandbox.list({ query: { metadata: { owner: 'survivor' } } }).nextItems()
    out.listed = listed.map((s) => s.sandboxId).includes(id)
    const sbx = await Sandbox.connect(id, { timeoutMs: 120_000 })
    const r = await sbx.runCode('x + 1')
    out.text = r.text
    out.count = r.executionCount
    out.file = await sbx.files.read('/home/user/kept.txt')
    out.command = (await sbx.commands.run('echo alive')).stdout.trim()
    out.killed = await sbx.kill()
  } catch (e) {
    out.threw = e?.constructor?.name ?? String(e)
    out.message = String(e?.message ?? e).slice(0, 300)
  }
  console.log(JSON.stringify(out))
}
