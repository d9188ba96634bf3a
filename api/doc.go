// Package api is Paddock's HTTP front end: gin routes, request and response
// DTOs, validation, and the single mapping from errors to HTTP statuses.
//
// api is the only package that knows HTTP: it alone imports gin and picks
// status codes. It sits on top (cmd → api → kernels → pool → runner) and
// drives sandboxes only through pool; it must not import cmd, a concrete
// runtime (runner/runsc) or rootfs, and nothing but cmd may import it.
package api
