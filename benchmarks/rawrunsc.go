package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
	"github.com/paddock-dev/paddock/benchmarks/internal/load"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

// rawPlatform is the gVisor platform `paddock serve` uses by default, and
// so the one the bench's servers run on.
const rawPlatform = "systrap"

// rawRuntime runs programs of one template under runsc without Paddock:
// no agent, no pool, no HTTP. Each container gets the OCI spec Paddock
// renders for the template's sandboxes (ocispec.Render: the same memory,
// CPU and pids cgroup limits, rlimits, mounts and overlay size), with the
// interpreter as its process in place of the agent. It is the baseline of
// cold starts, restores and throughput.
type rawRuntime struct {
	runsc    string
	dir      string // bundles, images and runsc's state, private to the bench
	root     string // runsc's --root
	agentDir string // mounted where sandboxes mount the agent
	spec     runner.Spec
	warmup   string // the template's warm-up code
}

func newRawRuntime(o bench.Options, name string) (*rawRuntime, error) {
	t, err := templates.Get(name)
	if err != nil {
		return nil, err
	}
	fs, err := templateRootfs(o.Cache, name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "paddock-rawrunsc-")
	if err != nil {
		return nil, err
	}
	agent, err := filepath.Abs(o.Agent)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return &rawRuntime{runsc: o.Runsc, dir: dir, root: filepath.Join(dir, "root"), agentDir: filepath.Dir(agent),
		spec:   runner.Spec{Template: t.Name, Language: t.Language, Rootfs: fs, Limits: templateLimits(t.Limits)},
		warmup: t.Warmup}, nil
}

// templateLimits are a template's limits as a sandbox spec carries them.
func templateLimits(l templates.Limits) runner.Limits {
	return runner.Limits{MemoryBytes: l.MemoryBytes(), Processes: l.Processes, CPUs: l.CPUs,
		DiskBytes: l.DiskBytes(), OpenFiles: l.OpenFiles}
}

// rawSpec is Paddock's spec for container id with argv as its process,
// run as the sandbox user in /workspace with no capabilities.
func (rt *rawRuntime) rawSpec(id string, argv []string) *specs.Spec {
	s := ocispec.Render(id, rt.spec, rt.agentDir)
	s.Process = &specs.Process{
		User:            specs.User{UID: ocispec.UID, GID: ocispec.GID},
		Args:            argv,
		Env:             rootfsEnv,
		Cwd:             ocispec.WorkDir,
		Rlimits:         s.Process.Rlimits,
		NoNewPrivileges: true,
	}
	return s
}

// bundle writes container id's bundle and returns its directory.
func (rt *rawRuntime) bundle(id string, argv []string) (string, error) {
	dir := filepath.Join(rt.dir, "bundles", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.Marshal(rt.rawSpec(id, argv))
	if err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600)
}

// command is one runsc invocation; create says it brings a container up
// (run, restore) and carries Paddock's create flags.
func (rt *rawRuntime) command(ctx context.Context, create bool, args ...string) *exec.Cmd {
	argv := []string{"--root=" + rt.root, "--platform=" + rawPlatform}
	if create {
		argv = append(argv, runsc.CreateFlags(rt.spec)...)
	}
	return exec.CommandContext(ctx, rt.runsc, append(argv, args...)...)
}

// remove force-deletes container id and its bundle.
func (rt *rawRuntime) remove(id string) error {
	// Not ctx's: a cancelled bench still deletes what it made.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := rt.command(ctx, false, "delete", "--force", id).Run()
	if err != nil {
		err = fmt.Errorf("runsc delete %s: %w", id, err)
	}
	return errors.Join(err, os.RemoveAll(filepath.Join(rt.dir, "bundles", id)))
}

// rawResult is one raw run: its stdout and how long it took, from
// writing the bundle to the end of `runsc delete`.
type rawResult struct {
	Stdout string
	Total  time.Duration
	// Delete is the part of Total spent in `runsc delete`.
	Delete time.Duration
}

// run does `runsc run` of argv (create, start, wait) and then `runsc
// delete`, both timed.
func (rt *rawRuntime) run(ctx context.Context, argv []string) (rawResult, error) {
	var res rawResult
	id := rawID()
	begin := time.Now()
	bundle, err := rt.bundle(id, argv)
	if err != nil {
		return res, err
	}
	out, runErr := output(ctx, rt.command(ctx, true, "run", "--bundle="+bundle, id))
	deleted := time.Now()
	delErr := rt.remove(id)
	res = rawResult{Stdout: out, Total: time.Since(begin), Delete: time.Since(deleted)}
	if runErr != nil {
		runErr = fmt.Errorf("runsc run %s: %w", id, runErr)
	}
	return res, errors.Join(runErr, delErr)
}

// rawID is a fresh container ID; fixed length, so that no ID is a prefix
// of another.
func rawID() string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return "raw-" + hex.EncodeToString(rnd[:])
}

// close releases the network namespace runsc pins under its root and
// removes the bundles, images and state.
func (rt *rawRuntime) close() {
	for range 64 {
		if syscall.Unmount(filepath.Join(rt.root, "null-netns"), syscall.MNT_DETACH) != nil {
			break
		}
	}
	_ = os.RemoveAll(rt.dir)
}

// rawRow times n raw `runsc run` + `runsc delete` of p.
func rawRow(ctx context.Context, rt *rawRuntime, l langs.Lang, p langs.Probe, n int) (stats.Row, error) {
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: stats.ModeRaw}
	argv := l.Sandboxed(p.Code)
	for range n {
		res, err := rt.run(ctx, argv)
		if err != nil {
			return r, err
		}
		if !p.OK(res.Stdout) {
			return r, fmt.Errorf("raw runsc %s %s: stdout %q", l.Name, p.Name, res.Stdout)
		}
		r.Samples = append(r.Samples, stats.Sample{D: res.Total, Counted: true, Delete: res.Delete})
	}
	return r, nil
}

// templateRootfs finds the built root filesystem of a template.
func templateRootfs(cache, name string) (string, error) {
	t, err := templates.Get(name)
	if err != nil {
		return "", err
	}
	img, err := (&rootfs.Builder{CacheDir: cache}).Lookup(t)
	if err != nil {
		return "", fmt.Errorf("root filesystem of %s: %w (run `make rootfs`)", name, err)
	}
	return img.Path, nil
}

// emptyProgram is what an empty sandbox runs: nothing, and exits 0.
var emptyProgram = []string{"/bin/true"}

// rawRate measures raw runs of l's trivial probe, each done by once and
// deleted: the rate gVisor itself allows on this machine under Paddock's
// limits.
func rawRate(ctx context.Context, l langs.Lang, target string, conc int, dur time.Duration, once func(ctx context.Context, code string) (rawResult, error)) (report.Throughput, error) {
	p := l.Probes[0]
	t, err := load.Rate(ctx, conc, dur, func(ctx context.Context) (string, time.Duration, error) {
		res, err := once(ctx, p.Code)
		if err == nil && !p.OK(res.Stdout) {
			err = fmt.Errorf("%s %s: stdout %q", target, l.Name, res.Stdout)
		}
		return "", res.Total, err
	})
	t.Lang, t.Target = l.Name, target
	return t, err
}
