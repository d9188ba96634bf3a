package host

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Cgroups is where the memory cgroups of Paddock's sandboxes are:
// one per sandbox under Root, named by its ID (Paddock's cgroup parent is
// /paddock), and which cgroup version holds them.
type Cgroups struct {
	Root string
	V2   bool
}

// cgroup2Magic is the statfs type of a cgroup v2 (unified) mount.
const cgroup2Magic = 0x63677270

// DetectCgroups finds the host's memory cgroups: the unified
// hierarchy when /sys/fs/cgroup is cgroup v2, else the v1 memory
// controller (also on hybrid hosts, whose v2 hierarchy has no
// controllers).
func DetectCgroups(sysfs string) (Cgroups, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(sysfs, &st); err != nil {
		return Cgroups{}, fmt.Errorf("statfs %s: %w", sysfs, err)
	}
	if st.Type == cgroup2Magic {
		return Cgroups{Root: filepath.Join(sysfs, "paddock"), V2: true}, nil
	}
	return Cgroups{Root: filepath.Join(sysfs, "memory", "paddock")}, nil
}

func (c Cgroups) String() string {
	if c.V2 {
		return "cgroup v2, " + c.Root
	}
	return "cgroup v1, " + c.Root
}

// StartKindOf reads how container id under runsc root dir was made from
// its runsc state file: "restore" when runsc restored its sandbox from an
// image, else "cold".
func StartKindOf(root, id string) (string, error) {
	files, _ := filepath.Glob(filepath.Join(root, id+"_sandbox:*.state"))
	if len(files) != 1 {
		return "", fmt.Errorf("runsc state of %s: %d files under %s", id, len(files), root)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return "", err
	}
	var st struct {
		Sandbox *struct {
			Restored bool `json:"restored"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Sandbox == nil {
		return "", fmt.Errorf("runsc state of %s: no sandbox in %s (%v)", id, files[0], err)
	}
	if st.Sandbox.Restored {
		return "restore", nil
	}
	return "cold", nil
}

// SandboxCgroups lists the memory cgroups under cgRoot that belong to the
// server whose state directory is state: those with a bundle under
// state/bundles. It groups their IDs by the language the bundle's agent
// runs.
func SandboxCgroups(cgRoot, state string) (map[string][]string, error) {
	return OwnCgroups(cgRoot, func(id string) string { return filepath.Join(state, "bundles", id, "config.json") }, BundleLanguage)
}

// OwnCgroups lists the cgroups under cgRoot whose sandbox has a state
// file at stateFile(id) (another server's sandbox, or one being made or
// torn down, has none), grouped by the name groupOf reads from that file.
func OwnCgroups(cgRoot string, stateFile func(id string) string, groupOf func([]byte) string) (map[string][]string, error) {
	ents, err := os.ReadDir(cgRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(stateFile(e.Name()))
		if err != nil {
			continue
		}
		name := groupOf(b)
		out[name] = append(out[name], e.Name())
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out, nil
}

// BundleLanguage reads the agent's --language flag from an OCI spec.
func BundleLanguage(spec []byte) string {
	var s struct {
		Process struct {
			Args []string `json:"args"`
		} `json:"process"`
	}
	if json.Unmarshal(spec, &s) == nil {
		for _, a := range s.Process.Args {
			if v, ok := strings.CutPrefix(a, "--language="); ok {
				return v
			}
		}
	}
	return "unknown"
}

// ParseMemStat reads memory.stat (v1 or v2): "key value" lines.
func ParseMemStat(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", sc.Text(), err)
		}
		out[k] = n
	}
	return out, sc.Err()
}

// StatValue prefers the hierarchical total_ counter, which includes the
// cgroup's children.
func StatValue(st map[string]uint64, key string) uint64 {
	if v, ok := st["total_"+key]; ok {
		return v
	}
	return st[key]
}

// ForRunc is where the runc runtime's memory cgroups are: under its own
// parent, /paddock-runc, beside gVisor's /paddock.
func (c Cgroups) ForRunc() Cgroups {
	c.Root = filepath.Join(filepath.Dir(c.Root), "paddock-runc")
	return c
}

// RuncSandboxCgroups is sandboxCgroups for a runc server: the memory
// cgroups under cgRoot of the containers libcontainer keeps state for
// under state/runc/containers, grouped by their template label.
func RuncSandboxCgroups(cgRoot, state string) (map[string][]string, error) {
	return OwnCgroups(cgRoot, func(id string) string { return filepath.Join(state, "runc", "containers", id, "state.json") }, stateTemplate)
}

// stateTemplate reads the template label from a libcontainer state file.
func stateTemplate(state []byte) string {
	var s struct {
		Config struct {
			Labels []string `json:"labels"`
		} `json:"config"`
	}
	if json.Unmarshal(state, &s) == nil {
		for _, l := range s.Config.Labels {
			if v, ok := strings.CutPrefix(l, "dev.paddock.template="); ok {
				return v
			}
		}
	}
	return "unknown"
}

// BundleTemplate reads the template label from an OCI spec's annotations.
func BundleTemplate(spec []byte) string {
	var s struct {
		Annotations map[string]string `json:"annotations"`
	}
	if json.Unmarshal(spec, &s) == nil && s.Annotations["dev.paddock.template"] != "" {
		return s.Annotations["dev.paddock.template"]
	}
	return "unknown"
}
