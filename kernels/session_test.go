package kernels_test

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestCreateAndGet(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "alice", kernels.CreateOptions{TTL: time.Minute, Env: map[string]string{"A": "1"}})
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(info.ID) {
		t.Errorf("ID = %q, want 32 hex digits", info.ID)
	}
	want := kernels.Info{
		ID: info.ID, Owner: "alice", Template: "python", SandboxID: "fake-0001",
		CreatedAt: t0, LastUsed: t0, ExpiresAt: t0.Add(time.Minute), TTL: time.Minute, State: "idle",
		Start: pool.StartCold, Opening: info.Opening, // the fake pool is empty: a cold start
	}
	if info.Opening.Acquire < info.Opening.Start || info.Opening.Kernel <= 0 {
		t.Errorf("Opening = %+v, want acquire ≥ start and a kernel time", info.Opening)
	}
	if info != want {
		t.Errorf("Create = %+v\nwant     %+v", info, want)
	}
	if got, err := f.m.Get("alice", info.ID); err != nil || got != want {
		t.Errorf("Get = %+v, %v\nwant  %+v", got, err, want)
	}
	if got := f.kernel(t, info).Options.Env; !reflect.DeepEqual(got, map[string]string{"A": "1"}) {
		t.Errorf("kernel env = %v, want map[A:1]", got)
	}

	f.clock.Advance(time.Second)
	second := f.create(t, "alice", kernels.CreateOptions{Template: "node"})
	if second.ID == info.ID {
		t.Error("two sessions got the same id")
	}
	if got, want := second.ExpiresAt, t0.Add(time.Second+15*time.Minute); !got.Equal(want) {
		t.Errorf("default TTL: ExpiresAt = %s, want %s", got, want)
	}
	f.create(t, "bob", kernels.CreateOptions{})
	list := f.m.List("alice")
	if len(list) != 2 || list[0].ID != info.ID || list[1].ID != second.ID {
		t.Errorf("List(alice) = %+v, want the two sessions oldest first", list)
	}
	if got := f.m.List("carol"); got == nil || len(got) != 0 {
		t.Errorf("List(carol) = %#v, want an empty list", got)
	}
}

func TestCreateValidation(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxTTL: time.Hour, DefaultTTL: time.Minute})
	tests := []struct {
		name    string
		opts    kernels.CreateOptions
		wantMsg string
	}{
		{"no template", kernels.CreateOptions{}, "a template is required"},
		{"unknown template", kernels.CreateOptions{Template: "ruby"}, `unknown template "ruby"`},
		{"negative ttl", kernels.CreateOptions{Template: "python", TTL: -time.Second}, "ttl must be between 1ms and 1h0m0s, or 0 for the default (1m0s); got -1s"},
		{"ttl over max", kernels.CreateOptions{Template: "python", TTL: 61 * time.Minute}, "ttl must be between 1ms and 1h0m0s, or 0 for the default (1m0s); got 1h1m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.m.Create(t.Context(), "", tc.opts)
			if !errors.Is(err, kernels.ErrInvalid) || err.Error() != tc.wantMsg {
				t.Errorf("Create error = %v, want ErrInvalid %q", err, tc.wantMsg)
			}
		})
	}
	if got := f.rt.Starts(); got != 0 {
		t.Errorf("invalid creates started %d sandboxes", got)
	}
}

// No session outlives MaxLifetime, so no TTL may be longer: the largest
// TTL defaults to it, and a longer one is refused, naming the maximum.
func TestTTLBoundedByLifetime(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxLifetime: 2 * time.Hour})
	if got := f.m.Config().MaxTTL; got != 2*time.Hour {
		t.Errorf("MaxTTL = %s, want 2h0m0s (the MaxLifetime)", got)
	}
	_, err := f.m.Create(t.Context(), "", kernels.CreateOptions{Template: "python", TTL: 2*time.Hour + time.Second})
	want := "ttl must be between 1ms and 2h0m0s, or 0 for the default (15m0s); got 2h0m1s"
	if !errors.Is(err, kernels.ErrInvalid) || err.Error() != want {
		t.Errorf("Create error = %v, want ErrInvalid %q", err, want)
	}
}

func TestConfigValidation(t *testing.T) {
	p, err := pool.New(&runnertest.Runtime{}, pool.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		pool    *pool.Manager
		cfg     kernels.Config
		wantErr string
	}{
		{"no pool", nil, kernels.Config{}, "kernels config: no pool"},
		{"negative", p, kernels.Config{MaxQueue: -1}, "kernels config: negative limit"},
		{"negative commands", p, kernels.Config{MaxCommands: -1}, "kernels config: negative limit"},
		{"ttl over max", p, kernels.Config{DefaultTTL: 2 * time.Hour, MaxTTL: time.Hour}, "kernels config: DefaultTTL exceeds MaxTTL"},
		{"timeout over max", p, kernels.Config{DefaultTimeout: time.Hour}, "kernels config: DefaultTimeout exceeds MaxTimeout"},
		{"ttl over lifetime", p, kernels.Config{MaxTTL: 2 * time.Hour, MaxLifetime: time.Hour}, "kernels config: MaxTTL exceeds MaxLifetime"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := kernels.New(tc.pool, tc.cfg, nil); err == nil || err.Error() != tc.wantErr {
				t.Errorf("New error = %v, want %q", err, tc.wantErr)
			}
		})
	}
	m, err := kernels.New(p, kernels.Config{MaxTTL: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Config()
	got.Now = nil
	want := kernels.Config{MaxSessions: 64, DefaultTTL: time.Minute, MaxTTL: time.Minute, MaxLifetime: 12 * time.Hour,
		ReapInterval: 10 * time.Second, DefaultTimeout: 30 * time.Second, MaxTimeout: 10 * time.Minute, MaxOutput: 1 << 20, MaxQueue: 8, MaxCommands: 4}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Config = %+v\nwant     %+v", got, want)
	}
}

// Another owner's session answers exactly like an id that never existed.
func TestOtherOwnerNotFound(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{})
	info := f.create(t, "alice", kernels.CreateOptions{})
	const random = "0123456789abcdef0123456789abcdef"
	ops := []struct {
		name string
		call func(owner, id string) error
	}{
		{"Get", func(o, id string) error { _, err := f.m.Get(o, id); return err }},
		{"Execute", func(o, id string) error {
			_, err := f.m.Execute(t.Context(), o, id, kernels.ExecuteOptions{Code: "1"}, nil)
			return err
		}},
		{"Interrupt", func(o, id string) error { return f.m.Interrupt(t.Context(), o, id) }},
		{"Restart", func(o, id string) error { _, err := f.m.Restart(t.Context(), o, id); return err }},
		{"WriteFile", func(o, id string) error { return f.m.WriteFile(t.Context(), o, id, "a", nil) }},
		{"ReadFile", func(o, id string) error { _, err := f.m.ReadFile(t.Context(), o, id, "a", 10); return err }},
		{"ListFiles", func(o, id string) error { _, err := f.m.ListFiles(t.Context(), o, id, ""); return err }},
		{"Delete", func(o, id string) error { return f.m.Delete(t.Context(), o, id) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			errOther := op.call("bob", info.ID)
			errRandom := op.call("bob", random)
			if !errors.Is(errOther, kernels.ErrSessionNotFound) || !errors.Is(errRandom, kernels.ErrSessionNotFound) {
				t.Fatalf("errors = %v, %v; want ErrSessionNotFound for both", errOther, errRandom)
			}
			if got, want := errOther.Error(), "session "+info.ID+": session not found"; got != want {
				t.Errorf("other owner's error = %q, want %q", got, want)
			}
			if got, want := errRandom.Error(), "session "+random+": session not found"; got != want {
				t.Errorf("random id's error = %q, want %q", got, want)
			}
		})
	}
	if got := f.m.List("bob"); len(got) != 0 {
		t.Errorf("List(bob) = %+v, want none", got)
	}
	if _, err := f.m.Get("alice", info.ID); err != nil {
		t.Errorf("alice's session was touched: %v", err)
	}
	if got := f.kernel(t, info).Executes(); got != 0 {
		t.Errorf("bob's Execute reached alice's kernel %d times", got)
	}
}

func TestTooManySessions(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxSessions: 2})
	a := f.create(t, "", kernels.CreateOptions{TTL: time.Minute})
	b := f.create(t, "", kernels.CreateOptions{TTL: time.Hour})
	_, err := f.m.Create(t.Context(), "", kernels.CreateOptions{Template: "python"})
	if !errors.Is(err, kernels.ErrTooManySessions) || err.Error() != "creating session: 2 of 2 open: too many sessions" {
		t.Fatalf("third Create error = %v, want ErrTooManySessions", err)
	}
	for _, id := range []string{a.ID, b.ID} {
		if _, err := f.m.Get("", id); err != nil {
			t.Errorf("session %s was evicted: %v", id, err)
		}
	}
	if got := f.rt.Starts(); got != 2 {
		t.Errorf("sandbox starts = %d, want 2 (the refused create leased nothing)", got)
	}
	// An expired session frees its slot even before the reaper runs.
	f.clock.Advance(time.Minute)
	c := f.create(t, "", kernels.CreateOptions{})
	if _, err := f.m.Get("", a.ID); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("expired session: Get error = %v, want ErrSessionNotFound", err)
	}
	if err := f.m.Delete(t.Context(), "", c.ID); err != nil {
		t.Fatal(err)
	}
	f.create(t, "", kernels.CreateOptions{})
}

// notOpener is a sandbox without the kernel ability.
type notOpener struct{ runner.Sandbox }

func TestCreateFailuresReleaseTheSandbox(t *testing.T) {
	tests := []struct {
		name    string
		rt      func() *runnertest.Runtime
		wantErr error
	}{
		{
			name: "sandbox cannot open kernels",
			rt: func() *runnertest.Runtime {
				rt := &runnertest.Runtime{}
				rt.StartFunc = func(_ context.Context, spec runner.Spec) (runner.Sandbox, error) {
					return notOpener{rt.NewSandbox(spec)}, nil
				}
				return rt
			},
			wantErr: runner.ErrNotSupported,
		},
		{
			name: "kernel fails to open",
			rt: func() *runnertest.Runtime {
				return &runnertest.Runtime{KernelFunc: func(context.Context, runner.KernelOptions, *runnertest.Kernel) error {
					return runner.ErrSandboxLost
				}}
			},
			wantErr: runner.ErrSandboxLost,
		},
		{
			name: "sandbox start fails",
			rt: func() *runnertest.Runtime {
				return &runnertest.Runtime{StartFunc: func(context.Context, runner.Spec) (runner.Sandbox, error) {
					return nil, errors.New("no runsc")
				}}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := tc.rt()
			f := newFixture(t, rt, kernels.Config{MaxSessions: 1})
			_, err := f.m.Create(t.Context(), "", kernels.CreateOptions{Template: "python"})
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Fatalf("Create error = %v, want %v", err, tc.wantErr)
			}
			waitFor(t, "sandbox released", func() bool { return rt.Live() == 0 })
			if got := f.m.List(""); len(got) != 0 {
				t.Errorf("List = %+v, want none", got)
			}
			// The failed create gave its slot back.
			_, err = f.m.Create(t.Context(), "", kernels.CreateOptions{Template: "python"})
			if errors.Is(err, kernels.ErrTooManySessions) {
				t.Errorf("slot leaked: %v", err)
			}
		})
	}
}

// Over MaxLive, with no way to hibernate an idle session (the fake
// runtime cannot save sandboxes), one more session is refused as
// ErrNoRoom, which is also ErrTooManySessions; a slot freed lets it in.
func TestMaxLiveRefusesWhenNoneCanSleep(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxSessions: 4, MaxLive: 1})
	first, err := f.m.Create(t.Context(), "alice", kernels.CreateOptions{Template: "python"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.m.Create(t.Context(), "alice", kernels.CreateOptions{Template: "python"})
	if !errors.Is(err, kernels.ErrNoRoom) || !errors.Is(err, kernels.ErrTooManySessions) ||
		!strings.Contains(err.Error(), "2 sessions would be awake, over the 1") {
		t.Fatalf("second Create: %v, want ErrNoRoom", err)
	}
	if err := f.m.Delete(t.Context(), "alice", first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Create(t.Context(), "alice", kernels.CreateOptions{Template: "python"}); err != nil {
		t.Fatalf("Create after a delete: %v", err)
	}
}
