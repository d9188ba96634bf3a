package core_test

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/core"
)

// Auth.Tenant, the check a gateway makes before forwarding: the token's
// sub, or the invalid_token error a door would answer.
func TestAuthTenant(t *testing.T) {
	a := core.Auth{HS256Secret: secret}
	sign := func(key []byte, exp time.Duration) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"sub": "alice", "iat": time.Now().Unix(), "exp": time.Now().Add(exp).Unix(),
		}).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got, err := a.Tenant(sign(secret, time.Hour)); err != nil || got != "alice" {
		t.Errorf("a good token: %q, %v", got, err)
	}
	for name, tok := range map[string]string{
		"expired":   sign(secret, -time.Hour),
		"other key": sign([]byte("another-secret-of-at-least-32-bytes!!"), time.Hour),
		"garbage":   "not.a.jwt",
	} {
		if _, err := a.Tenant(tok); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			checkErr(t, name, err, core.KindUnauthenticated, "invalid_token")
		}
	}
	if got, err := (core.Auth{}).Tenant("anything"); err != nil || got != "" {
		t.Errorf("auth off: %q, %v", got, err)
	}
}
