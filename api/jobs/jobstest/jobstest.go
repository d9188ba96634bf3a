// Package jobstest is the behavioural test suite every backend of
// package jobs passes: the file store and the SQL one, each run by the
// tests of a package that can open it (api/jobs for files, cmd/paddock
// for the history database's dialects). Like jobs, it imports only the
// standard library.
package jobstest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api/jobs"
)

// Store is what the suite calls of a backend's store.
type Store interface {
	Begin(tenant, key, digest string) (jobs.Job, error)
	Finish(job jobs.Job, result json.RawMessage) error
	Forget(job jobs.Job) error
	Len() int
	Collect() int
	Start()
	Close()
}

// Backend is one test's durable state of a backend.
type Backend struct {
	// Open opens a store on the state (cfg.Dir is the backend's to set),
	// as a restarted server would: each call sees what earlier ones left.
	Open func(t *testing.T, cfg jobs.Config) (Store, jobs.Recovery)
	// States lists the state of every job kept, sorted, as stored.
	States func(t *testing.T) []string
}

// Run runs the suite; newBackend makes a fresh state for each test.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	for _, tc := range []struct {
		name string
		f    func(t *testing.T, b Backend)
	}{
		{"BeginFinishReplay", beginFinishReplay},
		{"ForgetFreesTheKey", forgetFreesTheKey},
		{"CrashMarksRunningInterrupted", crashMarksRunningInterrupted},
		{"TTL", ttl},
		{"EvictsOldestFinished", evictsOldestFinished},
		{"MaxBytes", maxBytes},
		{"ConcurrentSameKey", concurrentSameKey},
		{"StartClose", startClose},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, newBackend(t)) })
	}
}

// Clock is a settable test clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// T0 is when a NewClock starts.
var T0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// NewClock is a clock at T0.
func NewClock() *Clock { return &Clock{t: T0} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Begin begins a job and fails the test on an error.
func Begin(t *testing.T, s Store, tenant, key, digest string) jobs.Job {
	t.Helper()
	job, err := s.Begin(tenant, key, digest)
	if err != nil {
		t.Fatalf("Begin(%q, %q, %q): %v", tenant, key, digest, err)
	}
	return job
}

// Claim begins a new job and fails unless the caller now holds it.
func Claim(t *testing.T, s Store, tenant, key, digest string) jobs.Job {
	t.Helper()
	job := Begin(t, s, tenant, key, digest)
	if job.State != jobs.Running {
		t.Fatalf("Begin(%q, %q) = %s job, want a new running one", tenant, key, job.State)
	}
	return job
}

// Finish finishes job with result and fails the test on an error.
func Finish(t *testing.T, s Store, job jobs.Job, result string) {
	t.Helper()
	if err := s.Finish(job, json.RawMessage(result)); err != nil {
		t.Fatalf("Finish(%q): %v", job.Key, err)
	}
}

// JobEqual compares jobs, times by instant.
func JobEqual(a, b jobs.Job) bool {
	return a.Version == b.Version && a.Tenant == b.Tenant && a.Key == b.Key && a.Digest == b.Digest &&
		a.State == b.State && a.Created.Equal(b.Created) && a.Finished.Equal(b.Finished) && string(a.Result) == string(b.Result)
}

func beginFinishReplay(t *testing.T, b Backend) {
	c := NewClock()
	s, _ := b.Open(t, jobs.Config{Now: c.Now})

	job := Claim(t, s, "alice", "k1", "d1")
	if _, err := s.Begin("alice", "k1", "d1"); !errors.Is(err, jobs.ErrInProgress) {
		t.Errorf("Begin of a running job: %v, want ErrInProgress", err)
	}
	if _, err := s.Begin("alice", "k1", "d2"); !errors.Is(err, jobs.ErrKeyReused) {
		t.Errorf("Begin with another digest while running: %v, want ErrKeyReused", err)
	}
	if got := b.States(t); !slices.Equal(got, []string{"running"}) {
		t.Fatalf("stored before the run: %v, want [running]", got)
	}

	c.Add(time.Second)
	Finish(t, s, job, `{"stdout":"<b>1</b> & 2","exit_code":0}`)
	got := Begin(t, s, "alice", "k1", "d1")
	want := jobs.Job{Version: 1, Tenant: "alice", Key: "k1", Digest: "d1", State: jobs.Done,
		Created: T0, Finished: T0.Add(time.Second),
		Result: json.RawMessage(`{"stdout":"<b>1</b> & 2","exit_code":0}`)}
	if !JobEqual(got, want) {
		t.Errorf("replay = %+v (result %s)\nwant     %+v (result %s)", got, got.Result, want, want.Result)
	}
	if _, err := s.Begin("alice", "k1", "d2"); !errors.Is(err, jobs.ErrKeyReused) {
		t.Errorf("Begin with another digest when done: %v, want ErrKeyReused", err)
	}
	// The key belongs to its tenant.
	Claim(t, s, "bob", "k1", "d2")
	if got := b.States(t); !slices.Equal(got, []string{"done", "running"}) {
		t.Errorf("stored: %v, want [done running]", got)
	}
}

func forgetFreesTheKey(t *testing.T, b Backend) {
	s, _ := b.Open(t, jobs.Config{})
	job := Claim(t, s, "", "k", "d1")
	if err := s.Forget(job); err != nil {
		t.Fatal(err)
	}
	if got := b.States(t); len(got) != 0 {
		t.Errorf("jobs after Forget: %v, want none", got)
	}
	again := Claim(t, s, "", "k", "d2") // another body is fine now
	if err := s.Forget(job); !errors.Is(err, jobs.ErrNotClaimed) {
		t.Errorf("Forget of the old claim: %v, want ErrNotClaimed", err)
	}
	if err := s.Finish(job, json.RawMessage(`{}`)); !errors.Is(err, jobs.ErrNotClaimed) {
		t.Errorf("Finish of the old claim: %v, want ErrNotClaimed", err)
	}
	Finish(t, s, again, `{}`)
	if err := s.Finish(again, json.RawMessage(`{}`)); !errors.Is(err, jobs.ErrNotClaimed) {
		t.Errorf("second Finish: %v, want ErrNotClaimed", err)
	}
}

// crashMarksRunningInterrupted: a store abandoned with a job running
// (the process died) is reopened; the job is interrupted, in storage
// too, and a done job survives with its result.
func crashMarksRunningInterrupted(t *testing.T, b Backend) {
	c := NewClock()
	s, _ := b.Open(t, jobs.Config{Now: c.Now})
	Finish(t, s, Claim(t, s, "alice", "done", "d1"), `{"stdout":"1\n"}`)
	Claim(t, s, "alice", "sleep", "d2")

	c.Add(time.Minute)
	s2, rec := b.Open(t, jobs.Config{Now: c.Now})
	if want := (jobs.Recovery{Loaded: 2, Interrupted: 1}); rec != want {
		t.Errorf("Recovery = %+v, want %+v", rec, want)
	}
	got := Begin(t, s2, "alice", "sleep", "d2")
	want := jobs.Job{Version: 1, Tenant: "alice", Key: "sleep", Digest: "d2", State: jobs.Interrupted,
		Created: T0, Finished: T0.Add(time.Minute)}
	if !JobEqual(got, want) {
		t.Errorf("interrupted job = %+v\nwant %+v", got, want)
	}
	if _, err := s2.Begin("alice", "sleep", "other"); !errors.Is(err, jobs.ErrKeyReused) {
		t.Errorf("Begin with another digest: %v, want ErrKeyReused", err)
	}
	if got := Begin(t, s2, "alice", "done", "d1"); got.State != jobs.Done || string(got.Result) != `{"stdout":"1\n"}` {
		t.Errorf("done job after the crash = %s %s", got.State, got.Result)
	}
	if got := b.States(t); !slices.Equal(got, []string{"done", "interrupted"}) {
		t.Errorf("states stored: %v, want [done interrupted]", got)
	}
}

func ttl(t *testing.T, b Backend) {
	c := NewClock()
	cfg := jobs.Config{Now: c.Now, TTL: time.Hour}
	s, _ := b.Open(t, cfg)
	Finish(t, s, Claim(t, s, "", "a", "d"), `1`)
	c.Add(30 * time.Minute)
	Finish(t, s, Claim(t, s, "", "b", "d"), `2`)
	running := Claim(t, s, "", "c", "d")

	c.Add(30*time.Minute - time.Nanosecond)
	if got := Begin(t, s, "", "a", "d"); got.State != jobs.Done {
		t.Fatalf("a just before its TTL: %s, want done", got.State)
	}
	c.Add(time.Nanosecond)
	if n := s.Collect(); n != 1 {
		t.Errorf("Collect at a's TTL deleted %d, want 1", n)
	}
	if got := s.Len(); got != 2 {
		t.Errorf("Len = %d, want 2 (b, and c running)", got)
	}
	// An expired key is a new one, whatever the body.
	Claim(t, s, "", "a", "other")

	// A running job never expires; its TTL starts when it finishes.
	c.Add(24 * time.Hour)
	if _, err := s.Begin("", "c", "d"); !errors.Is(err, jobs.ErrInProgress) {
		t.Errorf("a day-long run: %v, want ErrInProgress", err)
	}
	Finish(t, s, running, `3`)

	if got := s.Len(); got != 2 {
		t.Errorf("Len = %d, want 2: Begin dropped b, expired long ago", got)
	}

	// Reopening deletes what expired meanwhile, c; a's second claim, left
	// running, is interrupted and kept.
	c.Add(time.Hour)
	_, rec := b.Open(t, cfg)
	if want := (jobs.Recovery{Loaded: 1, Interrupted: 1, Expired: 1}); rec != want {
		t.Errorf("Recovery = %+v, want %+v", rec, want)
	}
}

func evictsOldestFinished(t *testing.T, b Backend) {
	c := NewClock()
	s, _ := b.Open(t, jobs.Config{Now: c.Now, MaxJobs: 3})
	a, bj := Claim(t, s, "", "a", "d"), Claim(t, s, "", "b", "d")
	cj := Claim(t, s, "", "c", "d")
	c.Add(time.Second)
	Finish(t, s, bj, `"b"`) // b finished first: the oldest
	c.Add(time.Second)
	Finish(t, s, a, `"a"`)

	Claim(t, s, "", "d", "d") // evicts b
	if got := Begin(t, s, "", "a", "d"); got.State != jobs.Done {
		t.Errorf("a: %s, want done (b was older)", got.State)
	}
	if got := Claim(t, s, "", "b", "other"); got.Digest != "other" {
		t.Errorf("b was not evicted")
	} // evicts a
	if got := s.Len(); got != 3 {
		t.Errorf("%d jobs, want 3", got)
	}
	// Every job is running now: nothing can make room.
	if _, err := s.Begin("", "e", "d"); !errors.Is(err, jobs.ErrFull) {
		t.Errorf("Begin with every job running: %v, want ErrFull", err)
	}
	Finish(t, s, cj, `"c"`)
	Claim(t, s, "", "e", "d")

	// Reopening with a lower cap evicts the oldest finished at once.
	c.Add(time.Second)
	_, rec := b.Open(t, jobs.Config{Now: c.Now, MaxJobs: 1})
	if want := (jobs.Recovery{Loaded: 1, Interrupted: 3, Evicted: 2}); rec != want {
		t.Errorf("Recovery = %+v, want %+v", rec, want)
	}
}

func maxBytes(t *testing.T, b Backend) {
	// A done job here takes 300 to 450 bytes, a running one 60 to 120,
	// by either backend's count.
	s, _ := b.Open(t, jobs.Config{MaxBytes: 1000, Now: NewClock().Now})
	big := `"` + strings.Repeat("x", 300) + `"`
	Finish(t, s, Claim(t, s, "", "a", "d"), big)
	Finish(t, s, Claim(t, s, "", "b", "d"), big)
	// A third big result only fits once a, the oldest, is gone.
	Finish(t, s, Claim(t, s, "", "c", "d"), big)
	if got := Begin(t, s, "", "b", "d"); got.State != jobs.Done {
		t.Errorf("b: %s, want done", got.State)
	}
	if got := Claim(t, s, "", "a", "other"); got.State != jobs.Running {
		t.Errorf("a was not evicted")
	}
	// A result larger than the whole budget is not kept: the job is
	// forgotten and its key free again.
	huge := Claim(t, s, "", "huge", "d")
	err := s.Finish(huge, json.RawMessage(`"`+strings.Repeat("x", 2000)+`"`))
	if !errors.Is(err, jobs.ErrFull) {
		t.Errorf("Finish of a result over MaxBytes: %v, want ErrFull", err)
	}
	Claim(t, s, "", "huge", "d")
}

// concurrentSameKey: of many requests with one key at once, exactly one
// gets to run; the others see it in progress.
func concurrentSameKey(t *testing.T, b Backend) {
	s, _ := b.Open(t, jobs.Config{})
	const n = 32
	var (
		wg                sync.WaitGroup
		mu                sync.Mutex
		claimed, inFlight int
		others            []error
	)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			job, err := s.Begin("t", "same", "d")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && job.State == jobs.Running:
				claimed++
			case errors.Is(err, jobs.ErrInProgress):
				inFlight++
			default:
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if claimed != 1 || inFlight != n-1 || len(others) != 0 {
		t.Errorf("claimed %d, in progress %d, other %v; want 1, %d, none", claimed, inFlight, others, n-1)
	}
}

func startClose(t *testing.T, b Backend) {
	c := NewClock()
	s, _ := b.Open(t, jobs.Config{Now: c.Now, TTL: time.Minute, GCInterval: time.Millisecond})
	Finish(t, s, Claim(t, s, "", "a", "d"), `1`)
	s.Start()
	c.Add(time.Minute)
	deadline := time.Now().Add(time.Minute) // a safety net only
	for s.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the collector did not delete the expired job in a minute")
		}
		time.Sleep(time.Millisecond)
	}
	s.Close()
	s.Close()

	unstarted, _ := b.Open(t, jobs.Config{})
	unstarted.Close()
}
