package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
)

// memCgroups is where the memory cgroups of Paddock's sandboxes are:
// one per sandbox under Root, named by its ID (Paddock's cgroup parent is
// /paddock), and which cgroup version holds them.
type memCgroups struct {
	Root string
	V2   bool
}

// cgroup2Magic is the statfs type of a cgroup v2 (unified) mount.
const cgroup2Magic = 0x63677270

// detectMemCgroups finds the host's memory cgroups: the unified
// hierarchy when /sys/fs/cgroup is cgroup v2, else the v1 memory
// controller (also on hybrid hosts, whose v2 hierarchy has no
// controllers).
func detectMemCgroups(sysfs string) (memCgroups, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(sysfs, &st); err != nil {
		return memCgroups{}, fmt.Errorf("statfs %s: %w", sysfs, err)
	}
	if st.Type == cgroup2Magic {
		return memCgroups{Root: filepath.Join(sysfs, "paddock"), V2: true}, nil
	}
	return memCgroups{Root: filepath.Join(sysfs, "memory", "paddock")}, nil
}

func (c memCgroups) String() string {
	if c.V2 {
		return "cgroup v2, " + c.Root
	}
	return "cgroup v1, " + c.Root
}

// memSample is the host memory one idle sandbox holds, in bytes.
type memSample struct {
	ID string `json:"id"`
	// Usage is everything charged to the sandbox, page cache included:
	// memory.usage_in_bytes (v1) or memory.current (v2).
	Usage uint64 `json:"usage_bytes"`
	// RSS is its anonymous memory: memory.stat rss (v1) or anon (v2).
	RSS uint64 `json:"rss_bytes"`
	// Shmem is its shared memory (memory.stat shmem): gVisor's guest
	// memory file is charged here.
	Shmem uint64 `json:"shmem_bytes"`
	// SentryAnon and GoferAnon split RSS by gVisor process: the anonymous
	// memory of runsc-sandbox and of runsc-gofer (see runscAnon); 0 on
	// runc.
	SentryAnon uint64 `json:"sentry_anon_bytes"`
	GoferAnon  uint64 `json:"gofer_anon_bytes"`
}

// memRow is the memory of one template's idle pooled sandboxes on one
// server that were made the same way.
type memRow struct {
	Lang string
	// Server names the server the sandboxes were pooled on.
	Server string
	// Start is how those sandboxes were made, read from each sandbox's
	// runsc state: "restore" or "cold".
	Start   string
	Samples []memSample
	Note    string
}

const mib = 1 << 20

// meanMB is the mean of field over the samples, in MiB.
func (m memRow) meanMB(field func(memSample) uint64) float64 {
	return meanMiB(m.Samples, field)
}

// meanMiB is the mean of field over samples, in MiB; 0 for none.
func meanMiB[S any](samples []S, field func(S) uint64) float64 {
	if len(samples) == 0 {
		return 0
	}
	var sum float64
	for _, s := range samples {
		sum += float64(field(s))
	}
	return sum / float64(len(samples)) / mib
}

// idleMemory waits until s holds its pools full and idle, with no other
// sandbox alive, then reads the memory cgroup of each of its sandboxes.
func (s *server) idleMemory(ctx context.Context, cg memCgroups, settle time.Duration) ([]memRow, error) {
	// Two minutes for the pools to become quiet, plus the settling.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute+settle)
	defer cancel()
	for {
		byLang, ready, err := s.quietCgroups(ctx, cg)
		if err != nil {
			return nil, err
		}
		if ready {
			// Let restores finish loading memory and teardowns finish.
			if err := bench.Sleep(ctx, settle); err != nil {
				return nil, err
			}
			if again, still, err := s.quietCgroups(ctx, cg); err == nil && still && sameIDs(byLang, again) {
				return s.readMemRows(cg, byLang)
			}
		}
		if err := bench.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for idle pools: %w", err)
		}
	}
}

// quietCgroups returns the server's sandbox IDs by language and whether
// the server is quiet: every pool full, none in use, and exactly the ready
// sandboxes alive.
func (s *server) quietCgroups(ctx context.Context, cg memCgroups) (map[string][]string, bool, error) {
	ps, err := s.pools(ctx)
	if err != nil {
		return nil, false, err
	}
	list := sandboxCgroups
	if s.cfg.runtime == "runc" {
		list = runcSandboxCgroups
	}
	byLang, err := list(cg.Root, s.state)
	if err != nil {
		return nil, false, err
	}
	ready, alive := 0, 0
	for _, t := range ps {
		if t.Pool.Ready < t.Pool.Target || t.Pool.InUse > 0 {
			return byLang, false, nil
		}
		ready += t.Pool.Ready
	}
	for _, ids := range byLang {
		alive += len(ids)
	}
	return byLang, ready > 0 && alive == ready, nil
}

// readMemRows reads the memory of the sandboxes in byLang and groups it
// by language and by how each sandbox was made.
func (s *server) readMemRows(cg memCgroups, byLang map[string][]string) ([]memRow, error) {
	var rows []memRow
	for _, name := range slices.Sorted(maps.Keys(byLang)) {
		byStart := map[string]*memRow{}
		for _, id := range byLang[name] {
			start := "runc"
			if s.cfg.runtime != "runc" {
				var err error
				if start, err = startKindOf(filepath.Join(s.state, "runsc"), id); err != nil {
					return nil, err
				}
			}
			m, err := readMemCgroup(filepath.Join(cg.Root, id), cg.V2)
			if err != nil {
				return nil, err
			}
			m.ID = id
			if m.SentryAnon, m.GoferAnon, err = runscAnon(filepath.Join(cg.Root, id, "cgroup.procs"), "/proc"); err != nil {
				return nil, err
			}
			if byStart[start] == nil {
				byStart[start] = &memRow{Lang: name, Server: s.cfg.describe(), Start: start}
			}
			byStart[start].Samples = append(byStart[start].Samples, m)
		}
		for _, start := range slices.Sorted(maps.Keys(byStart)) {
			rows = append(rows, *byStart[start])
		}
	}
	return rows, nil
}

// startKindOf reads how container id under runsc root dir was made from
// its runsc state file: "restore" when runsc restored its sandbox from an
// image, else "cold".
func startKindOf(root, id string) (string, error) {
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

// sandboxCgroups lists the memory cgroups under cgRoot that belong to the
// server whose state directory is state: those with a bundle under
// state/bundles. It groups their IDs by the language the bundle's agent
// runs.
func sandboxCgroups(cgRoot, state string) (map[string][]string, error) {
	return ownCgroups(cgRoot, func(id string) string { return filepath.Join(state, "bundles", id, "config.json") }, bundleLanguage)
}

// ownCgroups lists the cgroups under cgRoot whose sandbox has a state
// file at stateFile(id) (another server's sandbox, or one being made or
// torn down, has none), grouped by the name groupOf reads from that file.
func ownCgroups(cgRoot string, stateFile func(id string) string, groupOf func([]byte) string) (map[string][]string, error) {
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

// bundleLanguage reads the agent's --language flag from an OCI spec.
func bundleLanguage(spec []byte) string {
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

// readMemCgroup reads one sandbox's memory cgroup: v1's
// memory.usage_in_bytes and hierarchical memory.stat counters, or v2's
// memory.current and memory.stat (hierarchical already, rss named anon).
func readMemCgroup(dir string, v2 bool) (memSample, error) {
	var m memSample
	usageFile, rssKey := "memory.usage_in_bytes", "rss"
	if v2 {
		usageFile, rssKey = "memory.current", "anon"
	}
	b, err := os.ReadFile(filepath.Join(dir, usageFile))
	if err != nil {
		return m, err
	}
	if m.Usage, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
		return m, fmt.Errorf("%s/%s: %w", dir, usageFile, err)
	}
	f, err := os.Open(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return m, err
	}
	defer f.Close()
	st, err := parseMemStat(f)
	if err != nil {
		return m, fmt.Errorf("%s/memory.stat: %w", dir, err)
	}
	if v2 {
		m.RSS, m.Shmem = st[rssKey], st["shmem"]
	} else {
		m.RSS, m.Shmem = statValue(st, rssKey), statValue(st, "shmem")
	}
	return m, nil
}

// parseMemStat reads memory.stat (v1 or v2): "key value" lines.
func parseMemStat(r io.Reader) (map[string]uint64, error) {
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

// statValue prefers the hierarchical total_ counter, which includes the
// cgroup's children.
func statValue(st map[string]uint64, key string) uint64 {
	if v, ok := st["total_"+key]; ok {
		return v
	}
	return st[key]
}

func sameIDs(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
