package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

// check is one doctor finding; fix says what to do when it failed.
type check struct {
	name string
	err  error
	fix  string
}

func doctor(ctx context.Context, args []string) error {
	cfg, _, err := parse("doctor", args)
	if err != nil {
		return err
	}
	checks := []check{
		{name: "running as root", err: isRoot(), fix: "run paddock as root (runsc needs it to create sandboxes)"},
		{name: "runsc " + cfg.Runsc, err: staticBinary(cfg.Runsc), fix: "run `make runsc` and pass --runsc (a cgo build fails at every sandbox start)"},
		{name: "agent " + cfg.Agent, err: staticBinary(cfg.Agent), fix: "run `make build`; the agent must be built with CGO_ENABLED=0"},
		{name: "memory cgroup", err: memoryCgroup(), fix: "mount the cgroup memory controller (v1) or enable it in cgroup v2"},
		{name: "mkfs.erofs (sandboxes without a gofer)", err: mkfsErofs(cfg), fix: "apt-get install erofs-utils (`make deps` does), or pass --gofer"},
	}
	builder := cfg.builder(nil, nil)
	var img rootfs.Image
	var tmpl templates.Template
	for _, name := range cfg.Templates {
		t, err := cfg.template(name)
		if err == nil {
			var i rootfs.Image
			if i, err = builder.Lookup(t); err == nil && img.Path == "" {
				img, tmpl = i, t
			}
		}
		checks = append(checks, check{name: "rootfs " + name, err: err, fix: "run `make rootfs` (or `paddock rootfs " + name + "`)"})
		if errors.Is(err, rootfs.ErrNotBuilt) {
			_, why, err := builder.Sources(t.Suite)
			if why != "" {
				why = " (" + why + ")"
			}
			checks = append(checks, check{name: "apt sources to build " + name + " from" + why, err: err, fix: rootfs.MirrorHint})
		}
	}
	failed := 0
	report := func(c check) {
		if c.err == nil {
			fmt.Printf("ok    %s\n", c.name)
			return
		}
		failed++
		fmt.Printf("FAIL  %s: %v\n      fix: %s\n", c.name, c.err, c.fix)
	}
	for _, c := range checks {
		report(c)
	}
	if failed == 0 {
		report(check{
			name: fmt.Sprintf("sandbox starts and runs code (%s, platform %s)", tmpl.Name, cfg.Platform),
			err:  trySandbox(ctx, cfg, tmpl, img),
			fix:  "try --platform=ptrace; run with --log-level=debug to see runsc's errors",
		})
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	fmt.Println("all checks passed")
	return nil
}

func isRoot() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("euid is %d", os.Geteuid())
	}
	return nil
}

// staticBinary fails for a missing file or one that needs a dynamic loader.
func staticBinary(path string) error {
	if path == "" {
		return errors.New("not set")
	}
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked")
		}
	}
	return nil
}

func memoryCgroup() error {
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil {
		return nil
	}
	b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	if err == nil && strings.Contains(string(b), "memory") {
		return nil
	}
	return errors.New("no memory controller found under /sys/fs/cgroup")
}

// mkfsErofs checks for what runs sandboxes on EROFS images; with --gofer
// nothing is needed.
func mkfsErofs(cfg *config) error {
	if cfg.Gofer || cfg.Runtime != "runsc" {
		return nil
	}
	_, err := exec.LookPath("mkfs.erofs")
	return err
}

// trySandbox starts one real sandbox in a scratch state directory and runs
// a one-line program in it.
func trySandbox(ctx context.Context, cfg *config, t templates.Template, img rootfs.Image) error {
	state, err := os.MkdirTemp("", "paddock-doctor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	rt, err := runsc.New(runsc.Config{Runsc: cfg.Runsc, StateDir: state, Agent: cfg.Agent, Platform: cfg.Platform, Gofer: cfg.Gofer})
	if err != nil {
		return err
	}
	// Runs after the sandbox's Destroy below: unpins runsc's network
	// namespace so that the scratch directory can be removed.
	defer rt.Close()
	sb, err := rt.Start(ctx, runner.Spec{Template: t.Name, Language: t.Language, Rootfs: img.Path, Limits: limitsOf(t)})
	if err != nil {
		return err
	}
	defer sb.Destroy(context.WithoutCancel(ctx))
	code := map[string]string{"python": "print(6*7)", "node": "console.log(6*7)"}[t.Language]
	res, err := sb.Run(ctx, runner.RunRequest{Code: code, Timeout: 10 * time.Second, MaxStdout: 1 << 10, MaxStderr: 1 << 10}, nil)
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "42" || res.Reason != runner.ReasonOK {
		return fmt.Errorf("got %q (%s), want 42 (ok); stderr: %s", got, res.Reason, res.Stderr)
	}
	return nil
}
