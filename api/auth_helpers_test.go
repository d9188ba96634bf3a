package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testSecret is a 32-byte HS256 secret.
var testSecret = []byte("0123456789abcdef0123456789abcdef")

var (
	edPub, edPriv, _ = ed25519.GenerateKey(rand.Reader)
	rsaKey           = sync.OnceValue(func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	})
)

// publicPEM is pub as a PEM "PUBLIC KEY" block, as an operator would
// hand it to the server (and as an attacker would find it).
func publicPEM(t *testing.T, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// sign returns a token over claims.
func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return s
}

// claimsAt are valid claims for sub at now, with the given scope claim
// and any overrides (a nil value deletes the claim).
func claimsAt(now time.Time, sub, scope string, overrides jwt.MapClaims) jwt.MapClaims {
	c := jwt.MapClaims{
		"sub":   sub,
		"scope": scope,
		"iat":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
	}
	for k, v := range overrides {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// hs256 is a valid HS256 token for sub at now.
func hs256(t *testing.T, now time.Time, sub, scope string) string {
	t.Helper()
	return sign(t, jwt.SigningMethodHS256, testSecret, claimsAt(now, sub, scope, nil))
}

// serveAs serves one request carrying token (none when empty).
func serveAs(t *testing.T, h http.Handler, method, target, body, token string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
