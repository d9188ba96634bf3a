package runsc

import (
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/paddock-dev/paddock/runner"
)

// A networked sandbox's /etc/resolv.conf names the egress DNS responder
// (runner.EgressAddr), which answers the names its policy allows with the
// proxy's own address: code that ignores the proxy variables then
// reaches the proxy's transparent listeners. runsc leaves resolv.conf to
// the container's files, and the root filesystems carry a placeholder
// (rootfs/customize.go), so the runtime mounts its own file over it,
// read-only; a sandbox without a network keeps the placeholder.

// resolvConfText is the file's content.
const resolvConfText = "# Paddock: names are answered by this sandbox's egress proxy, for the hosts its policy allows.\n" +
	"nameserver " + runner.EgressAddr + "\n" +
	"options attempts:2 timeout:2\n"

// resolvConfPath writes the runtime's resolv.conf into stateDir, whole
// (a new file renamed into place, so that a sandbox starting meanwhile
// never mounts half of one), and returns its path.
func resolvConfPath(stateDir string) (string, error) {
	path := filepath.Join(stateDir, "resolv.conf")
	tmp, err := os.CreateTemp(stateDir, ".resolv.conf-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.WriteString(resolvConfText)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}

// withResolvConf mounts the file at path over the sandbox's
// /etc/resolv.conf, read-only.
func withResolvConf(s *specs.Spec, path string) {
	s.Mounts = append(s.Mounts, specs.Mount{Destination: "/etc/resolv.conf", Type: "bind", Source: path,
		Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
}
