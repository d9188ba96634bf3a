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
	"time"

	"github.com/paddock-dev/paddock/internal/filelock"
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
	// Images are the superblock digests of the root filesystem's and the
	// agent's EROFS images; none when sandboxes use a gofer.
	Images []string `json:"erofs_images,omitempty"`
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
	in, key, err := rt.snapshotKey(ctx, spec)
	if err != nil {
		return runner.Snapshot{}, err
	}
	name := imageName(spec)
	dir := filepath.Join(rt.cfg.SnapshotDir, name+"-"+key)
	img := runner.Snapshot{Key: key, Path: dir, Spec: spec}
	if err := os.MkdirAll(rt.cfg.SnapshotDir, 0o700); err != nil {
		return img, err
	}
	lock, err := filelock.Acquire(ctx, dir+".lock", filelock.Exclusive, nil)
	if err != nil {
		return img, err
	}
	defer lock.Release()

	if size, err := imageSize(dir); err == nil {
		img.Bytes = size
		return img, rt.holdImage(dir)
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
	if err := rt.holdImage(dir); err != nil {
		return img, err
	}
	rt.pruneSnapshots(name, dir)
	return img, nil
}

// pruneSnapshots removes the template's images of other keys, built from
// inputs that have since changed, so that upgrades do not pile images up.
// An image being built (its lock is held) or restored from by any server
// sharing the directory (its use lock is held) is left alone: an older
// version of Paddock may still be serving from it.
func (rt *Runtime) pruneSnapshots(name, keep string) {
	others, _ := filepath.Glob(filepath.Join(rt.cfg.SnapshotDir, name+"-*"))
	for _, d := range others {
		if d == keep || !isKeyDir(filepath.Base(d), name) {
			continue
		}
		rt.releaseImage(d) // this runtime has moved on from it too
		gone, err := removeUnused(d)
		switch {
		case err != nil:
			rt.log.Warn("removing an outdated snapshot failed", "template", name, "path", d, "error", err)
		case gone:
			rt.log.Info("removed an outdated snapshot", "template", name, "path", d)
		}
	}
}

// removeUnused removes the image at dir if nobody builds or uses it now,
// without waiting for anyone.
func removeUnused(dir string) (removed bool, err error) {
	build, ok, err := filelock.TryAcquire(dir+".lock", filelock.Exclusive)
	if err != nil || !ok {
		return false, err
	}
	defer build.Release()
	use, ok, err := filelock.TryAcquire(dir+".use", filelock.Exclusive)
	if err != nil || !ok {
		return false, err
	}
	defer use.Release()
	return true, os.RemoveAll(dir)
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

// Drop gives up this runtime's use of img and removes it, under its build
// lock so that a build in progress is not cut short. An image that
// another server sharing the directory still uses is left in place, and
// Drop says so with runner.ErrSnapshotInUse.
func (rt *Runtime) Drop(img runner.Snapshot) error {
	if rt.cfg.SnapshotDir == "" || filepath.Dir(img.Path) != filepath.Clean(rt.cfg.SnapshotDir) {
		return fmt.Errorf("dropping %s: not an image of this runtime", img.Path)
	}
	rt.releaseImage(img.Path)
	ctx, cancel := context.WithTimeout(context.Background(), rt.cfg.StartTimeout)
	defer cancel()
	build, err := filelock.Acquire(ctx, img.Path+".lock", filelock.Exclusive, nil)
	if err != nil {
		return err
	}
	defer build.Release()
	use, ok, err := filelock.TryAcquire(img.Path+".use", filelock.Exclusive)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("dropping %s: %w", img.Path, runner.ErrSnapshotInUse)
	}
	defer use.Release()
	return os.RemoveAll(img.Path)
}

// holdImage takes a shared use lock on the image at dir for as long as
// this runtime may restore from it (until Drop or Close), so that no
// server sharing the directory prunes or drops it meanwhile. The caller
// holds the image's build lock, which every remover takes first.
func (rt *Runtime) holdImage(dir string) error {
	rt.inUse.mu.Lock()
	defer rt.inUse.mu.Unlock()
	if rt.inUse.locks[dir] != nil {
		return nil
	}
	l, ok, err := filelock.TryAcquire(dir+".use", filelock.Shared)
	if err != nil {
		return err
	}
	if !ok { // only a remover holding the build lock takes it exclusively
		return fmt.Errorf("holding %s: its use lock is taken exclusively", dir)
	}
	if rt.inUse.locks == nil {
		rt.inUse.locks = map[string]*filelock.Lock{}
	}
	rt.inUse.locks[dir] = l
	return nil
}

// releaseImage gives up the use lock on dir, if held.
func (rt *Runtime) releaseImage(dir string) {
	rt.inUse.mu.Lock()
	defer rt.inUse.mu.Unlock()
	rt.inUse.locks[dir].Release()
	delete(rt.inUse.locks, dir)
}

// releaseImages gives up every use lock, when the runtime closes.
func (rt *Runtime) releaseImages() {
	rt.inUse.mu.Lock()
	defer rt.inUse.mu.Unlock()
	for dir, l := range rt.inUse.locks {
		l.Release()
		delete(rt.inUse.locks, dir)
	}
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
	if err := rt.writeBundle(ctx, bundle, id, img.Spec); err != nil {
		return nil, fmt.Errorf("writing bundle for %s: %w", id, err)
	}
	sb, err := rt.launch(ctx, id, bundle, img.Spec, func(ctx context.Context, opts CreateOpts, io stdio) error {
		return rt.runsc.Restore(ctx, id, opts, img.Path, io)
	})
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
	if err := sb.Ping(ctx); err != nil {
		return nil, fmt.Errorf("waiting for restored agent in %s: %w", id, err)
	}
	if err := toBatch(id, img.Spec); err != nil {
		return nil, err
	}
	return sb, nil
}

// SnapshotKey is the key Snapshot files spec's image under.
func (rt *Runtime) SnapshotKey(spec runner.Spec) (string, error) {
	_, key, err := rt.snapshotKey(context.Background(), spec)
	return key, err
}

func (rt *Runtime) snapshotKey(ctx context.Context, spec runner.Spec) (snapshotInput, string, error) {
	in, err := rt.snapshotInput(ctx, spec)
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
// clones differ in them, and restore accepts that. Whether a start is a
// background one (its CPU weight while it comes up) is left out.
func (rt *Runtime) snapshotInput(ctx context.Context, spec runner.Spec) (snapshotInput, error) {
	runscSum, agentSum, err := rt.binaryDigests()
	if err != nil {
		return snapshotInput{}, err
	}
	// A restore needs the very images its checkpoint ran on (runsc compares
	// their superblocks), so their builds are part of the key.
	var imgs []string
	if rt.images != nil {
		root, err := rt.images.root(ctx, spec.Rootfs)
		if err != nil {
			return snapshotInput{}, err
		}
		imgs = []string{root.Superblock, rt.images.agent.Superblock}
	}
	spec.Labels, spec.Background = nil, false
	opts := CreateOpts{OverlaySize: ocispec.WithDefaults(spec.Limits).DiskBytes, Network: networkMode(spec)}
	rendered := ocispec.Render("pd-0000000000000000", spec, "/agent")
	if spec.Network {
		withResolvConf(rendered, "/resolv.conf") // as writeBundle mounts it
	}
	return snapshotInput{
		Format:   snapshotFormat,
		Spec:     rendered,
		Global:   strings.Join(opts.global(), " "),
		Platform: rt.cfg.Platform,
		RootfsID: spec.RootfsID,
		Runsc:    runscSum,
		Agent:    agentSum,
		Images:   imgs,
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

// digests of the runtime's binaries, computed once.
type digests struct {
	digestOnce         sync.Once
	runscSum, agentSum string
	digestErr          error
}

// imageLocks are the use locks a runtime holds, by image directory.
type imageLocks struct {
	mu    sync.Mutex
	locks map[string]*filelock.Lock
}
