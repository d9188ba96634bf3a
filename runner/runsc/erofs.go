package runsc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/internal/filelock"
	"github.com/paddock-dev/paddock/runner/ocispec"
)

// Sandboxes run without a gofer process when their root filesystem and
// the agent's directory are EROFS images: runsc then hands the Sentry the
// image files themselves, and nothing else needs a gofer (runsc's
// "goferless" mode). That saves the gofer's start and its memory in every
// sandbox, and the image's pages are the host's page cache, shared by
// every sandbox of a template. The writable layer over the image lives in
// the sandbox's memory, capped at its disk limit (runsc keeps the
// disk-backed "self" layer for gofer mounts only).
//
// gVisor maps file data straight out of the image, so images are made
// without inline (tail-packed) data (-E noinline_data), and with every
// file's own mtime, which Python's bytecode cache checks.

// erofsAnnotation is the prefix of runsc's root filesystem hints.
const erofsAnnotation = "dev.gvisor.spec.rootfs."

// filestorePattern names the files runsc's disk-backed overlay leaves in a
// root filesystem directory it served (one per sandbox that died without
// cleaning up); they are not part of the template.
const filestorePattern = `^\.gvisor\.filestore\.`

// agentUUID and agentTime make the agent's image the same bytes for the
// same agent: a snapshot restores only onto an image whose superblock is
// the one it was taken on, and servers sharing snapshots each make their
// own agent image.
const (
	agentUUID = "70616464-6f63-6b00-0000-000000000001"
	agentTime = "0"
)

// images makes and remembers the EROFS images of one runtime.
type images struct {
	mkfs  string // mkfs.erofs
	agent image

	mu    sync.Mutex
	roots map[string]*rootImage // by root filesystem directory
}

// rootImage is the image of one root filesystem directory, made once. Its
// own lock keeps the makers of one image waiting for each other, and
// leaves other templates' starts free while it is made.
type rootImage struct {
	mu  sync.Mutex
	img image // zero until made
}

// image is one EROFS image file and the digest of its superblock, which
// snapshot keys carry.
type image struct {
	Path       string
	Superblock string
}

// newImages finds mkfs.erofs and makes the agent's image from agentDir
// into stateDir. It returns nil and why when sandboxes cannot run
// without a gofer here.
func newImages(agentDir, stateDir string) (*images, error) {
	mkfs, err := exec.LookPath("mkfs.erofs")
	if err != nil {
		return nil, errors.New("mkfs.erofs not found (Debian: apt-get install erofs-utils)")
	}
	im := &images{mkfs: mkfs, roots: map[string]*rootImage{}}
	path := filepath.Join(stateDir, "agent.erofs")
	if err := im.make(path, agentDir, "-T"+agentTime, "-U"+agentUUID); err != nil {
		return nil, err
	}
	if im.agent, err = readImage(path); err != nil {
		return nil, err
	}
	return im, nil
}

// root returns the image of the root filesystem in dir, made next to it
// (dir + ".erofs") the first time any process on the host asks; makers
// of one image wait for each other, in this process on its rootImage and
// across processes on a lock file. Images of other directories are made
// and found meanwhile.
func (im *images) root(ctx context.Context, dir string) (image, error) {
	im.mu.Lock()
	r := im.roots[dir]
	if r == nil {
		r = &rootImage{}
		im.roots[dir] = r
	}
	im.mu.Unlock()

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.img.Path == "" {
		img, err := im.makeRoot(ctx, dir)
		if err != nil {
			return image{}, err
		}
		r.img = img
	}
	return r.img, nil
}

// makeRoot makes the image of dir unless another process has, under the
// host-wide lock file, and reads its superblock.
func (im *images) makeRoot(ctx context.Context, dir string) (image, error) {
	path := dir + ".erofs"
	lock, err := filelock.Acquire(ctx, path+".lock", filelock.Exclusive, nil)
	if err != nil {
		return image{}, err
	}
	defer lock.Release()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// A maker killed halfway left its temporary image; no one else
		// makes one while this lock is held.
		stale, _ := filepath.Glob(path + ".tmp-*")
		for _, f := range stale {
			_ = os.Remove(f)
		}
		if err := im.make(path, dir, "--preserve-mtime", "--exclude-regex="+filestorePattern); err != nil {
			return image{}, err
		}
	} else if err != nil {
		return image{}, err
	}
	return readImage(path)
}

// make writes the image of dir to path, through a temporary file so that
// no one finds half an image.
func (im *images) make(path, dir string, flags ...string) error {
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	args := append([]string{"--quiet", "-E", "noinline_data"}, flags...)
	args = append(args, tmp, dir)
	if out, err := exec.Command(im.mkfs, args...).CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("making the EROFS image of %s: %v: %s", dir, err, out)
	}
	return os.Rename(tmp, path)
}

// readImage digests path's superblock (1 KiB from offset 1024): its UUID
// and build time tell one build of an image from another.
func readImage(path string) (image, error) {
	f, err := os.Open(path)
	if err != nil {
		return image{}, err
	}
	defer f.Close()
	sb := make([]byte, 1024)
	if _, err := f.ReadAt(sb, 1024); err != nil && !errors.Is(err, io.EOF) {
		return image{}, fmt.Errorf("reading the superblock of %s: %w", path, err)
	}
	sum := sha256.Sum256(sb)
	return image{Path: path, Superblock: hex.EncodeToString(sum[:8])}, nil
}

// onImages turns s, as ocispec.Render made it, into a sandbox on root's
// and agent's images: root filesystem hints in place of the directory,
// whose path becomes emptyRoot (runsc needs one to exist), and the agent's
// directory as an EROFS mount. diskBytes caps the writable layer.
func onImages(s *specs.Spec, root, agent image, emptyRoot string, diskBytes int64) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[erofsAnnotation+"source"] = root.Path
	s.Annotations[erofsAnnotation+"type"] = "erofs"
	s.Annotations[erofsAnnotation+"overlay"] = "memory"
	s.Annotations[erofsAnnotation+"options"] = "size=" + strconv.FormatInt(diskBytes, 10)
	s.Root = &specs.Root{Path: emptyRoot}
	for i, m := range s.Mounts {
		if m.Destination == ocispec.AgentDir {
			s.Mounts[i] = specs.Mount{Destination: m.Destination, Type: "erofs", Source: agent.Path, Options: []string{"ro"}}
		}
	}
}
