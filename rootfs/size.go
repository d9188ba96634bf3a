package rootfs

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

// diskUsage is the disk space the files under dir take, each hard-linked
// file counted once, like du.
func diskUsage(dir string) (int64, error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Nlink > 1 && !fi.IsDir() {
			id := inode{st.Dev, st.Ino}
			if seen[id] {
				return nil
			}
			seen[id] = true
		}
		total += st.Blocks * 512
		return nil
	})
	return total, err
}
