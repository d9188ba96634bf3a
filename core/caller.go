package core

import (
	"errors"
	"net/netip"
	"slices"
)

// Caller is who is asking, as a door authenticated it.
type Caller struct {
	// Tenant is the token's subject; "" is the anonymous tenant (auth off).
	Tenant string
	// Scopes are the token's scopes; nil when auth is off, where
	// everything is allowed. With auth on, a Caller a door made itself
	// with nil Scopes is allowed nothing that needs a scope.
	Scopes []string
	// Door names the door ("rest", "mcp", "e2b", …): it labels metrics
	// and logs.
	Door string
	// Network is the tenant's egress allowance, from the token's
	// paddock_egress claim (allowance.go); nil when it has none, and the
	// server's and template's allowances alone apply.
	Network *NetworkPolicy
}

// AuthEnabled reports whether tokens are checked.
func (s *Service) AuthEnabled() bool { return s.verifier != nil }

// Authenticate checks a token (the JWT; a door strips its own prefix:
// "Bearer ", Jupyter's "token ", E2B's X-API-KEY). With auth off every
// token, or none, is the anonymous caller. A client address with too
// many failures gets KindTooMany with RetryAfter before its token is
// read; a bad token is KindUnauthenticated ("invalid_token") and counts
// as a failure of addr.
func (s *Service) Authenticate(addr netip.Addr, token, door string) (Caller, error) {
	return s.AuthenticateWith(addr, door, func() (string, error) {
		if token == "" {
			return "", tokenRefused("missing token")
		}
		return token, nil
	})
}

// AuthenticateWith is Authenticate for a door that must read its
// credential to find the token: token is called only when auth is on and
// addr is not refused, and an error of its (an *Error, or any error whose
// text is shown as an invalid_token message) counts as a failure of addr.
func (s *Service) AuthenticateWith(addr netip.Addr, door string, token func() (string, error)) (Caller, error) {
	if s.verifier == nil {
		return Caller{Door: door}, nil
	}
	client := clientKey(addr)
	if wait := s.authFailures.blocked(client); wait > 0 {
		s.metrics.call(door, "authenticate", "too_many_auth_failures")
		e := s.authFailures.refusal(wait)
		s.recordAuthFailure(door, client.String(), e)
		return Caller{}, e
	}
	raw, err := token()
	var cl *tokenClaims
	if err == nil {
		cl, err = s.verifier.verify(raw)
	}
	if err != nil {
		if s.authFailures.fail(client) {
			s.log.Warn("client address blocked after failed authentications",
				"client", client.String(), "limit", s.authFailures.limit, keyDoor, door)
		}
		var e *Error
		if !errors.As(err, &e) {
			e = tokenRefused("%s", err.Error())
		}
		s.metrics.call(door, "authenticate", e.Code)
		s.recordAuthFailure(door, client.String(), e)
		return Caller{}, e
	}
	return Caller{Tenant: cl.Subject, Scopes: cl.scopes(), Door: door, Network: cl.network}, nil
}

// Authorize refuses, with KindForbidden "insufficient_scope", a caller
// whose token does not grant scope. With auth off everything is allowed.
func (s *Service) Authorize(c Caller, scope string) error {
	if s.verifier == nil || slices.Contains(c.Scopes, scope) {
		return nil
	}
	return &Error{Kind: KindForbidden, Code: "insufficient_scope", Scope: scope, cause: ErrInsufficientScope,
		Message: "this token does not grant the \"" + scope + "\" scope this route needs"}
}

// Admit charges one request to the caller's rate bucket: KindTooMany
// ("rate_limited") with RetryAfter when it is empty.
func (s *Service) Admit(c Caller) error {
	_, err := s.AdmitQuota(c)
	return err
}

// AdmitQuota is Admit, also returning the bucket as it is after the
// request (for a door's rate-limit headers); its Limit is zero when
// there is no rate limit.
func (s *Service) AdmitQuota(c Caller) (Quota, error) {
	q, err := s.tenants.allow(c.Tenant)
	if err != nil {
		e := Classify(err)
		s.metrics.call(c.Door, "admit", e.Code)
		return q, e
	}
	return q, nil
}
