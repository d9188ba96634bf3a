package memory

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/baseline"
	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// The native RSS is what a template's interpreter holds in memory when it
// runs without gVisor, from the template's own root filesystem (the same
// chroot as the native rows, see chroot.go), after the template's warm-up,
// waiting: the same state a pooled sandbox idles in. The memory target of
// a warmed template is that plus a sandbox's fair share of overhead.

// nativeRSSSettle is how long a native interpreter idles before its
// memory is read: an interpreter's RSS is steady once it waits (unlike a
// Sentry's, whose Go runtime returns memory minutes later, which
// --mem-settle is for).
const nativeRSSSettle = 2 * time.Second

// Templates are the templates whose idle pooled memory the bench reads,
// and so whose native RSS it measures.
var Templates = []string{"python", "python-slim", "node"}

// idlingProgram is the argv tail that runs warmup in the template's
// language, says "ready" on stdout and then waits until stdin ends. For
// Python it collects garbage before waiting, as Paddock's driver does.
func idlingProgram(language, warmup string) ([]string, error) {
	switch language {
	case "python":
		return []string{"-c", warmup + "\nimport gc, sys\ngc.collect()\nprint('ready', flush=True)\nsys.stdin.read()\n"}, nil
	case "node":
		return []string{"-e", warmup + "\n;console.log('ready');\nprocess.stdin.resume();\n"}, nil
	}
	return nil, fmt.Errorf("no idling program for language %q", language)
}

// NativeRSSPhase measures, n times per template of Templates, the
// resident memory of its interpreter idling after the warm-up.
func NativeRSSPhase(ctx context.Context, o bench.Options, rep *report.Report) error {
	for _, name := range Templates {
		t, l, err := langs.ForTemplate(name)
		if err != nil {
			return err
		}
		tail, err := idlingProgram(t.Language, t.Warmup)
		if err != nil {
			return err
		}
		fs, err := baseline.TemplateRootfs(o.Cache, name)
		if err != nil {
			return err
		}
		r := report.NativeRSS{Template: name, Note: fmt.Sprintf("%s from the rootfs: warm-up, then idle %s", l.Native[0], nativeRSSSettle)}
		err = baseline.InReadOnlyRoot(fs, func(root string) error {
			// matplotlib's warm-up writes its cache under /tmp, which a
			// sandbox has writable: so does this private view.
			if err := syscall.Mount("tmpfs", filepath.Join(root, "tmp"), "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777,size=64m"); err != nil {
				return fmt.Errorf("mounting a tmpfs on %s/tmp: %w", root, err)
			}
			for range o.NativeRSSN {
				s, err := idleRSS(ctx, baseline.RootfsCommand(root, append([]string{l.Native[0]}, tail...)), nativeRSSSettle)
				if err != nil {
					return fmt.Errorf("native RSS of %s: %w", name, err)
				}
				r.Samples = append(r.Samples, s)
			}
			return nil
		})
		rep.NativeRSS = append(rep.NativeRSS, r)
		if err != nil {
			return err
		}
		bench.Progress("native %s idle after its warm-up: VmRSS %.1f MiB (anon %.1f, file %.1f)", name, r.VmRSSMB(),
			r.MeanMB(func(s report.ProcRSSSample) uint64 { return s.RssAnon }), r.MeanMB(func(s report.ProcRSSSample) uint64 { return s.RssFile }))
	}
	return nil
}

// idleRSS starts cmd, waits for its "ready" line, lets it idle for
// settle, reads its /proc status, then closes its stdin and waits for it
// to end. ctx ending kills it.
func idleRSS(ctx context.Context, cmd *exec.Cmd, settle time.Duration) (report.ProcRSSSample, error) {
	var s report.ProcRSSSample
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return s, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return s, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return s, err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	end := func(err error) (report.ProcRSSSample, error) {
		stdin.Close()
		werr := cmd.Wait()
		if err == nil {
			err = werr
		}
		if err != nil {
			err = fmt.Errorf("%w (stderr: %s)", err, baseline.LastLine(stderr.String()))
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
			s.MaxRSS = uint64(ru.Maxrss) << 10 // kibibytes on Linux
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return s, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill() // harmless if it has ended
		return end(fmt.Errorf("waiting for ready: got %q", line))
	}
	go io.Copy(io.Discard, stdout)
	if err := bench.Sleep(ctx, settle); err != nil {
		return end(err)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return end(err)
	}
	st, err := host.ParseProcStatus(f)
	f.Close()
	if err != nil {
		return end(err)
	}
	s.VmRSS, s.RssAnon, s.RssFile, s.RssShmem = st["VmRSS"], st["RssAnon"], st["RssFile"], st["RssShmem"]
	if s.VmRSS == 0 {
		return end(errors.New("no VmRSS in its /proc status"))
	}
	return end(nil)
}
