// Package e2bdoor is Paddock's E2B-compatible door: the control plane
// (create, get, list, kill, set timeout; pause, connect and fork through
// the core's session hibernation), the code interpreter (port
// 49999: /execute as NDJSON, contexts) and envd (port 49983: Connect RPC
// with the JSON codec for processes and the filesystem, REST /files and
// /health), so that the e2b and @e2b/code-interpreter SDKs work unchanged
// with E2B_API_URL and E2B_SANDBOX_URL pointed at Paddock.
//
// An E2B sandbox is one Paddock session (its main context) plus the
// sessions of the extra contexts opened in it, all owned by the creator's
// tenant. In-sandbox calls are bound to that owner by the access tokens
// the create answer carries, not by the sandbox id.
//
// The door only translates: every call goes through the core (tenancy,
// limits, validation, accounting). It imports core, runner (for value
// types) and gin; never pool or kernels (the core names their types),
// runner/runsc, api or another door.
package e2bdoor
