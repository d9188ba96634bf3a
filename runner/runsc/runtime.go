package runsc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/agentconn"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// Config configures the gVisor runtime.
type Config struct {
	// Runsc is the runsc binary (static build).
	Runsc string
	// StateDir holds runsc's --root, the bundles and the agent copy. Paddock
	// owns it: anything found under it at start is an orphan.
	StateDir string
	// Agent is the host path of the static paddock-agent binary.
	Agent string
	// Platform is the gVisor platform; "systrap" when empty.
	Platform string
	// StartTimeout bounds one sandbox start or restore, including the
	// agent's first answer.
	StartTimeout time.Duration
	// SnapshotDir caches snapshot images across restarts. Empty disables
	// snapshots.
	SnapshotDir string
	// Gofer serves every sandbox's root filesystem directory through a
	// gofer process. When false (the default) sandboxes run on EROFS
	// images of the root filesystem and the agent and need no gofer (see
	// erofs.go); without mkfs.erofs the runtime says why and uses a gofer.
	Gofer bool
	// DebugLog, when set, is a directory runsc writes its debug logs to
	// (see Runsc.DebugLog). They grow with every sandbox; for diagnosis.
	DebugLog string
	Logger   *slog.Logger
}

// Runtime starts gVisor sandboxes.
type Runtime struct {
	cfg      Config
	runsc    *Runsc
	agentDir string
	bundles  string
	log      *slog.Logger
	digests
	inUse imageLocks
	// images is nil when sandboxes use a gofer.
	images *images
	// nets are the networked sandboxes' networks (sandboxnet_linux.go).
	nets nets
}

var (
	_ runner.Runtime = (*Runtime)(nil)
	_ runner.Reaper  = (*Runtime)(nil)
	_ io.Closer      = (*Runtime)(nil)
)

// New prepares the state directory and a private read-only copy of the
// agent, which every sandbox mounts.
func New(cfg Config) (*Runtime, error) {
	if cfg.Platform == "" {
		cfg.Platform = "systrap"
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	rt := &Runtime{
		cfg:      cfg,
		agentDir: filepath.Join(cfg.StateDir, "agent"),
		bundles:  filepath.Join(cfg.StateDir, "bundles"),
		log:      cfg.Logger,
		runsc: &Runsc{
			Path:     cfg.Runsc,
			Root:     filepath.Join(cfg.StateDir, "runsc"),
			Platform: cfg.Platform,
			DebugLog: cfg.DebugLog,
			Logger:   cfg.Logger,
		},
	}
	dirs := []string{rt.runsc.Root, rt.bundles, rt.agentDir}
	if cfg.DebugLog != "" {
		dirs = append(dirs, cfg.DebugLog)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := ocispec.InstallAgent(cfg.Agent, rt.agentDir); err != nil {
		return nil, fmt.Errorf("installing agent: %w", err)
	}
	if !cfg.Gofer {
		im, err := newImages(rt.agentDir, cfg.StateDir)
		if err != nil {
			cfg.Logger.Warn("sandboxes will use a gofer process for their files: no EROFS images", "err", err)
		}
		rt.images = im
	}
	return rt, nil
}

// Close releases what the runtime holds beyond its sandboxes: its use
// locks on snapshot images and runsc's null network namespace. Call it
// once every sandbox is destroyed.
func (rt *Runtime) Close() error {
	rt.releaseImages()
	return errors.Join(rt.closeNetNS(), rt.closeNets())
}

// Runsc exposes the wrapper, for doctor checks and orphan cleanup.
func (rt *Runtime) Runsc() *Runsc { return rt.runsc }

// Start runs a sandbox and waits for its agent's hello.
func (rt *Runtime) Start(ctx context.Context, spec runner.Spec) (_ runner.Sandbox, err error) {
	ctx, cancel := context.WithTimeout(ctx, rt.cfg.StartTimeout)
	defer cancel()
	id, err := ocispec.NewID()
	if err != nil {
		return nil, err
	}
	bundle := filepath.Join(rt.bundles, id)
	if err := rt.writeBundle(ctx, bundle, id, spec); err != nil {
		return nil, fmt.Errorf("writing bundle for %s: %w", id, err)
	}
	sb, err := rt.create(ctx, id, bundle, spec)
	if err != nil {
		_ = os.RemoveAll(bundle)
		_ = rt.dropNet(id)
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = sb.Destroy(context.WithoutCancel(ctx))
		}
	}()
	if err := sb.Handshake(ctx, spec.Language); err != nil {
		return nil, err
	}
	if err := toBatch(id, spec); err != nil {
		return nil, err
	}
	return sb, nil
}

// create runs `runsc run --detach` with fresh pipes as the container's
// stdio and keeps the host ends.
func (rt *Runtime) create(ctx context.Context, id, bundle string, spec runner.Spec) (*agentconn.Conn, error) {
	return rt.launch(ctx, id, bundle, spec, func(ctx context.Context, opts CreateOpts, io stdio) error {
		if err := rt.runsc.Run(ctx, id, opts, io); err != nil {
			return fmt.Errorf("running sandbox %s: %w", id, err)
		}
		return nil
	})
}

// launch runs a runsc command that brings container id up (create or
// restore) with fresh pipes as the container's stdio, and keeps the host
// ends.
func (rt *Runtime) launch(ctx context.Context, id, bundle string, spec runner.Spec, up func(context.Context, CreateOpts, stdio) error) (*agentconn.Conn, error) {
	// The container reads stdinR and writes stdoutW/stderrW; the host keeps
	// the other ends.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, errors.Join(err, closeAll(stdinR, stdinW))
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return nil, errors.Join(err, closeAll(stdinR, stdinW, stdoutR, stdoutW))
	}
	opts := CreateOpts{Bundle: bundle, OverlaySize: ocispec.WithDefaults(spec.Limits).DiskBytes, Network: networkMode(spec)}
	// runsc run (and restore) is never interrupted: killed halfway it
	// leaves the sandbox's host cgroups, and at times its sandbox and gofer
	// processes, behind with no state that `runsc list` or `delete` could
	// find them by. It runs to its end, bounded by StartTimeout; a caller
	// that gave up meanwhile fails at the next step and destroys it.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rt.cfg.StartTimeout)
	defer cancel()
	err = up(cctx, opts, stdio{in: stdinR, out: stdoutW, err: stderrW})
	// The sandbox holds its own copies now; ours would keep the pipes open
	// after it dies.
	closeErr := closeAll(stdinR, stdoutW, stderrW)
	if err != nil {
		// A failed restore can leave a half-made container behind.
		_ = rt.runsc.Delete(context.WithoutCancel(ctx), id, DeleteOpts{Force: true})
		return nil, errors.Join(err, closeAll(stdinW, stdoutR, stderrR), closeErr)
	}
	return agentconn.New(id, stdinW, stdoutR, stderrR, agentconn.Hooks{
		Destroy:  func(ctx context.Context) error { return rt.destroyContainer(ctx, id) },
		OOMKills: func() int { return agentconn.CgroupOOMKills(ocispec.CgroupsPath(id)) },
		Interactive: func() error {
			return ocispec.Interactive(ocispec.CgroupRoot, ocispec.CgroupsPath(id), spec.Limits)
		},
		Logger: rt.log,
		Egress: rt.egressOf(id),
	}), nil
}

// Cleanup destroys every container under the runtime's root: orphans of
// a previous process that died without cleaning up, the ones runsc lists
// and the ones whose start it was killed in the middle of (see
// reapStrays). It also removes the empty cgroups, older than
// deadCgroupAge, that dead sandboxes of any server on the host left (see
// removeDeadCgroups). It returns how many containers it destroyed.
func (rt *Runtime) Cleanup(ctx context.Context) (int, error) {
	cs, err := rt.runsc.List(ctx)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, c := range cs {
		errs = append(errs, rt.destroyContainer(ctx, c.ID))
	}
	strays, err := rt.reapStrays(ctx)
	errs = append(errs, err)
	if nets, err := rt.reapNets(); nets > 0 || err != nil {
		rt.log.Warn("removed the network namespaces of sandboxes that died without them being removed", "count", nets, "error", err)
	}
	dead, err := removeDeadCgroups(ocispec.CgroupRoot, ocispec.CgroupParent, deadCgroupAge, time.Now())
	errs = append(errs, err)
	if dead > 0 {
		rt.log.Warn("removed the empty cgroups of sandboxes that died without them being removed", "sandboxes", dead)
	}
	n := len(cs)
	for id := range strays {
		if !slices.ContainsFunc(cs, func(c Container) bool { return c.ID == id }) {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// ReapOthers destroys every container runsc lists under the runtime's root
// whose label is not value: orphans of an earlier server whose start
// finished only after Cleanup ran at this server's start. It returns how
// many it destroyed.
func (rt *Runtime) ReapOthers(ctx context.Context, label, value string) (int, error) {
	cs, err := rt.runsc.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, c := range cs {
		if c.Annotations[ocispec.LabelPrefix+label] == value {
			continue
		}
		n++
		errs = append(errs, rt.destroyContainer(ctx, c.ID))
	}
	return n, errors.Join(errs...)
}

// destroyContainer force-deletes container id and removes its bundle.
func (rt *Runtime) destroyContainer(ctx context.Context, id string) error {
	err := rt.runsc.Delete(ctx, id, DeleteOpts{Force: true})
	return errors.Join(err, os.RemoveAll(filepath.Join(rt.bundles, id)), rt.dropNet(id))
}

// GoferFree says whether sandboxes run on EROFS images, without a gofer.
func (rt *Runtime) GoferFree() bool { return rt.images != nil }

// writeBundle writes the OCI bundle of sandbox id into dir: spec as
// ocispec.Render makes it, on the EROFS images when the runtime has them.
func (rt *Runtime) writeBundle(ctx context.Context, dir, id string, spec runner.Spec) error {
	s := ocispec.Render(id, spec, rt.agentDir)
	if spec.Network {
		n, err := rt.newNet(id)
		if err != nil {
			return err
		}
		for i, ns := range s.Linux.Namespaces {
			if ns.Type == specs.NetworkNamespace {
				s.Linux.Namespaces[i].Path = n.path()
			}
		}
		resolv, err := resolvConfPath(rt.cfg.StateDir)
		if err != nil {
			return fmt.Errorf("writing the sandboxes' resolv.conf: %w", err)
		}
		withResolvConf(s, resolv)
	}
	if rt.images != nil {
		root, err := rt.images.root(ctx, spec.Rootfs)
		if err != nil {
			return err
		}
		empty := filepath.Join(dir, "root")
		if err := os.MkdirAll(empty, 0o700); err != nil {
			return err
		}
		onImages(s, root, rt.images.agent, empty, ocispec.WithDefaults(spec.Limits).DiskBytes)
	}
	return writeBundle(dir, s)
}

func writeBundle(dir string, spec any) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600)
}

func closeAll(fs ...io.Closer) error {
	var errs []error
	for _, f := range fs {
		if err := f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
