package rootfs

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// versionTimeout bounds one version command.
const versionTimeout = time.Minute

// versionEnv is the whole environment of a version command. Bytecode and
// caches must not be written into the image.
var versionEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root",
	"LC_ALL=C.UTF-8",
	"PYTHONDONTWRITEBYTECODE=1",
}

// recordVersions runs each command inside tree with chroot and returns its
// trimmed standard output by name. A failing command fails the build: the
// image cannot run what it was built for.
func recordVersions(ctx context.Context, tree string, commands map[string][]string) (map[string]string, error) {
	chroot := chrootPath()
	versions := make(map[string]string, len(commands))
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		out, err := runInTree(ctx, chroot, tree, commands[name])
		if err != nil {
			return nil, fmt.Errorf("version of %s: %w", name, err)
		}
		versions[name] = out
	}
	return versions, nil
}

// chrootPath is the host's chroot.
func chrootPath() string {
	if p, err := exec.LookPath("chroot"); err == nil {
		return p
	}
	return "/usr/sbin/chroot"
}

func runInTree(ctx context.Context, chroot, tree string, argv []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, chroot, append([]string{tree}, argv...)...)
	cmd.Env = versionEnv
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%q: %w: %s", argv, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}
