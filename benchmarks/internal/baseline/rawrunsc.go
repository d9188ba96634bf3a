package baseline

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
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

// Platform is the gVisor platform `paddock serve` uses by default, and
// so the one the bench's servers run on.
const Platform = "systrap"

// Runtime runs programs of one template under runsc without Paddock:
// no agent, no pool, no HTTP. Each container gets the OCI spec Paddock
// renders for the template's sandboxes (ocispec.Render: the same memory,
// CPU and pids cgroup limits, rlimits, mounts and overlay size), with the
// interpreter as its process in place of the agent. It is the baseline of
// cold starts, restores and throughput.
type Runtime struct {
	runsc    string
	dir      string // bundles, images and runsc's state, private to the bench
	root     string // runsc's --root
	agentDir string // mounted where sandboxes mount the agent
	spec     runner.Spec
	warmup   string // the template's warm-up code
}

// NewRuntime makes the raw runtime of template name, in a directory of
// its own.
func NewRuntime(o bench.Options, name string) (*Runtime, error) {
	t, err := templates.Get(name)
	if err != nil {
		return nil, err
	}
	fs, err := TemplateRootfs(o.Cache, name)
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
	return &Runtime{runsc: o.Runsc, dir: dir, root: filepath.Join(dir, "root"), agentDir: filepath.Dir(agent),
		spec:   runner.Spec{Template: t.Name, Language: t.Language, Rootfs: fs, Limits: TemplateLimits(t.Limits)},
		warmup: t.Warmup}, nil
}

// TemplateLimits are a template's limits as a sandbox spec carries them.
func TemplateLimits(l templates.Limits) runner.Limits {
	return runner.Limits{MemoryBytes: l.MemoryBytes(), Processes: l.Processes, CPUs: l.CPUs,
		DiskBytes: l.DiskBytes(), OpenFiles: l.OpenFiles}
}

// rawSpec is Paddock's spec for container id with argv as its process,
// run as the sandbox user in /workspace with no capabilities.
func (rt *Runtime) rawSpec(id string, argv []string) *specs.Spec {
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

// Bundle writes container id's bundle and returns its directory.
func (rt *Runtime) Bundle(id string, argv []string) (string, error) {
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

// Command is one runsc invocation; create says it brings a container up
// (run, restore) and carries Paddock's create flags.
func (rt *Runtime) Command(ctx context.Context, create bool, args ...string) *exec.Cmd {
	argv := []string{"--root=" + rt.root, "--platform=" + Platform}
	if create {
		argv = append(argv, runsc.CreateFlags(rt.spec)...)
	}
	return exec.CommandContext(ctx, rt.runsc, append(argv, args...)...)
}

// remove force-deletes container id and its bundle.
func (rt *Runtime) remove(id string) error {
	// Not ctx's: a cancelled bench still deletes what it made.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := rt.Command(ctx, false, "delete", "--force", id).Run()
	if err != nil {
		err = fmt.Errorf("runsc delete %s: %w", id, err)
	}
	return errors.Join(err, rt.RemoveBundle(id))
}

// RemoveBundle removes container id's bundle.
func (rt *Runtime) RemoveBundle(id string) error {
	return os.RemoveAll(filepath.Join(rt.dir, "bundles", id))
}

// Result is one raw run: its stdout and how long it took, from
// writing the bundle to the end of `runsc delete`.
type Result struct {
	Stdout string
	Total  time.Duration
	// Delete is the part of Total spent in `runsc delete`.
	Delete time.Duration
}

// Run does `runsc run` of argv (create, start, wait) and then `runsc
// delete`, both timed.
func (rt *Runtime) Run(ctx context.Context, argv []string) (Result, error) {
	var res Result
	id := NewID()
	begin := time.Now()
	bundle, err := rt.Bundle(id, argv)
	if err != nil {
		return res, err
	}
	out, runErr := Output(ctx, rt.Command(ctx, true, "run", "--bundle="+bundle, id))
	deleted := time.Now()
	delErr := rt.remove(id)
	res = Result{Stdout: out, Total: time.Since(begin), Delete: time.Since(deleted)}
	if runErr != nil {
		runErr = fmt.Errorf("runsc run %s: %w", id, runErr)
	}
	return res, errors.Join(runErr, delErr)
}

// NewID is a fresh container ID; fixed length, so that no ID is a prefix
// of another.
func NewID() string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return "raw-" + hex.EncodeToString(rnd[:])
}

// Close releases the network namespace runsc pins under its root and
// removes the bundles, images and state.
func (rt *Runtime) Close() {
	for range 64 {
		if syscall.Unmount(filepath.Join(rt.root, "null-netns"), syscall.MNT_DETACH) != nil {
			break
		}
	}
	_ = os.RemoveAll(rt.dir)
}

// rawRow times n raw `runsc run` + `runsc delete` of p.
func rawRow(ctx context.Context, rt *Runtime, l langs.Lang, p langs.Probe, n int) (stats.Row, error) {
	r := stats.Row{Lang: l.Name, Probe: p.Name, Mode: stats.ModeRaw}
	argv := l.Sandboxed(p.Code)
	for range n {
		res, err := rt.Run(ctx, argv)
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

// TemplateRootfs finds the built root filesystem of a template.
func TemplateRootfs(cache, name string) (string, error) {
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

// EmptyProgram is what an empty sandbox runs: nothing, and exits 0.
var EmptyProgram = []string{"/bin/true"}
