package jupyterdoor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

var holdSecret = []byte("a-jupyter-door-test-secret-of-32-bytes")

// holdServer is the door over a real core (over the fake runtime) with
// auth on and maxConns connections per tenant.
func holdServer(t *testing.T, maxConns int) (*httptest.Server, *core.Service) {
	t.Helper()
	return doorServer(t, maxConns, Options{})
}

// doorServer is holdServer with the door's options.
func doorServer(t *testing.T, maxConns int, opts Options) (*httptest.Server, *core.Service) {
	t.Helper()
	p, err := pool.New(&runnertest.Runtime{}, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	km, err := kernels.New(p, kernels.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = errors.Join(km.Close(ctx), p.Close(ctx))
	})
	svc, err := core.New(core.Config{Pool: p, Kernels: km, Templates: []core.Template{{Name: "python", Language: "python"}},
		Auth: core.Auth{HS256Secret: holdSecret}, TenantMaxConnections: maxConns, TenantRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	Mount(e, svc, opts)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv, svc
}

// kernelFor signs a token for tenant and starts a kernel of it.
func kernelFor(t *testing.T, svc *core.Service, tenant string) (token, id string) {
	t.Helper()
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": tenant, "scope": "sessions", "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString(holdSecret)
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.CreateSession(t.Context(), core.Caller{Tenant: tenant, Scopes: []string{core.ScopeSessions}}, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	return token, kernelID(s.ID)
}

// dial opens the kernel WebSocket; the status is the handshake's.
func dial(t *testing.T, srv *httptest.Server, token, id string) (*websocket.Conn, int, string) {
	t.Helper()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/api/kernels/" + id + "/channels?token=" + token
	ws, resp, err := websocket.Dial(t.Context(), url, nil)
	if err != nil {
		if resp == nil {
			t.Fatalf("dialing: %v", err)
		}
		return nil, resp.StatusCode, resp.Header.Get("Retry-After")
	}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return ws, http.StatusSwitchingProtocols, ""
}

// Each open kernel WebSocket holds one of its tenant's connections: one
// over the cap is refused with 429 before the upgrade, another tenant
// still gets in, and closing a socket frees its slot.
func TestKernelWebSocketsOverTheConnectionCap(t *testing.T) {
	srv, svc := holdServer(t, 1)
	alice, aliceKernel := kernelFor(t, svc, "alice")
	bob, bobKernel := kernelFor(t, svc, "bob")

	first, code, _ := dial(t, srv, alice, aliceKernel)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("alice's first socket: HTTP %d, want 101", code)
	}
	if _, code, retry := dial(t, srv, alice, aliceKernel); code != http.StatusTooManyRequests || retry != "5" {
		t.Fatalf("alice's second socket: HTTP %d, Retry-After %q; want 429, 5", code, retry)
	}
	if _, code, _ := dial(t, srv, bob, bobKernel); code != http.StatusSwitchingProtocols {
		t.Fatalf("bob's socket while alice is at her cap: HTTP %d, want 101", code)
	}

	if err := first.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	// The slot frees once the server has seen the socket end: retry until
	// it has, polling (the minute is a safety net).
	deadline := time.Now().Add(time.Minute)
	for {
		_, code, _ := dial(t, srv, alice, aliceKernel)
		if code == http.StatusSwitchingProtocols {
			break
		}
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("alice's socket after her first closed: HTTP %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
