package api

import (
	"strings"

	"github.com/gin-gonic/gin"
)

// Gin context keys set by authenticate.
const (
	keyTenant = "tenant" // also a request log attribute
	keyClaims = "paddock.claims"
)

// authenticate verifies the bearer token and records its subject as the
// request's tenant. With auth off every request is the anonymous tenant
// "" with every scope. A client address that has failed too often is
// refused first, before its token is read.
func (s *server) authenticate(c *gin.Context) {
	if s.verifier == nil {
		return
	}
	client := clientKey(c.Request.RemoteAddr)
	if wait := s.authFailures.blocked(client); wait > 0 {
		s.writeError(c, &limitError{err: errAuthFailures, limit: s.authFailures.limit, retryAfter: wait})
		return
	}
	raw, err := bearerToken(c.GetHeader("Authorization"))
	var cl *tokenClaims
	if err == nil {
		cl, err = s.verifier.verify(raw)
	}
	if err != nil {
		if s.authFailures.fail(client) {
			s.log.Warn("client address blocked after failed authentications",
				"remote", c.Request.RemoteAddr, "client", client.String(), "limit", s.authFailures.limit)
		}
		s.writeError(c, err)
		return
	}
	c.Set(keyTenant, cl.Subject)
	c.Set(keyClaims, cl)
}

// bearerToken extracts the token of an "Authorization: Bearer <token>"
// header.
func bearerToken(header string) (string, error) {
	if header == "" {
		return "", tokenRefused("missing bearer token (send Authorization: Bearer <JWT>)")
	}
	scheme, raw, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", tokenRefused("the Authorization header must use the Bearer scheme")
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", tokenRefused("missing bearer token (send Authorization: Bearer <JWT>)")
	}
	return raw, nil
}

// requireScope refuses, with 403 insufficient_scope, a token that does
// not grant scope.
func (s *server) requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.verifier == nil {
			return
		}
		cl, _ := c.Get(keyClaims)
		if claims, ok := cl.(*tokenClaims); !ok || !claims.has(scope) {
			s.writeError(c, &authError{err: errInsufficientScope, scope: scope,
				message: "this token does not grant the \"" + scope + "\" scope this route needs"})
		}
	}
}

// owner is the tenant the request acts for: the token's subject, or ""
// when auth is off.
func owner(c *gin.Context) string { return c.GetString(keyTenant) }
