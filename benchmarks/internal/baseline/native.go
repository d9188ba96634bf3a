package baseline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// The native rows time unsandboxed interpreter starts. The baseline
// (modeNative) is the template's own interpreter and libraries, run from
// its root filesystem (see chroot.go); every ratio is taken against it.
// The host's interpreter at the same path is a second row (modeHost): it
// shows how far a host's Python or Node is from the template's, and is
// skipped, with a note, when the host lacks it or cannot run the probe
// (a fresh machine has no pandas).

// nativeRows times n starts of each of l's probes with start, after one
// unmeasured start that warms the page cache. where names the
// interpreter in the notes ("rootfs python-…", "host"). With optional,
// an interpreter that is missing or fails a probe's first start gives a
// row without samples whose note says why, not an error.
func nativeRows(ctx context.Context, l langs.Lang, mode, where string, n int, optional bool, start func(argv []string) *exec.Cmd) ([]stats.Row, error) {
	var rows []stats.Row
	version, err := Output(ctx, start(append(l.Native[:1:1], l.Version...)))
	if err != nil {
		if !optional || ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", where, l.Native[0], err)
		}
		for _, p := range l.Probes {
			rows = append(rows, stats.Row{Lang: l.Name, Probe: p.Name, Mode: mode, Note: skipNote(where, l, err)})
		}
		return rows, nil
	}
	note := fmt.Sprintf("%s %s %s", where, l.Name, strings.TrimSpace(version))
	for _, p := range l.Probes {
		r, err := nativeRow(ctx, l, p, mode, n, start)
		r.Note = note
		if err != nil {
			if !optional || len(r.Samples) > 0 || ctx.Err() != nil {
				return rows, err
			}
			r.Note = note + ": " + skipNote(where, l, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// skipNote says why an optional row was not measured.
func skipNote(where string, l langs.Lang, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("skipped: no %s on the %s", l.Native[0], where)
	}
	return fmt.Sprintf("skipped: %v", err)
}

// nativeRow times n starts of the interpreter running p.
func nativeRow(ctx context.Context, l langs.Lang, p langs.Probe, mode string, n int, start func(argv []string) *exec.Cmd) (stats.Row, error) {
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: mode}
	argv := append(append([]string(nil), l.Native...), p.Code)
	for i := -1; i < n; i++ {
		begin := time.Now()
		out, err := Output(ctx, start(argv))
		d := time.Since(begin)
		if err == nil && !p.OK(out) {
			err = fmt.Errorf("stdout %q", out)
		}
		if err != nil {
			return r, fmt.Errorf("native %s %s: %w", l.Name, p.Name, err)
		}
		if i >= 0 {
			r.Samples = append(r.Samples, stats.Sample{D: d, Counted: true})
		}
	}
	return r, nil
}

// Output runs cmd and returns its stdout; a failure carries the last line
// of its stderr. ctx ending kills it.
func Output(ctx context.Context, cmd *exec.Cmd) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	stop()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, LastLine(stderr.String()))
	}
	return stdout.String(), nil
}

// LastLine is the last line of s, trimmed.
func LastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// hostCommand runs argv on the host, in the environment a sandbox's
// program gets (rootfsEnv), not the host's own: a host's variables can
// change an interpreter's start (NODE_EXTRA_CA_CERTS has Node parse a CA
// bundle at every start, three times its CPU here).
func hostCommand(argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = rootfsEnv
	return cmd
}
