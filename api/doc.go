// Package api is Paddock's HTTP front end: gin routes, request and response
// DTOs, validation, streaming, and the single mapping from errors to HTTP
// statuses (describeError in errors.go).
//
// api is the only package that knows HTTP: it alone imports gin and picks
// status codes. It sits on top (cmd → api → kernels → pool → runner) and
// drives sandboxes only through pool (one-shot runs) and kernels
// (sessions); it must not import cmd, a concrete runtime (runner/runsc) or
// rootfs, and nothing but cmd may import it.
//
// Session routes live under /v1/sessions; with Config.Kernels nil they
// answer 501 not_implemented. Every session request acts for owner(c):
// the subject of the request's bearer JWT (auth.go, authenticate.go), or
// the anonymous tenant "" when Config.Auth has no key. A token's scopes
// gate routes ("run", "sessions", "admin"); each tenant has its own
// request rate, one-shot run and session limits (tenants.go,
// fairness.go), and each client address a limit on failed
// authentications, checked before its token is read (authfail.go). Only
// the "admin" view, GET /v1/admin/sessions (admin.go), spans tenants.
//
// A run sent with an Idempotency-Key is recorded, per tenant, in the job
// store (api/jobs, which knows no HTTP) before it runs and with its
// response once done; retries are answered from it (idempotency.go).
package api
