package core_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/egress"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
	"github.com/paddock-dev/paddock/store"
)

// netSandbox is a fake sandbox with a network: a proxy socket on
// loopback, which no one here dials.
type netSandbox struct {
	*runnertest.Sandbox
	proxy net.Listener
}

func (s *netSandbox) EgressListener() net.Listener { return s.proxy }
func (s *netSandbox) EgressListeners() runner.EgressListeners {
	return runner.EgressListeners{Proxy: s.proxy}
}

func (s *netSandbox) Destroy(ctx context.Context) error {
	return errors.Join(s.Sandbox.Destroy(ctx), s.proxy.Close())
}

var _ runner.Egress = (*netSandbox)(nil)

// networkedHistory is a service whose sandboxes all have a network, on
// a server that allows pypi.org and its files host, recording into a
// SQLite store.
func networkedHistory(t *testing.T) (*core.Service, *store.Store) {
	t.Helper()
	rt := &runnertest.Runtime{}
	rt.StartFunc = func(_ context.Context, spec runner.Spec) (runner.Sandbox, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		return &netSandbox{Sandbox: rt.NewSandbox(spec), proxy: l}, nil
	}
	p, err := pool.New(rt, pool.Config{Templates: []pool.Template{{Name: "python", Spec: runner.Spec{Language: "python"}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	clock := core.NewFakeClock(t0)
	km, err := kernels.New(p, kernels.Config{Now: clock.Now, MaxTTL: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), store.Config{DSN: filepath.Join(t.TempDir(), "h.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := errors.Join(km.Close(ctx), p.Close(ctx), st.Close(ctx)); err != nil {
			t.Errorf("closing: %v", err)
		}
	})
	allow, err := egress.NewPolicy([]string{"pypi.org:443", "*.pythonhosted.org:80,443"}, []string{"evil.pythonhosted.org"})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := core.New(core.Config{Pool: p, Kernels: km, Now: clock.Now, Store: st,
		Egress:    &core.Egress{Allow: allow},
		Templates: []core.Template{{Name: "python", Language: "python"}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, st
}

// The history keeps the policy each run and cell had: a run's, and a
// networked session's as it stood at each cell, after its owner changed
// it too.
func TestHistoryRecordsTheNetwork(t *testing.T) {
	svc, st := networkedHistory(t)
	alice := core.Caller{Tenant: "alice", Scopes: []string{core.ScopeRun, core.ScopeSessions}, Door: "rest"}

	if _, err := svc.Run(t.Context(), alice, core.RunInput{Language: "python", Code: "offline"}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Run(t.Context(), alice, core.RunInput{Language: "python", Code: "online", Network: []string{"pypi.org", "example.com"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Network == nil {
		t.Fatal("a networked run's answer has no network")
	}
	plain, err := svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Execute(t.Context(), alice, plain.ID, core.ExecuteInput{Code: "plain"}, nil); err != nil {
		t.Fatal(err)
	}
	s, err := svc.CreateSession(t.Context(), alice, core.SessionInput{Language: "python",
		Network: &core.NetworkAsk{Allow: []string{"files.pythonhosted.org"}, Deny: []string{"pypi.org"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Execute(t.Context(), alice, s.ID, core.ExecuteInput{Code: "first"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetSessionNetwork(alice, s.ID, &core.NetworkAsk{All: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Execute(t.Context(), alice, s.ID, core.ExecuteInput{Code: "second"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetSessionNetwork(alice, s.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Execute(t.Context(), alice, s.ID, core.ExecuteInput{Code: "third"}, nil); err != nil {
		t.Fatal(err)
	}

	rows := runsOf(t, svc, st, alice, core.HistoryQuery{}, store.RunFilter{})
	want := []struct{ code, network string }{
		{"offline", ""},
		{"online", "allow pypi.org:443; deny evil.pythonhosted.org"},
		{"plain", ""},
		{"first", "allow files.pythonhosted.org:80,443; deny evil.pythonhosted.org pypi.org"},
		{"second", "allow pypi.org:443 *.pythonhosted.org:80,443; deny evil.pythonhosted.org"},
		{"third", "none; deny evil.pythonhosted.org"}, // the server's denylist stays
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v, want %d", rows, len(want))
	}
	for i, w := range want {
		r := rows[len(rows)-1-i] // newest first
		if r.Network != w.network {
			t.Errorf("row %d (%s %s): network %q, want %q", i, r.Kind, w.code, r.Network, w.network)
		}
		// What the doors show is the policy read back from the row.
		pol, ok := core.RecordedNetwork(r.Network)
		if ok != (w.network != "") || (ok && pol.String() != w.network) {
			t.Errorf("row %d (%s %s): RecordedNetwork = %q, %v", i, r.Kind, w.code, pol, ok)
		}
	}
}
