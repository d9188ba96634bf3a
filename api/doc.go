// Package api is Paddock's REST door (/v1): gin routes, request and
// response DTOs, JSON decoding, streaming, idempotent runs, the HTTP
// headers (Location, RateLimit-*, Retry-After, WWW-Authenticate) and the
// single mapping from errors to HTTP statuses (describeError in
// errors.go, from core.Kind).
//
// Everything else is the door-neutral core's (package core): api reads
// the bearer token and hands it to core.Service.AuthenticateWith, charges
// the request with AdmitQuota, checks the route's scope with Authorize
// and calls the core for every run, session, cell and file; the core
// checks the ranges, the tenant's limits and ownership, and records the
// metrics. api never calls pool or kernels itself.
//
// It sits on top (cmd → api, doors → core → kernels → pool → runner): it
// must not import cmd, a door, a concrete runtime (runner/runsc) or
// rootfs, and nothing but cmd may import it. Config.Mounts lets cmd add
// other doors' routes to the same engine, so every door serves on one
// listener.
//
// Session routes live under /v1/sessions; with sessions off they answer
// 501 not_implemented. Every request acts for the caller authenticate
// found: the subject of its bearer JWT, or the anonymous tenant "" when
// auth is off. Only the "admin" view, GET /v1/admin/sessions (admin.go),
// spans tenants.
//
// A run sent with an Idempotency-Key is checked by the core, then
// recorded, per tenant, in the job store (api/jobs, which knows no HTTP)
// before it runs and with its response once done; retries are answered
// from it (idempotency.go).
package api
