package host

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
)

// DiskUsage is the disk the files under dir take, as du counts it: the
// blocks allocated to each regular file and directory, a file with
// several links counted once. A file removed while it walks is skipped.
func DiskUsage(dir string) (int64, error) {
	var sum int64
	seen := map[uint64]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errorIsNotExist(err) {
				return nil
			}
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(path, &st); err != nil {
			if errorIsNotExist(err) {
				return nil
			}
			return err
		}
		if st.Nlink > 1 && !d.IsDir() {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		sum += st.Blocks * 512
		return nil
	})
	return sum, err
}

// DiskFree is the space left to unprivileged writers on the file system
// that holds path.
func DiskFree(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

func errorIsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
