package kernels_test

import (
	"errors"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// SetTTL moves a session's expiry to now plus the new TTL, never past
// its maximum lifetime; the new TTL then holds for later uses too.
func TestSetTTL(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, kernels.Config{MaxLifetime: time.Hour, MaxTTL: 30 * time.Minute})
	info := f.create(t, "alice", kernels.CreateOptions{TTL: time.Minute})

	f.clock.Advance(50 * time.Second)
	got, err := f.m.SetTTL("alice", info.ID, 10*time.Minute)
	if err != nil {
		t.Fatalf("SetTTL: %v", err)
	}
	if want := t0.Add(50*time.Second + 10*time.Minute); !got.ExpiresAt.Equal(want) || got.TTL != 10*time.Minute {
		t.Errorf("after SetTTL: ExpiresAt %s, TTL %s; want %s, 10m0s", got.ExpiresAt, got.TTL, want)
	}
	// Past the old TTL, alive; used, it keeps the new TTL.
	f.clock.Advance(5 * time.Minute)
	if _, err := f.m.Execute(t.Context(), "alice", info.ID, kernels.ExecuteOptions{Code: "1"}, nil); err != nil {
		t.Fatalf("Execute past the old TTL: %v", err)
	}
	got, _ = f.m.Get("alice", info.ID)
	if want := t0.Add(50*time.Second + 15*time.Minute); !got.ExpiresAt.Equal(want) {
		t.Errorf("after a use: ExpiresAt %s, want %s", got.ExpiresAt, want)
	}

	// Near the end of its life, the lifetime caps the expiry.
	if _, err = f.m.SetTTL("alice", info.ID, 30*time.Minute); err != nil { // at 5m50s: until 35m50s
		t.Fatalf("SetTTL: %v", err)
	}
	f.clock.Advance(29*time.Minute + 50*time.Second)
	if got, err = f.m.SetTTL("alice", info.ID, 30*time.Minute); err != nil { // at 35m40s
		t.Fatalf("SetTTL near the end of life: %v", err)
	}
	if want := t0.Add(time.Hour); !got.ExpiresAt.Equal(want) {
		t.Errorf("near the end of life: ExpiresAt %s, want the lifetime's end %s", got.ExpiresAt, want)
	}
	f.clock.Advance(25 * time.Minute)
	if _, err := f.m.Get("alice", info.ID); !errors.Is(err, kernels.ErrSessionNotFound) {
		t.Errorf("Get past the lifetime: error %v, want ErrSessionNotFound", err)
	}
}

func TestSetTTLRefusals(t *testing.T) {
	rt := &runnertest.Runtime{}
	refuse := refuseStarts(rt)
	f := newFixture(t, rt, kernels.Config{MaxTTL: 30 * time.Minute})
	info := f.create(t, "alice", kernels.CreateOptions{})
	tests := []struct {
		name   string
		owner  string
		id     string
		ttl    time.Duration
		target error
		msg    string
	}{
		{"zero", "alice", info.ID, 0, kernels.ErrInvalid, "ttl must be between 1ms and 30m0s; got 0s"},
		{"over the maximum", "alice", info.ID, 31 * time.Minute, kernels.ErrInvalid, "ttl must be between 1ms and 30m0s; got 31m0s"},
		{"another owner's", "mallory", info.ID, time.Minute, kernels.ErrSessionNotFound, ""},
		{"no such session", "alice", "nope", time.Minute, kernels.ErrSessionNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.m.SetTTL(tc.owner, tc.id, tc.ttl)
			if !errors.Is(err, tc.target) || (tc.msg != "" && err.Error() != tc.msg) {
				t.Errorf("SetTTL: error %v, want %v %q", err, tc.target, tc.msg)
			}
		})
	}
	got, _ := f.m.Get("alice", info.ID)
	if got.TTL != kernels.DefaultTTL {
		t.Errorf("refused calls changed the TTL to %s", got.TTL)
	}

	// A lost session keeps its TTL.
	f.lose(t, refuse, "alice", info)
	if _, err := f.m.SetTTL("alice", info.ID, time.Minute); !errors.Is(err, kernels.ErrSessionLost) {
		t.Errorf("SetTTL on a lost session: error %v, want ErrSessionLost", err)
	}
}
