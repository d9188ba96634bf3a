package rootfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// harden makes the tree read-only to the sandbox user: nothing but its
// home and /tmp stays writable by uid 1000, by ownership or by mode.
//
//   - Files owned by the sandbox uid or gid are given to root.
//   - The "others" write bit goes from every file and directory (and with
//     it the sticky bit of directories like /var/tmp and /run/lock).
//   - Set-user-ID and set-group-ID bits go from regular files: su, mount,
//     passwd and friends have no use in a sandbox.
//
// Device nodes under /dev and symlinks are left alone.
func harden(tree string) error {
	keep := map[string]bool{
		filepath.Join(tree, sandboxHome): true,
		filepath.Join(tree, "tmp"):       true,
	}
	return filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if keep[path] {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() && !d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid == sandboxUID || st.Gid == sandboxGID {
			if err := os.Lchown(path, 0, 0); err != nil {
				return fmt.Errorf("giving %s to root: %w", path, err)
			}
		}
		mode := fi.Mode()
		want := mode
		if mode.Perm()&0o002 != 0 {
			want &^= 0o002 | fs.ModeSticky
		}
		if mode.IsRegular() {
			want &^= fs.ModeSetuid | fs.ModeSetgid
		}
		if want == mode {
			return nil
		}
		if err := os.Chmod(path, want&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return fmt.Errorf("hardening %s: %w", path, err)
		}
		return nil
	})
}
