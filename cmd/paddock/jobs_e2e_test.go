package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// keyedAnswer is the answer to one POST /v1/run with an Idempotency-Key.
type keyedAnswer struct {
	status   int
	replayed string // the Idempotent-Replayed header
	body     []byte
	err      error
}

func postKeyed(url, key, body string, timeout time.Duration) keyedAnswer {
	req, err := http.NewRequest(http.MethodPost, url+"/v1/run", strings.NewReader(body))
	if err != nil {
		return keyedAnswer{err: err}
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return keyedAnswer{err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return keyedAnswer{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed"), body: raw, err: err}
}

// jobStates lists the states of the jobs kept under state: in the
// history database's jobs table, or with --history-db=off in the job
// files. Either way, the other place holds none.
func jobStates(t *testing.T, state string, inFiles bool) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(state, "jobs", "*.json"))
	var out []string
	if inFiles {
		if _, err := os.Stat(filepath.Join(state, "history.db")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("history.db with --history-db=off: %v", err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				continue // being replaced
			}
			var j struct{ State string }
			if json.Unmarshal(data, &j) == nil {
				out = append(out, j.State)
			}
		}
		return out
	}
	if len(files) != 0 {
		t.Fatalf("job files with the history database on: %v", files)
	}
	db, err := sql.Open("sqlite", filepath.Join(state, "history.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT state FROM jobs`)
	if err != nil {
		return nil // not created yet
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// awaitRunningJob waits until a job under state is stored as running.
func awaitRunningJob(t *testing.T, state string, inFiles bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := jobStates(t, state, inFiles)
		if slices.Contains(got, "running") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no running job under %s after 30s: %v", state, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestE2EIdempotentRunsSurviveACrash is the job half of H49 (c): a keyed
// run in flight when the server is SIGKILLed answers "interrupted" after
// the restart, and a keyed run completed before the crash replays its
// stored result, without running either again: with the jobs in the
// history database (the default) and, with --history-db=off, in files.
func TestE2EIdempotentRunsSurviveACrash(t *testing.T) {
	runscPath, _, _ := lifecycleEnv(t)
	bin := serverBinary(t)
	for _, tc := range []struct {
		name    string
		flags   []string
		inFiles bool
	}{
		{"history-db", nil, false},
		{"files", []string{"--history-db=off"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) { idempotentRunsSurviveACrash(t, bin, runscPath, tc.flags, tc.inFiles) })
	}
}

func idempotentRunsSurviveACrash(t *testing.T, bin, runscPath string, flags []string, inFiles bool) {
	state := newStateDir(t, runscPath)
	first := startServer(t, bin, state, flags...)

	const printBody = `{"language":"python","code":"print(1)"}`
	printed := postKeyed(first.url, "print-1", printBody, time.Minute)
	if printed.err != nil || printed.status != http.StatusOK || printed.replayed != "" {
		t.Fatalf("print(1): HTTP %d replayed %q %s %v", printed.status, printed.replayed, printed.body, printed.err)
	}
	var printResp runResp
	if err := json.Unmarshal(printed.body, &printResp); err != nil || printResp.Stdout != "1\n" || printResp.SandboxID == "" {
		t.Fatalf("print(1): %s (%v)", printed.body, err)
	}

	blocked, _ := json.Marshal(map[string]any{"language": "python", "code": blockingRun, "timeout_ms": 60000})
	sleepBody := string(blocked)
	sleeping := make(chan keyedAnswer, 1)
	go func() { sleeping <- postKeyed(first.url, "sleep-30", sleepBody, 2*time.Minute) }()
	// The job is on disk as running before the run starts; a retry
	// meanwhile is told so.
	awaitRunningJob(t, state, inFiles)
	if a := postKeyed(first.url, "sleep-30", sleepBody, 10*time.Second); a.status != http.StatusConflict ||
		!strings.Contains(string(a.body), `"code":"in_progress"`) {
		t.Fatalf("a retry during the sleeping run: HTTP %d %s %v, want 409 in_progress", a.status, a.body, a.err)
	}
	awaitInFlight(t, runscPath, state, 1)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := first.wait(time.Minute); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("first server exit: %v, want killed", err)
	}
	if a := <-sleeping; a.err == nil {
		t.Fatalf("the killed server answered the sleeping run: HTTP %d %s", a.status, a.body)
	}

	second := startServer(t, bin, state, flags...)
	if !strings.Contains(second.logs.String(), `msg="marked idempotent runs left in flight by an earlier server as interrupted" count=1`) {
		t.Errorf("the restarted server's log does not say it marked one run interrupted:\n%s", second.logs.String())
	}

	a := postKeyed(second.url, "sleep-30", sleepBody, time.Minute)
	if a.err != nil || a.status != http.StatusOK || a.replayed != "true" {
		t.Fatalf("retry of the interrupted run: HTTP %d replayed %q %s %v", a.status, a.replayed, a.body, a.err)
	}
	var interrupted runResp
	if err := json.Unmarshal(a.body, &interrupted); err != nil {
		t.Fatal(err)
	}
	// Run again, the program would wait for a release that never comes
	// and answer timeout.
	if want := (runResp{ExitCode: 137, Reason: "interrupted"}); interrupted != want {
		t.Errorf("interrupted run = %+v, want %+v", interrupted, want)
	}

	again := postKeyed(second.url, "print-1", printBody, time.Minute)
	if again.err != nil || again.status != http.StatusOK || again.replayed != "true" {
		t.Fatalf("replay of print(1): HTTP %d replayed %q %s %v", again.status, again.replayed, again.body, again.err)
	}
	if !bytes.Equal(again.body, printed.body) {
		t.Errorf("replayed body\n%s\ndiffers from the original\n%s", again.body, printed.body)
	}
	if a := postKeyed(second.url, "print-1", `{"language":"python","code":"print(2)"}`, time.Minute); a.status != http.StatusUnprocessableEntity {
		t.Errorf("print-1 with another body: HTTP %d %s, want 422", a.status, a.body)
	}

	got := jobStates(t, state, inFiles)
	slices.Sort(got)
	if want := []string{"done", "interrupted"}; !slices.Equal(got, want) {
		t.Errorf("jobs stored: %v, want %v", got, want)
	}

	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.wait(time.Minute); err != nil {
		t.Fatalf("restarted server exit: %v", err)
	}
}
