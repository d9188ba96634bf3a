package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"github.com/paddock-dev/paddock/core"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

var testRSAKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// keyFiles writes the test keys as an operator would keep them and
// returns their paths by name.
func keyFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey := testRSAKey()
	pkix := func(pub any) []byte {
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	pkcs8 := func(priv any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	files := map[string][]byte{
		"secret":      []byte("0123456789abcdef0123456789abcdef\n"),
		"short":       []byte("too short\n"),
		"ed.pub":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix(edPub)}),
		"ed.key":      pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8(edPriv)}),
		"rsa.pub":     pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix(&rsaKey.PublicKey)}),
		"rsa1.pub":    pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey)}),
		"rsa.key":     pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8(rsaKey)}),
		"rsa1.key":    pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}),
		"ec.pub":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix(&ecKey.PublicKey)}),
		"not-pem.pub": []byte("ssh-ed25519 AAAA"),
	}
	paths := map[string]string{}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

// clearAuthEnv keeps the caller's environment out of the flags' defaults.
func clearAuthEnv(t *testing.T) {
	for _, k := range []string{"PADDOCK_JWT_SECRET_FILE", "PADDOCK_JWT_PUBLIC_KEY", "PADDOCK_JWT_PRIVATE_KEY",
		"PADDOCK_JWT_AUDIENCE", "PADDOCK_JWT_ISSUER", "PADDOCK_LISTEN"} {
		t.Setenv(k, "")
	}
}

// serveConfig parses and validates serve flags.
func serveConfig(t *testing.T, args ...string) (*config, error) {
	t.Helper()
	cfg, _, err := parse("serve", append([]string{"--runsc=/usr/bin/runsc"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, cfg.Validate()
}

// newAuthAPI is the API over a fake pool, authenticating as cfg says.
func newAuthAPI(t *testing.T, cfg *config) http.Handler {
	t.Helper()
	rt := &runnertest.Runtime{RunFunc: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	p, err := pool.New(rt, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
	})
	return api.New(api.Config{Config: core.Config{Pool: p, Templates: []api.Template{{Name: "python", Language: "python"}}, Auth: cfg.auth}})
}

// A minted token passes the server's middleware configured with the
// matching key, and carries what was asked for.
func TestTokenVerifies(t *testing.T) {
	clearAuthEnv(t)
	keys := keyFiles(t)
	tests := []struct {
		name      string
		serveArgs []string
		mintArgs  []string
		wantAlg   string
	}{
		{"HS256", []string{"--jwt-hs256-secret-file=" + keys["secret"]}, []string{"--jwt-hs256-secret-file=" + keys["secret"]}, "HS256"},
		{"EdDSA", []string{"--jwt-public-key=" + keys["ed.pub"]}, []string{"--private-key=" + keys["ed.key"]}, "EdDSA"},
		{"RS256 PKCS8", []string{"--jwt-public-key=" + keys["rsa.pub"]}, []string{"--private-key=" + keys["rsa.key"]}, "RS256"},
		{"RS256 PKCS1", []string{"--jwt-public-key=" + keys["rsa1.pub"]}, []string{"--private-key=" + keys["rsa1.key"]}, "RS256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := serveConfig(t, append(tc.serveArgs, "--listen=0.0.0.0:8080", "--jwt-audience=paddock", "--jwt-issuer=ops")...)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			h := newAuthAPI(t, cfg)
			var out bytes.Buffer
			args := append(tc.mintArgs, "--subject=alice", "--scopes=run", "--ttl=90m", "--jwt-audience=paddock", "--jwt-issuer=ops")
			if err := tokenCmd(args, &out); err != nil {
				t.Fatalf("token: %v", err)
			}
			token := strings.TrimSuffix(out.String(), "\n")

			claims := jwt.MapClaims{}
			parsed, _, err := jwt.NewParser().ParseUnverified(token, claims)
			if err != nil {
				t.Fatalf("parsing the minted token: %v", err)
			}
			if got := parsed.Method.Alg(); got != tc.wantAlg {
				t.Errorf("alg = %s, want %s", got, tc.wantAlg)
			}
			for k, want := range map[string]any{"sub": "alice", "scope": "run", "aud": "paddock", "iss": "ops"} {
				if claims[k] != want {
					t.Errorf("claim %s = %v, want %v", k, claims[k], want)
				}
			}
			if got := claims["exp"].(float64) - claims["iat"].(float64); got != 5400 {
				t.Errorf("exp - iat = %v, want 5400", got)
			}

			for _, r := range []struct {
				method, target, body string
				want                 int
			}{
				{http.MethodPost, "/v1/run", `{"language":"python","code":"print(1)"}`, http.StatusOK},
				{http.MethodGet, "/v1/sessions", "", http.StatusForbidden}, // no sessions scope
			} {
				req := httptest.NewRequestWithContext(t.Context(), r.method, r.target, strings.NewReader(r.body))
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != r.want {
					t.Errorf("%s %s: %d %s, want %d", r.method, r.target, rec.Code, rec.Body, r.want)
				}
			}
		})
	}
}

// --egress puts the tenant's allowance in the paddock_egress claim; given
// empty it allows nothing, left out there is no claim.
func TestTokenEgress(t *testing.T) {
	keys := keyFiles(t)
	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"--egress=pypi.org *.pythonhosted.org:443"}, []any{"pypi.org", "*.pythonhosted.org:443"}},
		{[]string{"--egress="}, []any{}},
		{nil, nil},
	} {
		var out bytes.Buffer
		if err := tokenCmd(append(tc.args, "--subject=a", "--jwt-hs256-secret-file="+keys["secret"]), &out); err != nil {
			t.Fatalf("token %v: %v", tc.args, err)
		}
		claims := jwt.MapClaims{}
		if _, _, err := jwt.NewParser().ParseUnverified(strings.TrimSpace(out.String()), claims); err != nil {
			t.Fatal(err)
		}
		if got := claims["paddock_egress"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("token %v: paddock_egress = %#v, want %#v", tc.args, got, tc.want)
		}
	}
}

func TestTokenRefusals(t *testing.T) {
	clearAuthEnv(t)
	keys := keyFiles(t)
	secret := "--jwt-hs256-secret-file=" + keys["secret"]
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subject", []string{secret}, "--subject is required"},
		{"no key", []string{"--subject=a"}, "a key is required: --jwt-hs256-secret-file or --private-key"},
		{"both keys", []string{"--subject=a", secret, "--private-key=" + keys["ed.key"]}, "give --jwt-hs256-secret-file or --private-key, not both"},
		{"unknown scope", []string{"--subject=a", secret, "--scopes=run,admn"}, `--scopes: unknown scope "admn" (known: run, sessions, admin)`},
		{"zero ttl", []string{"--subject=a", secret, "--ttl=0s"}, "--ttl must be positive"},
		{"long subject", []string{"--subject=" + strings.Repeat("a", 257), secret}, "--subject is too long (at most 256 bytes)"},
		{"public key to sign", []string{"--subject=a", "--private-key=" + keys["ed.pub"]},
			`--private-key ` + keys["ed.pub"] + `: PEM block "PUBLIC KEY" is not a private key`},
		{"short secret", []string{"--subject=a", "--jwt-hs256-secret-file=" + keys["short"]},
			"--jwt-hs256-secret-file " + keys["short"] + ": the secret has 9 bytes; it needs at least 32 " +
				"(make one with: head -c 48 /dev/urandom | base64 > " + keys["short"] + ")"},
		{"stray argument", []string{"--subject=a", secret, "extra"}, `unexpected arguments ["extra"]`},
		{"raw address egress", []string{"--subject=a", secret, "--egress=pypi.org 10.0.0.1"},
			`--egress: allow: [1]: rule "10.0.0.1": bad egress rule: "10.0.0.1" is an IP address; rules and requests name hosts`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := tokenCmd(tc.args, &out)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v\nwant    %s", err, tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed %q on failure", out.String())
			}
		})
	}
}

// The auth half of serve's Validate.
func TestConfigValidateAuth(t *testing.T) {
	clearAuthEnv(t)
	keys := keyFiles(t)
	const openNet = "--listen 0.0.0.0:8080 is reachable from other machines but no JWT key is configured: " +
		"set --jwt-hs256-secret-file or --jwt-public-key, listen on 127.0.0.1, or pass --insecure-no-auth to serve anyone who can connect"
	tests := []struct {
		name    string
		args    []string
		want    string // "" for valid
		wantAlg string
	}{
		{"no key on loopback", nil, "", ""},
		{"no key on IPv6 loopback", []string{"--listen=[::1]:8080"}, "", ""},
		{"no key on localhost", []string{"--listen=localhost:8080"}, "", ""},
		{"no key on every interface", []string{"--listen=0.0.0.0:8080"}, openNet, ""},
		{"no key, empty host", []string{"--listen=:8080"}, "--listen :8080 is reachable from other machines but no JWT key is configured: " +
			"set --jwt-hs256-secret-file or --jwt-public-key, listen on 127.0.0.1, or pass --insecure-no-auth to serve anyone who can connect", ""},
		{"no key, explicitly insecure", []string{"--listen=0.0.0.0:8080", "--insecure-no-auth"}, "", ""},
		{"secret on every interface", []string{"--listen=0.0.0.0:8080", "--jwt-hs256-secret-file=" + keys["secret"]}, "", "HS256"},
		{"Ed25519 public key", []string{"--jwt-public-key=" + keys["ed.pub"]}, "", "EdDSA"},
		{"RSA public key", []string{"--jwt-public-key=" + keys["rsa.pub"]}, "", "RS256"},
		{"both key kinds", []string{"--jwt-hs256-secret-file=" + keys["secret"], "--jwt-public-key=" + keys["ed.pub"]},
			"give --jwt-hs256-secret-file or --jwt-public-key, not both", ""},
		{"short secret", []string{"--jwt-hs256-secret-file=" + keys["short"]}, "--jwt-hs256-secret-file " + keys["short"] +
			": the secret has 9 bytes; it needs at least 32 (make one with: head -c 48 /dev/urandom | base64 > " + keys["short"] + ")", ""},
		{"missing secret file", []string{"--jwt-hs256-secret-file=/nonexistent/secret"},
			"--jwt-hs256-secret-file: open /nonexistent/secret: no such file or directory", ""},
		{"private key as public key", []string{"--jwt-public-key=" + keys["ed.key"]}, "--jwt-public-key " + keys["ed.key"] +
			" holds a private key; give the server only the public key (openssl pkey -in " + keys["ed.key"] + " -pubout)", ""},
		{"ECDSA public key", []string{"--jwt-public-key=" + keys["ec.pub"]}, "--jwt-public-key " + keys["ec.pub"] +
			": unsupported public key type *ecdsa.PublicKey (want Ed25519 or RSA)", ""},
		{"not PEM", []string{"--jwt-public-key=" + keys["not-pem.pub"]}, "--jwt-public-key: " + keys["not-pem.pub"] + " holds no PEM block", ""},
		{"insecure with a key", []string{"--insecure-no-auth", "--jwt-hs256-secret-file=" + keys["secret"]},
			"--insecure-no-auth contradicts the JWT key given: drop one", ""},
		{"audience without a key", []string{"--jwt-audience=paddock"},
			"--jwt-audience and --jwt-issuer need a key (--jwt-hs256-secret-file or --jwt-public-key)", ""},
		{"zero tenant runs", []string{"--tenant-max-runs=0"}, "--tenant-max-runs and --tenant-max-sessions must be at least 1", ""},
		{"negative tenant run queue", []string{"--tenant-run-queue=-1"}, "--tenant-run-queue must be at least 0", ""},
		{"negative tenant rate", []string{"--tenant-rate=-1"}, "--tenant-rate must be at least 0 and --tenant-burst at least 1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := serveConfig(t, tc.args...)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Validate: %v\nwant      %s", err, tc.want)
			case tc.want == "":
				if got := cfg.auth.Algorithm(); got != tc.wantAlg {
					t.Errorf("algorithm = %q, want %q", got, tc.wantAlg)
				}
			}
		})
	}
}

func TestTenantFlags(t *testing.T) {
	clearAuthEnv(t)
	tests := []struct {
		name      string
		args      []string
		wantRate  float64
		wantRuns  int
		wantQueue int // as core.Config gets it
	}{
		{"defaults", nil, 20, 4, 16},
		{"set", []string{"--tenant-rate=5", "--tenant-max-runs=2", "--tenant-run-queue=3"}, 5, 2, 3},
		{"rate off", []string{"--tenant-rate=0"}, -1, 4, 16},
		{"queue off", []string{"--tenant-run-queue=0"}, 20, 4, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := serveConfig(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got := tenantRate(cfg.TenantRate); got != tc.wantRate {
				t.Errorf("api TenantRate = %v, want %v", got, tc.wantRate)
			}
			if cfg.TenantMaxRuns != tc.wantRuns {
				t.Errorf("TenantMaxRuns = %d, want %d", cfg.TenantMaxRuns, tc.wantRuns)
			}
			if got := tenantRunQueue(cfg.TenantRunQueue); got != tc.wantQueue {
				t.Errorf("core TenantRunQueue = %d, want %d", got, tc.wantQueue)
			}
		})
	}
}
