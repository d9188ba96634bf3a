package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
)

// pythonPackages is where Debian installs Python packages.
const pythonPackages = "usr/lib/python3/dist-packages"

// removePythonTests removes the "tests" directories inside Python packages
// (numpy/tests, scipy/linalg/tests…): nothing in a sandbox runs them, pytest
// is not installed, and they are a third of the python image.
func removePythonTests(root *os.Root) error {
	var dirs []string
	err := fs.WalkDir(root.FS(), pythonPackages, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "tests" && path.Dir(p) != pythonPackages {
			dirs = append(dirs, p)
			return fs.SkipDir
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if err := root.RemoveAll(dir); err != nil {
			return err
		}
	}
	return nil
}
