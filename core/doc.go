// Package core is Paddock's door-neutral service: every door (REST /v1 in
// api, MCP, E2B and Jupyter in doors/*) calls one *Service for tenancy, auth,
// limits, validation, accounting and history, and only translates its
// protocol.
//
// A door authenticates its caller (Authenticate, AuthenticateWith: the
// JWT verifier, its scopes and the per-address limit on failed
// authentications), charges it a request (Admit: the tenant's rate
// bucket) and calls the work: Run for one-shot programs, the Session
// methods, Execute, Command (a shell command beside a session's kernel),
// Complete, Inspect and IsComplete (a notebook's questions to the live
// interpreter), the file methods, History and SetSessionTTL. Each checks
// the caller's scope, every range (with policy) and the tenant's limits,
// acts for Caller.Tenant through pool and kernels, and records metrics
// labelled with Caller.Door. A door turns the wire's numbers of
// milliseconds or seconds into Durations with Scaled, so that none wraps
// round past those checks. A door that keeps a connection open for a
// caller (an MCP session, a kernel WebSocket) holds it with
// HoldConnection, against the tenant's cap, and releases it when it ends.
//
// A run or session names its template, or only its language; then the
// template files decide (routes.go): a run goes to the template that has a
// module its code imports warm, else to its language's run default, and
// a session to its language's session default.
//
// Every error a Service method returns is an *Error: a Kind the door maps
// to its protocol (REST: an HTTP status), a stable Code and a Message fit
// to show the client. Classify gives the same meaning to any error.
// Messages name fields as /v1 does (timeout_ms, ttl_s, files[i].path).
//
// core imports kernels, pool, policy, runner and no protocol: never
// net/http, gin, api or a door; only doors and cmd import it.
package core
