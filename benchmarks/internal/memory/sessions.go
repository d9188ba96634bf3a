package memory

import (
	"maps"
	"path/filepath"
	"slices"

	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// Sandboxes reads the memory cgroup of every gVisor sandbox s has now,
// whatever holds it (a pool, a session), as the idle rows read theirs.
// On a server with no pool these are its sessions' sandboxes.
func Sandboxes(s *server.Server, cg host.Cgroups) ([]report.MemSample, error) {
	byLang, err := host.SandboxCgroups(cg.Root, s.StateDir())
	if err != nil {
		return nil, err
	}
	var out []report.MemSample
	for _, name := range slices.Sorted(maps.Keys(byLang)) {
		for _, id := range byLang[name] {
			m, err := readMemCgroup(filepath.Join(cg.Root, id), cg.V2)
			if err != nil {
				return nil, err
			}
			m.ID = id
			if m.SentryAnon, m.GoferAnon, err = host.RunscAnon(filepath.Join(cg.Root, id, "cgroup.procs"), "/proc"); err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	return out, nil
}
