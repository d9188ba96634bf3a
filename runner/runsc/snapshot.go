package runsc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// snapshotFormat changes whenever the way images are taken changes, which
// invalidates every cached image.
const snapshotFormat = 1

// imageMarker is the file runsc writes first into an image directory; an
// image without it is gone.
const imageMarker = "checkpoint.img"

var _ runner.Snapshotter = (*Runtime)(nil)

// snapshotMeta is written next to an image: what it was built from.
type snapshotMeta struct {
	Key       string        `json:"key"`
	Template  string        `json:"template"`
	Inputs    snapshotInput `json:"inputs"`
	BuiltAt   time.Time     `json:"built_at"`
	BuildTime time.Duration `json:"build_ns"`
	Bytes     int64         `json:"bytes"`
}

// snapshotInput is everything an image depends on. Its digest is the key.
type snapshotInput struct {
	Format   int    `json:"format"`
	Spec     any    `json:"spec"` // the OCI spec with placeholders for per-sandbox values
	Global   string `json:"global"`
	Platform string `json:"platform"`
	RootfsID string `json:"rootfs_id"`
	Runsc    string `json:"runsc_sha256"`
	Agent    string `json:"agent_sha256"`
}

// Snapshot returns spec's image from the snapshot directory, building it
// when it is not there: a sandbox is started (its interpreter runs the
// warm-up code), checkpointed, and the image is tried once by restoring it
// before it is published. Builds of one key are serialised across
// processes with a file lock.
func (rt *Runtime) Snapshot(ctx context.Context, spec runner.Spec) (runner.Snapshot, error) {
	if rt.cfg.SnapshotDir == "" {
		return runner.Snapshot{}, fmt.Errorf("snapshots: %w (no snapshot directory configured)", runner.ErrNotSupported)
	}
	in, key, err := rt.snapshotKey(spec)
	if err != nil {
		return runner.Snapshot{}, err
	}
	name := spec.Template
	if name == "" {
		name = spec.Language
	}
	dir := filepath.Join(rt.cfg.SnapshotDir, name+"-"+key)
	img := runner.Snapshot{Key: key, Path: dir, Spec: spec}
	if err := os.MkdirAll(rt.cfg.SnapshotDir, 0o700); err != nil {
		return img, err
	}
	unlock, err := lockFile(ctx, dir+".lock")
	if err != nil {
		return img, err
	}
	defer unlock()

	if size, err := imageSize(dir); err == nil {
		img.Bytes = size
		return img, nil
	}
	// Builds of this key that died halfway (the lock is ours now).
	if stale, _ := filepath.Glob(filepath.Join(rt.cfg.SnapshotDir, ".build-"+filepath.Base(dir)+"-*")); len(stale) > 0 {
		for _, d := range stale {
			_ = os.RemoveAll(d)
		}
	}
	begin := time.Now()
	size, err := rt.buildSnapshot(ctx, spec, dir, snapshotMeta{Key: key, Template: name, Inputs: in})
	if err != nil {
		return img, fmt.Errorf("building snapshot of %s: %w", name, err)
	}
	img.Built, img.BuildTime, img.Bytes = true, time.Since(begin), size
	rt.log.Info("snapshot built", "template", name, "key", key, "took", img.BuildTime.Round(time.Millisecond), "bytes", size)
	rt.pruneSnapshots(name, dir)
	return img, nil
}

// pruneSnapshots removes the template's images of other keys, built from
// inputs that have since changed, so that upgrades do not pile images up.
// An image whose lock is held (being built) is left alone.
func (rt *Runtime) pruneSnapshots(name, keep string) {
	others, _ := filepath.Glob(filepath.Join(rt.cfg.SnapshotDir, name+"-*"))
	for _, d := range others {
		if d == keep || strings.HasSuffix(d, ".lock") || !isKeyDir(filepath.Base(d), name) {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // one try: never wait for another build
		unlock, err := lockFile(ctx, d+".lock")
		if err != nil {
			continue
		}
		if err := os.RemoveAll(d); err == nil {
			_ = os.Remove(d + ".lock")
			rt.log.Info("removed an outdated snapshot", "template", name, "path", d)
		}
		unlock()
	}
}

// isKeyDir reports whether base is name-<16 hex digits>, an image
// directory of template name (and not of a template whose name extends it).
func isKeyDir(base, name string) bool {
	key, ok := strings.CutPrefix(base, name+"-")
	if !ok || len(key) != 16 {
		return false
	}
	_, err := hex.DecodeString(key)
	return err == nil
}

// buildSnapshot takes the image into a temporary directory next to dir,
// tries it, and renames it into place.
func (rt *Runtime) buildSnapshot(ctx context.Context, spec runner.Spec, dir string, meta snapshotMeta) (int64, error) {
	begin := time.Now()
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-"+filepath.Base(dir)+"-")
	if err != nil {
		return 0, err
	}
	published := false
	defer func() {
		if !published {
			_ = os.RemoveAll(tmp)
		}
	}()
	sb, err := rt.Start(ctx, spec)
	if err != nil {
		return 0, fmt.Errorf("starting the sandbox to checkpoint: %w", err)
	}
	// Checkpointing stops the container; it is deleted either way.
	err = rt.runsc.Checkpoint(ctx, sb.ID(), tmp)
	err = errors.Join(err, sb.Destroy(ctx))
	if err != nil {
		return 0, err
	}
	trial, err := rt.Restore(ctx, runner.Snapshot{Key: meta.Key, Path: tmp, Spec: spec})
	if err != nil {
		return 0, fmt.Errorf("trying the new image: %w", err)
	}
	if err := trial.Destroy(ctx); err != nil {
		return 0, fmt.Errorf("trying the new image: %w", err)
	}
	size, err := imageSize(tmp)
	if err != nil {
		return 0, err
	}
	meta.BuiltAt, meta.BuildTime, meta.Bytes = time.Now().UTC(), time.Since(begin), size
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "meta.json"), b, 0o600); err != nil {
		return 0, err
	}
	// A corrupt image left at dir by an earlier failure is replaced.
	if err := os.RemoveAll(dir); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return 0, err
	}
	published = true
	return size, nil
}

// Drop removes img, under its build lock so that a build in progress is
// not cut short.
func (rt *Runtime) Drop(img runner.Snapshot) error {
	if rt.cfg.SnapshotDir == "" || filepath.Dir(img.Path) != filepath.Clean(rt.cfg.SnapshotDir) {
		return fmt.Errorf("dropping %s: not an image of this runtime", img.Path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rt.cfg.StartTimeout)
	defer cancel()
	unlock, err := lockFile(ctx, img.Path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	return os.RemoveAll(img.Path)
}

// Restore starts a sandbox from img with fresh stdio pipes for its agent
// and waits until the agent answers a ping.
func (rt *Runtime) Restore(ctx context.Context, img runner.Snapshot) (_ runner.Sandbox, err error) {
	if _, err := os.Stat(filepath.Join(img.Path, imageMarker)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("restoring %s: %w", img.Path, runner.ErrSnapshotMissing)
	}
	ctx, cancel := context.WithTimeout(ctx, rt.cfg.StartTimeout)
	defer cancel()
	id, err := ocispec.NewID()
	if err != nil {
		return nil, err
	}
	bundle := filepath.Join(rt.bundles, id)
	if err := writeBundle(bundle, ocispec.Render(id, img.Spec, rt.agentDir)); err != nil {
		return nil, fmt.Errorf("writing bundle for %s: %w", id, err)
	}
	sb, err := rt.launch(ctx, id, bundle, img.Spec, func(ctx context.Context, opts CreateOpts, io stdio) error {
		return rt.runsc.Restore(ctx, id, opts, img.Path, io)
	})
	if err != nil {
		_ = os.RemoveAll(bundle)
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = sb.Destroy(context.WithoutCancel(ctx))
		}
	}()
	if err := sb.Ping(ctx); err != nil {
		return nil, fmt.Errorf("waiting for restored agent in %s: %w", id, err)
	}
	return sb, nil
}

// SnapshotKey is the key Snapshot files spec's image under.
func (rt *Runtime) SnapshotKey(spec runner.Spec) (string, error) {
	_, key, err := rt.snapshotKey(spec)
	return key, err
}

func (rt *Runtime) snapshotKey(spec runner.Spec) (snapshotInput, string, error) {
	in, err := rt.snapshotInput(spec)
	if err != nil {
		return in, "", err
	}
	key, err := digestJSON(in)
	if err != nil {
		return in, "", err
	}
	return in, key[:16], nil
}

// snapshotInput renders what spec's image depends on. Per-sandbox values
// (the ID, the state directory, labels) are replaced by placeholders:
// clones differ in them, and restore accepts that.
func (rt *Runtime) snapshotInput(spec runner.Spec) (snapshotInput, error) {
	runscSum, agentSum, err := rt.binaryDigests()
	if err != nil {
		return snapshotInput{}, err
	}
	spec.Labels = nil
	opts := CreateOpts{OverlaySize: ocispec.WithDefaults(spec.Limits).DiskBytes}
	return snapshotInput{
		Format:   snapshotFormat,
		Spec:     ocispec.Render("pd-0000000000000000", spec, "/agent"),
		Global:   strings.Join(opts.global(), " "),
		Platform: rt.cfg.Platform,
		RootfsID: spec.RootfsID,
		Runsc:    runscSum,
		Agent:    agentSum,
	}, nil
}

// binaryDigests hashes runsc and the agent once per runtime.
func (rt *Runtime) binaryDigests() (runscSum, agentSum string, err error) {
	rt.digestOnce.Do(func() {
		rt.runscSum, rt.digestErr = fileDigest(rt.cfg.Runsc)
		if rt.digestErr == nil {
			rt.agentSum, rt.digestErr = fileDigest(rt.cfg.Agent)
		}
	})
	return rt.runscSum, rt.agentSum, rt.digestErr
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func digestJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// imageSize is the total size of the files in an image directory, or an
// error when the directory holds no image.
func imageSize(dir string) (int64, error) {
	if _, err := os.Stat(filepath.Join(dir, imageMarker)); err != nil {
		return 0, err
	}
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		total += fi.Size()
		return nil
	})
	return total, err
}

// lockFile takes an exclusive flock on path, polling so that ctx can end
// the wait.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// digests of the runtime's binaries, computed once.
type digests struct {
	digestOnce         sync.Once
	runscSum, agentSum string
	digestErr          error
}
