package core_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// secret is a 32-byte HS256 secret.
var secret = []byte("0123456789abcdef0123456789abcdef")

type fixture struct {
	svc     *core.Service
	rt      *runnertest.Runtime
	kernels *kernels.Manager
	clock   *core.FakeClock
}

// newFixture is a service over real pool (python and node, no warm
// sandboxes) and kernels managers over the fake runtime, with a fake
// clock; cfg's Pool, Kernels, Templates and Now are filled in unless set.
func newFixture(t testing.TB, cfg core.Config) *fixture {
	t.Helper()
	rt := &runnertest.Runtime{}
	p, err := pool.New(rt, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
		{Name: "node", Spec: runner.Spec{Language: "node"}},
	}}, nil)
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	p.Start()
	c := core.NewFakeClock(t0)
	km, err := kernels.New(p, kernels.Config{Now: c.Now, MaxTTL: time.Hour}, nil)
	if err != nil {
		t.Fatalf("kernels.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := errors.Join(km.Close(ctx), p.Close(ctx)); err != nil {
			t.Errorf("closing: %v", err)
		}
		if live := rt.Live(); live != 0 {
			t.Errorf("Live after Close = %d, want 0", live)
		}
	})
	cfg.Pool = p
	if cfg.Kernels == nil {
		cfg.Kernels = km
	}
	if cfg.Now == nil {
		cfg.Now = c.Now
	}
	if cfg.Templates == nil {
		cfg.Templates = []core.Template{
			{Name: "python", Language: "python", Limits: core.TemplateLimits{TimeoutMS: 30000}},
			{Name: "node", Language: "node"},
		}
	}
	svc, err := core.New(cfg)
	if err != nil {
		t.Fatalf("core.New: %v", err)
	}
	return &fixture{svc: svc, rt: rt, kernels: km, clock: c}
}

// token signs claims for sub with scope, valid at t0.
func token(t *testing.T, sub, scope string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": sub, "scope": scope, "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(),
	}).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var peer = netip.MustParseAddr("192.0.2.7")

// checkErr requires err to be a core error of kind and code.
func checkErr(t *testing.T, what string, err error, kind core.Kind, code string) *core.Error {
	t.Helper()
	var e *core.Error
	if !errors.As(err, &e) || e.Kind != kind || e.Code != code {
		t.Fatalf("%s: error %v (%T), want %s %q", what, err, err, kind, code)
	}
	return e
}

// calls is the count of door's operation with outcome in svc's metrics.
func calls(t *testing.T, svc *core.Service, door, operation, outcome string) float64 {
	t.Helper()
	mfs, err := svc.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "paddock_core_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["door"] == door && labels["operation"] == operation && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// gaugeOf is the value of svc's unlabelled gauge name.
func gaugeOf(t *testing.T, svc *core.Service, name string) float64 {
	t.Helper()
	mfs, err := svc.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
