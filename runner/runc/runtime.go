package runc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/agentconn"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// cgroupParent groups every runc sandbox under one host cgroup, apart from
// the gVisor runtime's.
const cgroupParent = "/paddock-runc"

// ErrNoBootstrap means the binary was built without cgo, so it cannot
// start a container (see Init).
var ErrNoBootstrap = errors.New("built without cgo: the runc runtime needs CGO_ENABLED=1 and a C compiler at build time")

// Config configures the runc runtime.
type Config struct {
	// StateDir holds libcontainer's state, the bundles (the mounts of each
	// sandbox's root) and the agent copy. Paddock owns it: anything found
	// under it at start is an orphan.
	StateDir string
	// Agent is the host path of the static paddock-agent binary.
	Agent string
	// StartTimeout bounds one sandbox start, including the agent's first
	// answer.
	StartTimeout time.Duration
	Logger       *slog.Logger
}

// Runtime starts runc containers in-process.
type Runtime struct {
	cfg      Config
	root     string // libcontainer's state root
	bundles  string
	agentDir string
	log      *slog.Logger
}

var (
	_ runner.Runtime = (*Runtime)(nil)
	_ runner.Reaper  = (*Runtime)(nil)
	_ io.Closer      = (*Runtime)(nil)
)

// New prepares the state directory and a private read-only copy of the
// agent, which every sandbox mounts.
func New(cfg Config) (*Runtime, error) {
	if !haveBootstrap {
		return nil, ErrNoBootstrap
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	rt := &Runtime{
		cfg:      cfg,
		root:     filepath.Join(cfg.StateDir, "containers"),
		bundles:  filepath.Join(cfg.StateDir, "bundles"),
		agentDir: filepath.Join(cfg.StateDir, "agent"),
		log:      cfg.Logger,
	}
	for _, d := range []string{rt.root, rt.bundles, rt.agentDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := ocispec.InstallAgent(cfg.Agent, rt.agentDir); err != nil {
		return nil, fmt.Errorf("installing agent: %w", err)
	}
	return rt, nil
}

// Start makes a container for spec and waits for its agent's hello.
func (rt *Runtime) Start(ctx context.Context, spec runner.Spec) (_ runner.Sandbox, err error) {
	ctx, cancel := context.WithTimeout(ctx, rt.cfg.StartTimeout)
	defer cancel()
	id, err := ocispec.NewID()
	if err != nil {
		return nil, err
	}
	c, err := rt.launch(id, spec)
	if err != nil {
		return nil, err
	}
	conn := agentconn.New(id, c.toAgent, c.fromAgent, c.agentLog, agentconn.Hooks{
		Destroy:  c.destroy,
		OOMKills: func() int { return agentconn.CgroupOOMKills(cgroupParent + "/" + id) },
		Interactive: func() error {
			return ocispec.Interactive(ocispec.CgroupRoot, cgroupParent+"/"+id, spec.Limits)
		},
		Logger: rt.log,
	})
	if err := conn.Handshake(ctx, spec.Language); err != nil {
		return nil, errors.Join(err, conn.Destroy(context.WithoutCancel(ctx)))
	}
	return conn, nil
}
