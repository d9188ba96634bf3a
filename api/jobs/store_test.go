package jobs_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api/jobs"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func open(t *testing.T, cfg jobs.Config) (*jobs.Store, jobs.Recovery) {
	t.Helper()
	s, rec, err := jobs.Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, rec
}

func begin(t *testing.T, s *jobs.Store, tenant, key, digest string) jobs.Job {
	t.Helper()
	job, err := s.Begin(tenant, key, digest)
	if err != nil {
		t.Fatalf("Begin(%q, %q, %q): %v", tenant, key, digest, err)
	}
	return job
}

// claim begins a new job and fails unless the caller now holds it.
func claim(t *testing.T, s *jobs.Store, tenant, key, digest string) jobs.Job {
	t.Helper()
	job := begin(t, s, tenant, key, digest)
	if job.State != jobs.Running {
		t.Fatalf("Begin(%q, %q) = %s job, want a new running one", tenant, key, job.State)
	}
	return job
}

func finish(t *testing.T, s *jobs.Store, job jobs.Job, result string) {
	t.Helper()
	if err := s.Finish(job, json.RawMessage(result)); err != nil {
		t.Fatalf("Finish(%q): %v", job.Key, err)
	}
}

// files lists the job files in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

var jobFile = regexp.MustCompile(`^[0-9a-f]{64}\.json$`)

// states reads the state field of every job file in dir.
func states(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, name := range files(t, dir) {
		if !jobFile.MatchString(name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var j struct{ State string }
		if err := json.Unmarshal(data, &j); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, j.State)
	}
	slices.Sort(out)
	return out
}

func TestBeginFinishReplay(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	s, _ := open(t, jobs.Config{Dir: dir, Now: c.Now})

	job := claim(t, s, "alice", "k1", "d1")
	if _, err := s.Begin("alice", "k1", "d1"); !errors.Is(err, jobs.ErrInProgress) {
		t.Errorf("Begin of a running job: %v, want ErrInProgress", err)
	}
	if _, err := s.Begin("alice", "k1", "d2"); !errors.Is(err, jobs.ErrKeyReused) {
		t.Errorf("Begin with another digest while running: %v, want ErrKeyReused", err)
	}
	if got := states(t, dir); !slices.Equal(got, []string{"running"}) {
		t.Fatalf("on disk before the run: %v, want [running]", got)
	}

	c.Add(time.Second)
	finish(t, s, job, `{"stdout":"<b>1</b> & 2","exit_code":0}`)
	got := begin(t, s, "alice", "k1", "d1")
	want := jobs.Job{Version: 1, Tenant: "alice", Key: "k1", Digest: "d1", State: jobs.Done,
		Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Finished: time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC),
		Result: json.RawMessage(`{"stdout":"<b>1</b> & 2","exit_code":0}`)}
	if !jobEqual(got, want) {
		t.Errorf("replay = %+v (result %s)\nwant     %+v (result %s)", got, got.Result, want, want.Result)
	}
	if _, err := s.Begin("alice", "k1", "d2"); !errors.Is(err, jobs.ErrKeyReused) {
		t.Errorf("Begin with another digest when done: %v, want ErrKeyReused", err)
	}
	// The key belongs to its tenant.
	claim(t, s, "bob", "k1", "d2")
	if got := states(t, dir); !slices.Equal(got, []string{"done", "running"}) {
		t.Errorf("on disk: %v, want [done running]", got)
	}
}

func jobEqual(a, b jobs.Job) bool {
	return a.Version == b.Version && a.Tenant == b.Tenant && a.Key == b.Key && a.Digest == b.Digest &&
		a.State == b.State && a.Created.Equal(b.Created) && a.Finished.Equal(b.Finished) && string(a.Result) == string(b.Result)
}

func TestForgetFreesTheKey(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, jobs.Config{Dir: dir})
	job := claim(t, s, "", "k", "d1")
	if err := s.Forget(job); err != nil {
		t.Fatal(err)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("files after Forget: %v, want none", got)
	}
	again := claim(t, s, "", "k", "d2") // another body is fine now
	if err := s.Forget(job); !errors.Is(err, jobs.ErrNotClaimed) {
		t.Errorf("Forget of the old claim: %v, want ErrNotClaimed", err)
	}
	if err := s.Finish(job, json.RawMessage(`{}`)); !errors.Is(err, jobs.ErrNotClaimed) {
		t.Errorf("Finish of the old claim: %v, want ErrNotClaimed", err)
	}
	finish(t, s, again, `{}`)
	if err := s.Finish(again, json.RawMessage(`{}`)); !errors.Is(err, jobs.ErrNotClaimed) {
		t.Errorf("second Finish: %v, want ErrNotClaimed", err)
	}
}

// TestCrashMarksRunningInterrupted: a store abandoned with a job running
// (the process died) is reopened; the job is interrupted, on disk too,
// and a done job survives with its result.
func TestCrashMarksRunningInterrupted(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	s, _ := open(t, jobs.Config{Dir: dir, Now: c.Now})
	done := claim(t, s, "alice", "done", "d1")
	finish(t, s, done, `{"stdout":"1\n"}`)
	claim(t, s, "alice", "sleep", "d2")
	// What a crash leaves besides: a half-written temporary file, a
	// corrupt job file, and a file that is not the store's.
	for name, content := range map[string]string{
		".tmp-123":                         `{"version":1,"sta`,
		strings.Repeat("ab", 32) + ".json": `{"version":1,"state":"done"`,
		"README":                           "operator's notes",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	c.Add(time.Minute)
	s2, rec := open(t, jobs.Config{Dir: dir, Now: c.Now})
	if want := (jobs.Recovery{Loaded: 2, Interrupted: 1, Unreadable: 1}); rec != want {
		t.Errorf("Recovery = %+v, want %+v", rec, want)
	}
	got := begin(t, s2, "alice", "sleep", "d2")
	want := jobs.Job{Version: 1, Tenant: "alice", Key: "sleep", Digest: "d2", State: jobs.Interrupted,
		Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Finished: time.Date(2026, 11, 30, 12, 1, 0, 0, time.UTC)}
	if !jobEqual(got, want) {
		t.Errorf("interrupted job = %+v\nwant %+v", got, want)
	}
	if _, err := s2.Begin("alice", "sleep", "other"); !errors.Is(err, jobs.ErrKeyReused) {
		t.Errorf("Begin with another digest: %v, want ErrKeyReused", err)
	}
	if got := begin(t, s2, "alice", "done", "d1"); got.State != jobs.Done || string(got.Result) != `{"stdout":"1\n"}` {
		t.Errorf("done job after the crash = %s %s", got.State, got.Result)
	}
	var left []string
	for _, f := range files(t, dir) {
		if !jobFile.MatchString(f) {
			left = append(left, f)
		}
	}
	if !slices.Equal(left, []string{"README"}) {
		t.Errorf("files besides jobs: %v, want [README]", left)
	}
	// Only the two jobs remain, and neither is running any more.
	if got := states(t, dir); !slices.Equal(got, []string{"done", "interrupted"}) {
		t.Errorf("states on disk: %v, want [done interrupted]", got)
	}
}

func TestTTL(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	cfg := jobs.Config{Dir: dir, Now: c.Now, TTL: time.Hour}
	s, _ := open(t, cfg)
	finish(t, s, claim(t, s, "", "a", "d"), `1`)
	c.Add(30 * time.Minute)
	finish(t, s, claim(t, s, "", "b", "d"), `2`)
	running := claim(t, s, "", "c", "d")

	c.Add(30*time.Minute - time.Nanosecond)
	if got := begin(t, s, "", "a", "d"); got.State != jobs.Done {
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
	claim(t, s, "", "a", "other")

	// A running job never expires; its TTL starts when it finishes.
	c.Add(24 * time.Hour)
	if _, err := s.Begin("", "c", "d"); !errors.Is(err, jobs.ErrInProgress) {
		t.Errorf("a day-long run: %v, want ErrInProgress", err)
	}
	finish(t, s, running, `3`)

	if got := s.Len(); got != 2 {
		t.Errorf("Len = %d, want 2: Begin dropped b, expired long ago", got)
	}

	// Reopening deletes what expired meanwhile, c; a's second claim, left
	// running, is interrupted and kept.
	c.Add(time.Hour)
	_, rec := open(t, cfg)
	if want := (jobs.Recovery{Loaded: 1, Interrupted: 1, Expired: 1}); rec != want {
		t.Errorf("Recovery = %+v, want %+v", rec, want)
	}
}

func TestEvictsOldestFinished(t *testing.T) {
	dir := t.TempDir()
	c := newClock()
	s, _ := open(t, jobs.Config{Dir: dir, Now: c.Now, MaxJobs: 3})
	a, b := claim(t, s, "", "a", "d"), claim(t, s, "", "b", "d")
	cj := claim(t, s, "", "c", "d")
	c.Add(time.Second)
	finish(t, s, b, `"b"`) // b finished first: the oldest
	c.Add(time.Second)
	finish(t, s, a, `"a"`)

	claim(t, s, "", "d", "d") // evicts b
	if got := begin(t, s, "", "a", "d"); got.State != jobs.Done {
		t.Errorf("a: %s, want done (b was older)", got.State)
	}
	if got := claim(t, s, "", "b", "other"); got.Digest != "other" {
		t.Errorf("b was not evicted")
	} // evicts a
	if got := len(files(t, dir)); got != 3 {
		t.Errorf("%d files, want 3", got)
	}
	// Every job is running now: nothing can make room.
	if _, err := s.Begin("", "e", "d"); !errors.Is(err, jobs.ErrFull) {
		t.Errorf("Begin with every job running: %v, want ErrFull", err)
	}
	finish(t, s, cj, `"c"`)
	claim(t, s, "", "e", "d")

	// Reopening with a lower cap evicts the oldest finished at once.
	c.Add(time.Second)
	_, rec := open(t, jobs.Config{Dir: dir, Now: c.Now, MaxJobs: 1})
	if want := (jobs.Recovery{Loaded: 1, Interrupted: 3, Evicted: 2}); rec != want {
		t.Errorf("Recovery = %+v, want %+v", rec, want)
	}
}

func TestMaxBytes(t *testing.T) {
	dir := t.TempDir()
	// A done job's file takes about 440 bytes here, a running one 110.
	s, _ := open(t, jobs.Config{Dir: dir, MaxBytes: 1000, Now: newClock().Now})
	big := `"` + strings.Repeat("x", 300) + `"`
	finish(t, s, claim(t, s, "", "a", "d"), big)
	finish(t, s, claim(t, s, "", "b", "d"), big)
	// A third big result only fits once a, the oldest, is gone.
	finish(t, s, claim(t, s, "", "c", "d"), big)
	if got := begin(t, s, "", "b", "d"); got.State != jobs.Done {
		t.Errorf("b: %s, want done", got.State)
	}
	if got := claim(t, s, "", "a", "other"); got.State != jobs.Running {
		t.Errorf("a was not evicted")
	}
	// A result larger than the whole budget is not kept: the job is
	// forgotten and its key free again.
	huge := claim(t, s, "", "huge", "d")
	err := s.Finish(huge, json.RawMessage(`"`+strings.Repeat("x", 2000)+`"`))
	if !errors.Is(err, jobs.ErrFull) {
		t.Errorf("Finish of a result over MaxBytes: %v, want ErrFull", err)
	}
	claim(t, s, "", "huge", "d")
}

// TestConcurrentSameKey: of many requests with one key at once, exactly
// one gets to run; the others see it in progress.
func TestConcurrentSameKey(t *testing.T) {
	s, _ := open(t, jobs.Config{Dir: t.TempDir()})
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

// TestFileNamesAreHashes: no client string reaches a path, and tenant
// and key cannot be shifted into each other.
func TestFileNamesAreHashes(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, jobs.Config{Dir: dir})
	claim(t, s, "a", "b/../../../etc/passwd", "d")
	claim(t, s, "ab", "/../etc/passwd", "d")
	claim(t, s, "", "ab/../etc/passwd", "d")
	names := files(t, dir)
	if len(names) != 3 {
		t.Fatalf("files = %v, want 3", names)
	}
	for _, n := range names {
		if !jobFile.MatchString(n) {
			t.Errorf("file name %q is not a hash", n)
		}
	}
	info, err := os.Stat(filepath.Join(dir, names[0]))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("job file mode %v (%v), want 0600", info.Mode(), err)
	}
}

func TestStartClose(t *testing.T) {
	c := newClock()
	s, _ := open(t, jobs.Config{Dir: t.TempDir(), Now: c.Now, TTL: time.Minute, GCInterval: time.Millisecond})
	finish(t, s, claim(t, s, "", "a", "d"), `1`)
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

	unstarted, _ := open(t, jobs.Config{Dir: t.TempDir()})
	unstarted.Close()
}
