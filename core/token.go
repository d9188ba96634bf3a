package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// Bounds on what a token may carry.
const (
	maxTokenBytes   = 8 << 10
	maxSubjectBytes = 256
)

// Scopes a token may grant.
const (
	ScopeRun      = "run"      // one-shot runs (POST /v1/run)
	ScopeSessions = "sessions" // sessions (/v1/sessions/*)
	ScopeAdmin    = "admin"    // metrics and views across tenants (GET /metrics, /v1/admin/*)
)

// tokenClaims is what Paddock reads from a token: the registered claims,
// whose sub names the tenant, and the scopes it grants, given as a
// space-separated "scope" string or a "scopes" array (either form is
// accepted in either claim).
type tokenClaims struct {
	jwt.RegisteredClaims
	Scope  scopeList `json:"scope,omitempty"`
	Scopes scopeList `json:"scopes,omitempty"`
	// Egress is the tenant's egress allowance, rules as --egress-allow
	// takes them: the most its runs and sessions may reach (an empty list:
	// nothing). network is it parsed.
	Egress  *[]string `json:"paddock_egress,omitempty"`
	network *NetworkPolicy
}

// Validate checks the subject; the parser calls it after the registered
// claims.
func (c *tokenClaims) Validate() error {
	switch {
	case c.Subject == "":
		return errNoSubject
	case len(c.Subject) > maxSubjectBytes:
		return errLongSubject
	case !utf8.ValidString(c.Subject) || strings.IndexFunc(c.Subject, unicode.IsControl) >= 0:
		return errBadSubject
	}
	var err error
	c.network, err = tokenNetwork(c.Egress)
	return err
}

// scopes are the scopes the token grants, never nil.
func (c *tokenClaims) scopes() []string {
	return append(append(make([]string, 0, len(c.Scope)+len(c.Scopes)), c.Scope...), c.Scopes...)
}

// scopeList decodes a space-separated string or an array of strings.
type scopeList []string

func (l *scopeList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = strings.Fields(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("scope must be a space-separated string or an array of strings")
	}
	*l = list
	return nil
}

// explain turns a parse failure into the refusal the client sees: a precise
// reason, never key material.
func (v *verifier) explain(err error, tok *jwt.Token, cl *tokenClaims) error {
	switch {
	case errors.Is(err, errCritHeader):
		return tokenRefused("the token has a crit header, which this server does not support")
	case errors.Is(err, jwt.ErrTokenMalformed):
		return tokenRefused("the bearer token is malformed (want a signed JWT: header.payload.signature)")
	case errors.Is(err, errAlgorithm), errors.Is(err, jwt.ErrTokenUnverifiable),
		tok != nil && tok.Method != nil && tok.Method.Alg() != v.alg:
		return tokenRefused("the token's signing algorithm is not accepted (this server accepts only %s)", v.alg)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return tokenRefused("the token's signature is invalid (signed with another key, or altered)")
	case errors.Is(err, jwt.ErrTokenInvalidClaims):
		return v.claimsProblem(err, cl)
	}
	return tokenRefused("the token is invalid")
}

func (v *verifier) claimsProblem(err error, cl *tokenClaims) error {
	switch {
	case cl.ExpiresAt == nil:
		return tokenRefused("the token has no exp claim; tokens must expire")
	case errors.Is(err, jwt.ErrTokenExpired):
		return tokenRefused("the token has expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return tokenRefused("the token is not valid yet (its nbf is in the future)")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return tokenRefused("the token was issued in the future (its iat is ahead of this server's clock)")
	case errors.Is(err, errNoSubject):
		return tokenRefused("the token has no sub claim; it names the tenant")
	case errors.Is(err, errLongSubject):
		return tokenRefused("the token's sub claim is too long (at most %d bytes)", maxSubjectBytes)
	case errors.Is(err, errBadSubject):
		return tokenRefused("the token's sub claim must be UTF-8 text without control characters")
	case v.cfg.Audience != "" && (errors.Is(err, jwt.ErrTokenInvalidAudience) || len(cl.Audience) == 0):
		return tokenRefused("the token's audience (aud) does not include this server")
	case v.cfg.Issuer != "" && (errors.Is(err, jwt.ErrTokenInvalidIssuer) || cl.Issuer == ""):
		return tokenRefused("the token's issuer (iss) is not the one this server trusts")
	}
	return tokenRefused("the token's claims are invalid")
}

// tokenRefused is a KindUnauthenticated invalid_token with the formatted
// message.
func tokenRefused(format string, args ...any) *Error {
	return &Error{Kind: KindUnauthenticated, Code: "invalid_token", Message: fmt.Sprintf(format, args...), cause: ErrInvalidToken}
}
