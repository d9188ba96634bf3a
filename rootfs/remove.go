package rootfs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// removeTree deletes a build directory. A build killed mid-way can leave
// /proc, /sys or /dev mounted inside its chroot: removeTree unmounts what
// the mount table shows under dir first, and refuses to descend into
// anything on another filesystem, so a leftover mount can never make it
// delete the host's files.
func removeTree(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	} else if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := unmountUnder(dir); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return removeSameDevice(dir, fi.Sys().(*syscall.Stat_t).Dev)
}

// unmountUnder detaches every mount at or below dir, deepest first.
func unmountUnder(dir string) error {
	points, err := mountPoints()
	if err != nil {
		return err
	}
	var under []string
	for _, p := range points {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			under = append(under, p)
		}
	}
	slices.SortFunc(under, func(a, b string) int { return len(b) - len(a) })
	for _, p := range under {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("unmounting leftover %s: %w", p, err)
		}
	}
	return nil
}

// mountPoints lists the mount points of the calling thread's mount
// namespace. Not /proc/self: that is the main thread's view, and a
// goroutine that locks its thread into another namespace and exits (as
// libcontainer's mount-source helper does on every container start)
// leaves the main thread wedged in that namespace for good.
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/thread-self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading mount table: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			points = append(points, unescapeMountPath(fields[4]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mount table: %w", err)
	}
	return points, nil
}

// unescapeMountPath undoes the kernel's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeSameDevice removes path and everything below it, failing before it
// touches anything that lives on a device other than dev.
func removeSameDevice(path string, dev uint64) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	if fi.Sys().(*syscall.Stat_t).Dev != dev {
		return fmt.Errorf("refusing to remove %s: it is on another filesystem (a leftover mount?)", path)
	}
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return fmt.Errorf("removing %s: %w", path, err)
		}
		for _, e := range entries {
			if err := removeSameDevice(filepath.Join(path, e.Name()), dev); err != nil {
				return err
			}
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}
