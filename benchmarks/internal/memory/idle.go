package memory

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// Idle waits until s holds its pools full and idle, with no other
// sandbox alive, then reads the memory cgroup of each of its sandboxes.
func Idle(ctx context.Context, s *server.Server, cg host.Cgroups, settle time.Duration) ([]report.MemRow, error) {
	// Two minutes for the pools to become quiet, plus the settling.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute+settle)
	defer cancel()
	for {
		byLang, ready, err := quietCgroups(ctx, s, cg)
		if err != nil {
			return nil, err
		}
		if ready {
			// Let restores finish loading memory and teardowns finish.
			if err := bench.Sleep(ctx, settle); err != nil {
				return nil, err
			}
			if again, still, err := quietCgroups(ctx, s, cg); err == nil && still && sameIDs(byLang, again) {
				return readMemRows(s, cg, byLang)
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
func quietCgroups(ctx context.Context, s *server.Server, cg host.Cgroups) (map[string][]string, bool, error) {
	ps, err := s.Pools(ctx)
	if err != nil {
		return nil, false, err
	}
	list := host.SandboxCgroups
	if s.Config().Runtime == "runc" {
		list = host.RuncSandboxCgroups
	}
	byLang, err := list(cg.Root, s.StateDir())
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
func readMemRows(s *server.Server, cg host.Cgroups, byLang map[string][]string) ([]report.MemRow, error) {
	var rows []report.MemRow
	for _, name := range slices.Sorted(maps.Keys(byLang)) {
		byStart := map[string]*report.MemRow{}
		for _, id := range byLang[name] {
			start := "runc"
			if s.Config().Runtime != "runc" {
				var err error
				if start, err = host.StartKindOf(filepath.Join(s.StateDir(), "runsc"), id); err != nil {
					return nil, err
				}
			}
			m, err := readMemCgroup(filepath.Join(cg.Root, id), cg.V2)
			if err != nil {
				return nil, err
			}
			m.ID = id
			if m.SentryAnon, m.GoferAnon, err = host.RunscAnon(filepath.Join(cg.Root, id, "cgroup.procs"), "/proc"); err != nil {
				return nil, err
			}
			if byStart[start] == nil {
				byStart[start] = &report.MemRow{Lang: name, Server: s.Config().Describe(), Start: start}
			}
			byStart[start].Samples = append(byStart[start].Samples, m)
		}
		for _, start := range slices.Sorted(maps.Keys(byStart)) {
			rows = append(rows, *byStart[start])
		}
	}
	return rows, nil
}

// readMemCgroup reads one sandbox's memory cgroup: v1's
// memory.usage_in_bytes and hierarchical memory.stat counters, or v2's
// memory.current and memory.stat (hierarchical already, rss named anon).
func readMemCgroup(dir string, v2 bool) (report.MemSample, error) {
	var m report.MemSample
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
	st, err := host.ParseMemStat(f)
	if err != nil {
		return m, fmt.Errorf("%s/memory.stat: %w", dir, err)
	}
	if v2 {
		m.RSS, m.Shmem = st[rssKey], st["shmem"]
	} else {
		m.RSS, m.Shmem = host.StatValue(st, rssKey), host.StatValue(st, "shmem")
	}
	return m, nil
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

// IdleByTemplate is Idle with the sandboxes grouped by
// template (the label Paddock puts in each bundle), not by language:
// both templates of the pair run python.
func IdleByTemplate(ctx context.Context, s *server.Server, cg host.Cgroups, settle time.Duration) ([]report.MemRow, error) {
	// Two minutes for the pools to become quiet, plus the settling.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute+settle)
	defer cancel()
	byTemplate := func() (map[string][]string, error) {
		return host.OwnCgroups(cg.Root, func(id string) string { return filepath.Join(s.StateDir(), "bundles", id, "config.json") }, host.BundleTemplate)
	}
	for {
		_, ready, err := quietCgroups(ctx, s, cg)
		if err != nil {
			return nil, err
		}
		if ready {
			before, err := byTemplate()
			if err != nil {
				return nil, err
			}
			if err := bench.Sleep(ctx, settle); err != nil {
				return nil, err
			}
			after, err := byTemplate()
			if _, still, qerr := quietCgroups(ctx, s, cg); err == nil && qerr == nil && still && sameIDs(before, after) {
				return readMemRows(s, cg, after)
			}
		}
		if err := bench.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for idle pools: %w", err)
		}
	}
}
