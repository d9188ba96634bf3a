// Package policy checks what a request asks for against the server's
// ranges: wall-time limits, output caps, resource limits and a session's
// idle TTL. One rule holds for every kind of work and every door: a
// value is either in its range, or zero for the default where the field
// has one, or refused with a message that names the field, the range and
// the value. Nothing is clamped.
//
// The /v1 API checks runs and sessions through it in its own units, and
// the session manager (kernels) checks its options through it again for
// callers that are not the API. policy imports only the standard library
// and knows no HTTP: its errors wrap ErrOutOfRange, which the API alone
// turns into a status.
package policy
