// Package edge is what every door does alike at its HTTP edge, so that
// the four doors (REST /v1 in package api, MCP, the E2B API and the
// Jupyter protocol) and any door to come read a credential, name
// themselves, pace a client and turn a core error kind into a status the
// same way. A door keeps only where its protocol differs: its error body,
// and the few statuses its real clients read differently (the E2B SDKs
// take 502 for a timeout, Jupyter clients 403 for a bad token).
package edge

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/core"
)

// The doors' names, as core.Caller.Door, metrics and logs carry them.
const (
	REST    = "rest"
	MCP     = "mcp"
	E2B     = "e2b"
	Jupyter = "jupyter"
)

// Refusals of an Authorization header.
var (
	ErrNoCredential = errors.New("missing bearer token (send Authorization: Bearer <JWT>)")
	ErrScheme       = errors.New("the Authorization header must use the Bearer scheme")
)

// Credential is the credential of an Authorization header whose scheme
// is one of schemes, compared without case: ErrNoCredential when the
// header or its credential is empty, ErrScheme when it names another
// scheme.
func Credential(header string, schemes ...string) (string, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", ErrNoCredential
	}
	scheme, cred, _ := strings.Cut(header, " ")
	known := false
	for _, s := range schemes {
		known = known || strings.EqualFold(scheme, s)
	}
	switch cred = strings.TrimSpace(cred); {
	case !known:
		return "", ErrScheme
	case cred == "":
		return "", ErrNoCredential
	}
	return cred, nil
}

// Bearer is the token of an "Authorization: Bearer <token>" header.
func Bearer(header string) (string, error) { return Credential(header, "Bearer") }

// Seconds is d in whole seconds, rounded up, at least 1: a Retry-After.
func Seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// RetryAfter sets Retry-After on h when the core asked the client to
// wait d (> 0).
func RetryAfter(h http.Header, d time.Duration) {
	if d > 0 {
		h.Set("Retry-After", strconv.Itoa(Seconds(d)))
	}
}

// StatusClientClosedRequest is the status logged for a request whose
// client went away before its answer (nginx's 499): no client reads it.
const StatusClientClosedRequest = 499

// statuses is the HTTP status of each kind of core error.
var statuses = map[core.Kind]int{
	core.KindInvalid:         http.StatusBadRequest,
	core.KindUnauthenticated: http.StatusUnauthorized,
	core.KindForbidden:       http.StatusForbidden,
	core.KindNotFound:        http.StatusNotFound,
	core.KindConflict:        http.StatusConflict,
	core.KindGone:            http.StatusGone,
	core.KindTooLarge:        http.StatusRequestEntityTooLarge,
	core.KindTooMany:         http.StatusTooManyRequests,
	core.KindUnavailable:     http.StatusServiceUnavailable,
	core.KindTimeout:         http.StatusGatewayTimeout,
	core.KindNotImplemented:  http.StatusNotImplemented,
	core.KindCanceled:        StatusClientClosedRequest,
}

// Status is the HTTP status of an error of kind k: the entry of
// overrides when it has one (a door's clients reading a kind in their
// own way), else the common one; 500 for an internal error.
func Status(k core.Kind, overrides map[core.Kind]int) int {
	if s, ok := overrides[k]; ok {
		return s
	}
	if s, ok := statuses[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// RateLimit reports the tenant's request bucket on h when a rate is set:
// RateLimit-Limit (its size), RateLimit-Remaining and RateLimit-Reset
// (whole seconds, rounded up, until it is full; 0 when it is).
func RateLimit(h http.Header, q core.Quota) {
	if q.Limit <= 0 {
		return
	}
	h.Set("RateLimit-Limit", strconv.Itoa(q.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(q.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil(q.Reset.Seconds()))))
}
