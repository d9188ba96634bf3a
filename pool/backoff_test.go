package pool

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// recorder is a slog.Handler that keeps every record.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func (r *recorder) count(level slog.Level) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.recs {
		if rec.Level == level {
			n++
		}
	}
	return n
}

func TestFillerBacksOff(t *testing.T) {
	errBoom := errors.New("runsc: no such file")
	tests := []struct {
		name        string
		failures    int // starts that fail before one succeeds; -1 = all
		waits       int // backoff waits to observe
		wantDelays  []time.Duration
		wantHealthy bool
		wantWarn    int
		wantInfo    int
	}{
		{
			name:     "keeps failing",
			failures: -1,
			waits:    8,
			wantDelays: []time.Duration{
				100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
				1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second,
			},
			wantWarn: 1,
		},
		{
			name:        "recovers",
			failures:    2,
			waits:       2,
			wantDelays:  []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			wantHealthy: true,
			wantWarn:    1,
			wantInfo:    1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &runnertest.Runtime{}
			var calls int
			rt.StartFunc = func(_ context.Context, spec runner.Spec) (runner.Sandbox, error) {
				calls++ // one filler: starts are sequential
				if tc.failures < 0 || calls <= tc.failures {
					return nil, errBoom
				}
				return rt.NewSandbox(spec), nil
			}
			rec := &recorder{}
			m, err := New(rt, Config{Templates: []Template{{Name: "python", Size: 1}}}, slog.New(rec))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			var (
				mu     sync.Mutex
				delays []time.Duration
				done   = make(chan struct{})
			)
			m.wait = func(ctx context.Context, d time.Duration) error {
				mu.Lock()
				delays = append(delays, d)
				n := len(delays)
				mu.Unlock()
				if n == tc.waits {
					close(done)
				}
				if n >= tc.waits && tc.failures < 0 {
					<-ctx.Done() // park the filler until Close
					return ctx.Err()
				}
				return nil
			}
			m.Start()
			<-done
			if tc.wantHealthy {
				deadline := time.Now().Add(time.Minute) // a safety net only
				for !m.Ready() && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
			}
			s := m.Stats()[0]
			if err := m.Close(t.Context()); err != nil {
				t.Fatalf("Close: %v", err)
			}

			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(delays, tc.wantDelays) {
				t.Errorf("delays = %v, want %v", delays, tc.wantDelays)
			}
			if s.Healthy != tc.wantHealthy || s.StartFailures != uint64(len(tc.wantDelays)) {
				t.Errorf("healthy, failures = %v, %d; want %v, %d", s.Healthy, s.StartFailures, tc.wantHealthy, len(tc.wantDelays))
			}
			if got := rec.count(slog.LevelWarn); got != tc.wantWarn {
				t.Errorf("warnings = %d, want %d", got, tc.wantWarn)
			}
			if got := rec.count(slog.LevelInfo); got != tc.wantInfo {
				t.Errorf("infos = %d, want %d", got, tc.wantInfo)
			}
			if got := rt.Live(); got != 0 {
				t.Errorf("Live = %d, want 0", got)
			}
		})
	}
}

func TestBackoffCaps(t *testing.T) {
	m := &Manager{backoffMin: 100 * time.Millisecond, backoffMax: 5 * time.Second}
	tests := []struct {
		name string
		n    int
		want time.Duration
	}{
		{name: "first", n: 1, want: 100 * time.Millisecond},
		{name: "third", n: 3, want: 400 * time.Millisecond},
		{name: "capped", n: 7, want: 5 * time.Second},
		{name: "far past the cap", n: 1000, want: 5 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.backoff(tc.n); got != tc.want {
				t.Errorf("backoff(%d) = %v, want %v", tc.n, got, tc.want)
			}
		})
	}
}
