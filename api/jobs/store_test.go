package jobs_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api/jobs"
	"github.com/paddock-dev/paddock/api/jobs/jobstest"
)

// TestFileStore runs the backends' suite on the file store.
func TestFileStore(t *testing.T) {
	jobstest.Run(t, func(t *testing.T) jobstest.Backend {
		dir := t.TempDir()
		return jobstest.Backend{
			Open: func(t *testing.T, cfg jobs.Config) (jobstest.Store, jobs.Recovery) {
				cfg.Dir = dir
				return open(t, cfg)
			},
			States: func(t *testing.T) []string { return states(t, dir) },
		}
	})
}

func open(t *testing.T, cfg jobs.Config) (*jobs.Store, jobs.Recovery) {
	t.Helper()
	s, rec, err := jobs.Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, rec
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

// TestCrashLeftovers: what a crash leaves in the directory besides jobs
// (a half-written temporary file, a corrupt job file) is deleted on
// Open, files not the store's are left alone, and the jobs recover.
func TestCrashLeftovers(t *testing.T) {
	dir := t.TempDir()
	c := jobstest.NewClock()
	s, _ := open(t, jobs.Config{Dir: dir, Now: c.Now})
	done := jobstest.Claim(t, s, "alice", "done", "d1")
	jobstest.Finish(t, s, done, `{"stdout":"1\n"}`)
	jobstest.Claim(t, s, "alice", "sleep", "d2")
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
	got := jobstest.Begin(t, s2, "alice", "sleep", "d2")
	want := jobs.Job{Version: 1, Tenant: "alice", Key: "sleep", Digest: "d2", State: jobs.Interrupted,
		Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Finished: time.Date(2026, 11, 30, 12, 1, 0, 0, time.UTC)}
	if !jobstest.JobEqual(got, want) {
		t.Errorf("interrupted job = %+v\nwant %+v", got, want)
	}
	if _, err := s2.Begin("alice", "sleep", "other"); !errors.Is(err, jobs.ErrKeyReused) {
		t.Errorf("Begin with another digest: %v, want ErrKeyReused", err)
	}
	if got := jobstest.Begin(t, s2, "alice", "done", "d1"); got.State != jobs.Done || string(got.Result) != `{"stdout":"1\n"}` {
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

// TestFileNamesAreHashes: no client string reaches a path, and tenant
// and key cannot be shifted into each other.
func TestFileNamesAreHashes(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, jobs.Config{Dir: dir})
	jobstest.Claim(t, s, "a", "b/../../../etc/passwd", "d")
	jobstest.Claim(t, s, "ab", "/../etc/passwd", "d")
	jobstest.Claim(t, s, "", "ab/../etc/passwd", "d")
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
