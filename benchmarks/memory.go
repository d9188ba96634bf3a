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
	"time"
)

// memCgroupRoot holds one memory cgroup per Paddock sandbox (cgroup v1),
// named by the sandbox ID.
const memCgroupRoot = "/sys/fs/cgroup/memory/paddock"

// memSample is the host memory one idle sandbox holds, in bytes.
type memSample struct {
	ID    string `json:"id"`
	Usage uint64 `json:"usage_bytes"` // memory.usage_in_bytes: everything charged, page cache included
	RSS   uint64 `json:"rss_bytes"`   // anonymous memory (memory.stat rss)
	Shmem uint64 `json:"shmem_bytes"` // shared memory (memory.stat shmem): gVisor's guest memory file is charged here
}

// memRow is the memory of one template's idle pooled sandboxes on one
// server.
type memRow struct {
	Lang string
	// Start is how those sandboxes were made: "restore" or "cold".
	Start   string
	Samples []memSample
	Note    string
}

const mib = 1 << 20

// meanMB is the mean of field over the samples, in MiB.
func (m memRow) meanMB(field func(memSample) uint64) float64 {
	if len(m.Samples) == 0 {
		return 0
	}
	var sum float64
	for _, s := range m.Samples {
		sum += float64(field(s))
	}
	return sum / float64(len(m.Samples)) / mib
}

// idleMemory waits until s holds its pools full and idle, with no other
// sandbox alive, then reads the memory cgroup of each of its sandboxes.
func (s *server) idleMemory(ctx context.Context, settle time.Duration) ([]memRow, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		byLang, ready, err := s.quietCgroups(ctx)
		if err != nil {
			return nil, err
		}
		if ready {
			// Let restores finish loading memory and teardowns finish.
			if err := sleep(ctx, settle); err != nil {
				return nil, err
			}
			if again, still, err := s.quietCgroups(ctx); err == nil && still && sameIDs(byLang, again) {
				return s.readMemRows(byLang)
			}
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for idle pools: %w", err)
		}
	}
}

// quietCgroups returns the server's sandbox IDs by language and whether
// the server is quiet: every pool full, none in use, and exactly the ready
// sandboxes alive.
func (s *server) quietCgroups(ctx context.Context) (map[string][]string, bool, error) {
	ps, err := s.pools(ctx)
	if err != nil {
		return nil, false, err
	}
	byLang, err := sandboxCgroups(memCgroupRoot, s.state)
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

func (s *server) readMemRows(byLang map[string][]string) ([]memRow, error) {
	var rows []memRow
	for _, name := range slices.Sorted(maps.Keys(byLang)) {
		r := memRow{Lang: name, Start: "cold"}
		if l, ok := langByName(name); ok && l.snapshotted && s.cfg.snapshots {
			r.Start = "restore"
		}
		for _, id := range byLang[name] {
			m, err := readMemCgroup(filepath.Join(memCgroupRoot, id))
			if err != nil {
				return nil, err
			}
			m.ID = id
			r.Samples = append(r.Samples, m)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// sandboxCgroups lists the memory cgroups under cgRoot that belong to the
// server whose state directory is state: those with a bundle under
// state/bundles. It groups their IDs by the language the bundle's agent
// runs.
func sandboxCgroups(cgRoot, state string) (map[string][]string, error) {
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
		b, err := os.ReadFile(filepath.Join(state, "bundles", e.Name(), "config.json"))
		if err != nil {
			continue // another server's sandbox, or one being torn down
		}
		name := bundleLanguage(b)
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

func readMemCgroup(dir string) (memSample, error) {
	var m memSample
	b, err := os.ReadFile(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return m, err
	}
	if m.Usage, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err != nil {
		return m, fmt.Errorf("%s/memory.usage_in_bytes: %w", dir, err)
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
	m.RSS, m.Shmem = statValue(st, "rss"), statValue(st, "shmem")
	return m, nil
}

// parseMemStat reads cgroup v1 memory.stat: "key value" lines.
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
