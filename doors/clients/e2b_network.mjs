// Drives the network options of Paddock's E2B door with the real
// @e2b/code-interpreter SDK: allowOut, denyOut and allowInternetAccess at
// create, and what getInfo reports. cmd/paddock/egress_e2b_e2e_test.go runs
// it against a real Paddock on gVisor whose allowance holds upstream.test
// and other.test, names that its stand-in internet answers on port 80, and
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

// fetch lists the sandbox's interfaces and GETs each URL through whatever
// proxy its environment names, one line each.
const fetch = `import socket, urllib.request, urllib.error
print(sorted(n for _, n in socket.if_nameindex()))
for u in ["http://upstream.test/", "http://other.test/"]:
    try:
        print(urllib.request.urlopen(u, timeout=10).read().decode())
    except urllib.error.HTTPError as e:
        print("refused", e.code, e.headers.get("X-Paddock-Egress-Refused"))
    except Exception as e:
        print("failed", type(e).__name__)
`
const probe = async (opts) => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, ...opts })
  try {
    const r = await sbx.runCode(fetch)
    const info = await Sandbox.getInfo(sbx.sandboxId)
    return {
      lines: r.logs.stdout.join('').trim().split('\n'),
      error: r.error?.name ?? null,
      allowInternetAccess: info.allowInternetAccess ?? null,
      allowOut: info.network?.allowOut ?? null,
    }
  } finally {
    await sbx.kill()
  }
}

await step('hosts', () => probe({ network: { allowOut: ['upstream.test'] } }))
await step('update', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, network: { allowOut: ['upstream.test'] } })
  try {
    const seen = []
    const fetchNow = async () => (await sbx.runCode(fetch)).logs.stdout.join('').trim().split('\n').slice(1)
    await sbx.updateNetwork({ allowOut: ['other.test'] })
    seen.push(await fetchNow())
    await sbx.updateNetwork({ allowInternetAccess: false })
    seen.push(await fetchNow())
    const info = await Sandbox.getInfo(sbx.sandboxId)
    return { seen, allowInternetAccess: info.allowInternetAccess ?? null }
  } finally {
    await sbx.kill()
  }
})
await step('updateNone', async () => {
  const sbx = await Sandbox.create({ timeoutMs: 120_000 })
  try {
    await sbx.updateNetwork({ allowOut: ['upstream.test'] })
    return 'did not throw'
  } catch (e) {
    return { threw: e?.constructor?.name ?? String(e), message: String(e?.message ?? e).slice(0, 300) }
  } finally {
    await sbx.kill()
  }
})
await step('internet', () => probe({ allowInternetAccess: true }))
await step('none', () => probe({}))
await step('denyAll', () => probe({ network: { denyOut: ['0.0.0.0/0'] } }))
await step('address', () => probe({ network: { allowOut: ['8.8.8.8'] } }))
console.log(JSON.stringify(out))
