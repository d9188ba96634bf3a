package baseline

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/paddock-dev/paddock/runner/ocispec"
)

// The native baseline runs a template's own interpreter and libraries
// from its built root filesystem, without gVisor: chrooted into it, as
// the sandbox user. The root filesystem is the shared cache's, so it is
// seen through a read-only bind mount made in a private mount namespace:
// nothing the interpreter does can write to it, and the mounts vanish
// with the namespace.

// rootfsEnv is the environment of a program run in a root filesystem:
// the sandbox's PATH and locale, nothing of the host's.
var rootfsEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "HOME=" + ocispec.WorkDir}

// InReadOnlyRoot calls f on a goroutine locked to an OS thread that has a
// mount namespace of its own, in which rootfs is bind-mounted read-only
// (with a fresh /proc) at the path f is given. Processes f starts with
// RootfsCommand see that view. The thread is never unlocked, so Go ends
// it with the goroutine and its namespace and mounts go with it.
func InReadOnlyRoot(rootfs string, f func(root string) error) error {
	mnt, err := os.MkdirTemp("", "paddock-bench-native-")
	if err != nil {
		return err
	}
	// The directory is an empty mount point in the host's namespace.
	defer os.Remove(mnt)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := privateReadOnlyBind(rootfs, mnt); err != nil {
			errc <- err
			return
		}
		errc <- f(mnt)
	}()
	return <-errc
}

// privateReadOnlyBind gives the calling thread its own mount namespace,
// stops mounts propagating out of it, and mounts rootfs read-only at mnt
// with a proc filesystem on its /proc.
func privateReadOnlyBind(rootfs, mnt string) error {
	if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := syscall.Mount(rootfs, mnt, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s: %w", rootfs, err)
	}
	const ro = syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY | syscall.MS_NOSUID
	if err := syscall.Mount("", mnt, "", ro, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", mnt, err)
	}
	proc := filepath.Join(mnt, "proc")
	if err := syscall.Mount("proc", proc, "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting %s: %w", proc, err)
	}
	return nil
}

// RootfsCommand is argv run chrooted into root as the sandbox user, in
// /workspace. Call it, and start the command, on InReadOnlyRoot's
// goroutine: the child inherits that thread's mount namespace.
func RootfsCommand(root string, argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = rootfsEnv
	cmd.Dir = ocispec.WorkDir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot:     root,
		Credential: &syscall.Credential{Uid: ocispec.UID, Gid: ocispec.GID},
		Pdeathsig:  syscall.SIGKILL,
	}
	return cmd
}
