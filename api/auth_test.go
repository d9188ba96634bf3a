package api_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// authCase is one request against an authenticating server.
type authCase struct {
	name       string
	header     string // the Authorization header; "" sends none
	wantStatus int
	wantMsg    string // for a 401
}

func runAuthCases(t *testing.T, f *sessionFixture, tests []authCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.header != "" {
				h["Authorization"] = tc.header
			}
			rec := f.doWith(t, http.MethodGet, "/v1/sessions", "", h)
			if tc.wantStatus == http.StatusOK {
				checkResponse(t, rec, http.StatusOK, `{"sessions":[]}`+"\n")
				return
			}
			checkResponse(t, rec, http.StatusUnauthorized, `{"code":"invalid_token","message":`+jsonString(t, tc.wantMsg)+"}\n")
			if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer error="invalid_token", error_description="`+tc.wantMsg+`"`; got != want {
				t.Errorf("WWW-Authenticate = %s\nwant               %s", got, want)
			}
		})
	}
}

func TestAuthHS256(t *testing.T) {
	// No failed-authentication limit: every case is judged on its own
	// (authfail_test.go tests the limit).
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{
		HS256Secret: testSecret, Audience: "paddock", Issuer: "https://id.example"}, AuthFailureLimit: -1}})
	now := t0
	good := jwt.MapClaims{"aud": "paddock", "iss": "https://id.example"}
	with := func(over jwt.MapClaims) jwt.MapClaims {
		c := claimsAt(now, "alice", "sessions", good)
		for k, v := range over {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	hs := func(over jwt.MapClaims) string {
		return "Bearer " + sign(t, jwt.SigningMethodHS256, testSecret, with(over))
	}
	valid := sign(t, jwt.SigningMethodHS256, testSecret, with(nil))
	parts := strings.Split(valid, ".")
	otherSub := sign(t, jwt.SigningMethodHS256, testSecret, with(jwt.MapClaims{"sub": "mallory"}))
	tampered := parts[0] + "." + strings.Split(otherSub, ".")[1] + "." + parts[2]

	runAuthCases(t, f, []authCase{
		{name: "valid", header: "Bearer " + valid, wantStatus: http.StatusOK},
		{name: "scheme is case-insensitive", header: "bearer " + valid, wantStatus: http.StatusOK},
		{name: "audience in a list", header: hs(jwt.MapClaims{"aud": []string{"other", "paddock"}}), wantStatus: http.StatusOK},
		{name: "expired within leeway", header: hs(jwt.MapClaims{"exp": now.Add(-10 * time.Second).Unix()}), wantStatus: http.StatusOK},
		{name: "scopes array", header: hs(jwt.MapClaims{"scope": nil, "scopes": []string{"run", "sessions"}}), wantStatus: http.StatusOK},
		{name: "no header", wantMsg: "missing bearer token (send Authorization: Bearer <JWT>)"},
		{name: "empty bearer", header: "Bearer ", wantMsg: "missing bearer token (send Authorization: Bearer <JWT>)"},
		{name: "basic scheme", header: "Basic YWxpY2U6eA==", wantMsg: "the Authorization header must use the Bearer scheme"},
		{name: "garbage", header: "Bearer not-a-jwt", wantMsg: "the bearer token is malformed (want a signed JWT: header.payload.signature)"},
		{name: "too long", header: "Bearer " + strings.Repeat("a", 8193), wantMsg: "the bearer token is too long (at most 8192 bytes)"},
		{name: "wrong key", header: "Bearer " + sign(t, jwt.SigningMethodHS256, []byte("another secret of 32 bytes......"), with(nil)),
			wantMsg: "the token's signature is invalid (signed with another key, or altered)"},
		{name: "tampered payload", header: "Bearer " + tampered,
			wantMsg: "the token's signature is invalid (signed with another key, or altered)"},
		{name: "alg none", header: "Bearer " + sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, with(nil)),
			wantMsg: "the token's signing algorithm is not accepted (this server accepts only HS256)"},
		{name: "alg none, signature kept", header: "Bearer " + noneHeader + "." + parts[1] + "." + parts[2],
			wantMsg: "the token's signing algorithm is not accepted (this server accepts only HS256)"},
		{name: "HS512", header: "Bearer " + sign(t, jwt.SigningMethodHS512, testSecret, with(nil)),
			wantMsg: "the token's signing algorithm is not accepted (this server accepts only HS256)"},
		{name: "EdDSA", header: "Bearer " + sign(t, jwt.SigningMethodEdDSA, edPriv, with(nil)),
			wantMsg: "the token's signing algorithm is not accepted (this server accepts only HS256)"},
		{name: "expired", header: hs(jwt.MapClaims{"exp": now.Add(-time.Minute).Unix()}), wantMsg: "the token has expired"},
		{name: "no exp", header: hs(jwt.MapClaims{"exp": nil}), wantMsg: "the token has no exp claim; tokens must expire"},
		{name: "not yet valid", header: hs(jwt.MapClaims{"nbf": now.Add(time.Minute).Unix()}),
			wantMsg: "the token is not valid yet (its nbf is in the future)"},
		{name: "issued in the future", header: hs(jwt.MapClaims{"iat": now.Add(time.Minute).Unix()}),
			wantMsg: "the token was issued in the future (its iat is ahead of this server's clock)"},
		{name: "wrong audience", header: hs(jwt.MapClaims{"aud": "elsewhere"}), wantMsg: "the token's audience (aud) does not include this server"},
		{name: "no audience", header: hs(jwt.MapClaims{"aud": nil}), wantMsg: "the token's audience (aud) does not include this server"},
		{name: "wrong issuer", header: hs(jwt.MapClaims{"iss": "https://evil.example"}), wantMsg: "the token's issuer (iss) is not the one this server trusts"},
		{name: "no issuer", header: hs(jwt.MapClaims{"iss": nil}), wantMsg: "the token's issuer (iss) is not the one this server trusts"},
		{name: "no subject", header: hs(jwt.MapClaims{"sub": nil}), wantMsg: "the token has no sub claim; it names the tenant"},
		{name: "empty subject", header: hs(jwt.MapClaims{"sub": ""}), wantMsg: "the token has no sub claim; it names the tenant"},
		{name: "long subject", header: hs(jwt.MapClaims{"sub": strings.Repeat("s", 257)}), wantMsg: "the token's sub claim is too long (at most 256 bytes)"},
		{name: "control character in subject", header: hs(jwt.MapClaims{"sub": "a\nb"}),
			wantMsg: "the token's sub claim must be UTF-8 text without control characters"},
		{name: "numeric subject", header: hs(jwt.MapClaims{"sub": 7}),
			wantMsg: "the bearer token is malformed (want a signed JWT: header.payload.signature)"},
		{name: "numeric scope", header: hs(jwt.MapClaims{"scope": 7}),
			wantMsg: "the bearer token is malformed (want a signed JWT: header.payload.signature)"},
	})
}

// noneHeader is {"alg":"none","typ":"JWT"} in base64url.
const noneHeader = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"

// A token signed with HMAC over the server's public key (which is public)
// must not pass for one signed by the private key.
func TestAuthAlgorithmConfusion(t *testing.T) {
	claims := claimsAt(t0, "alice", "sessions", nil)
	rsaPub := &rsaKey().PublicKey
	t.Run("RS256 server", func(t *testing.T) {
		f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{PublicKey: rsaPub}}})
		const refused = "the token's signing algorithm is not accepted (this server accepts only RS256)"
		runAuthCases(t, f, []authCase{
			{name: "RS256", header: "Bearer " + sign(t, jwt.SigningMethodRS256, rsaKey(), claims), wantStatus: http.StatusOK},
			{name: "HS256 keyed with the PEM", header: "Bearer " + sign(t, jwt.SigningMethodHS256, publicPEM(t, rsaPub), claims), wantMsg: refused},
			{name: "HS256 keyed with the modulus", header: "Bearer " + sign(t, jwt.SigningMethodHS256, rsaPub.N.Bytes(), claims), wantMsg: refused},
			{name: "PS256", header: "Bearer " + sign(t, jwt.SigningMethodPS256, rsaKey(), claims), wantMsg: refused},
			{name: "RS512", header: "Bearer " + sign(t, jwt.SigningMethodRS512, rsaKey(), claims), wantMsg: refused},
			{name: "EdDSA", header: "Bearer " + sign(t, jwt.SigningMethodEdDSA, edPriv, claims), wantMsg: refused},
			{name: "alg none", header: "Bearer " + sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims), wantMsg: refused},
		})
	})
	t.Run("EdDSA server", func(t *testing.T) {
		f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{Config: core.Config{Auth: api.Auth{PublicKey: edPub}}})
		const refused = "the token's signing algorithm is not accepted (this server accepts only EdDSA)"
		_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
		runAuthCases(t, f, []authCase{
			{name: "EdDSA", header: "Bearer " + sign(t, jwt.SigningMethodEdDSA, edPriv, claims), wantStatus: http.StatusOK},
			{name: "EdDSA, another key", header: "Bearer " + sign(t, jwt.SigningMethodEdDSA, otherPriv, claims),
				wantMsg: "the token's signature is invalid (signed with another key, or altered)"},
			{name: "HS256 keyed with the PEM", header: "Bearer " + sign(t, jwt.SigningMethodHS256, publicPEM(t, edPub), claims), wantMsg: refused},
			{name: "HS256 keyed with the raw key", header: "Bearer " + sign(t, jwt.SigningMethodHS256, []byte(edPub), claims), wantMsg: refused},
			{name: "RS256", header: "Bearer " + sign(t, jwt.SigningMethodRS256, rsaKey(), claims), wantMsg: refused},
		})
	})
}

func TestAuthConfigRefused(t *testing.T) {
	tests := []struct {
		name string
		auth api.Auth
		want string
	}{
		{"both keys", api.Auth{HS256Secret: testSecret, PublicKey: edPub}, "give either an HS256 secret or a public key, not both"},
		{"short secret", api.Auth{HS256Secret: []byte("short")}, "the HS256 secret has 5 bytes; it needs at least 32"},
		{"truncated Ed25519 key", api.Auth{PublicKey: edPub[:16]}, "Ed25519 public key has 16 bytes, want 32"},
		{"private key as public", api.Auth{PublicKey: edPriv}, "unsupported public key type ed25519.PrivateKey (want Ed25519 or RSA)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.auth.Validate(); got == nil || got.Error() != tc.want {
				t.Errorf("Validate() = %v, want %s", got, tc.want)
			}
		})
	}
	if err := (api.Auth{PublicKey: &rsaKey().PublicKey}).Validate(); err != nil {
		t.Errorf("2048-bit RSA key refused: %v", err)
	}
}
