package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/host"
	"github.com/paddock-dev/paddock/benchmarks/internal/langs"
)

// AwaitRestoredPool waits until l's snapshot is built and every ready
// sandbox of l's pool was made by restoring it, running one-shots to use
// up the sandboxes that were booted while the snapshot was being built:
// restored clones are what the pool serves once it is warm, and they
// differ (memory is loaded as it is touched).
func (s *Server) AwaitRestoredPool(ctx context.Context, l langs.Lang, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	state := ""
	for {
		m, err := s.PoolMetrics(ctx)
		if err != nil {
			return fmt.Errorf("waiting for a pool of restored %s sandboxes: %w", l.Name, err)
		}
		switch state = SnapshotState(m, l.Name); state {
		case "failed", "off":
			return fmt.Errorf("no pool of restored %s sandboxes: snapshot state %q", l.Name, state)
		case "ready":
			if err := s.AwaitFull(ctx, l.Name); err != nil {
				return err
			}
			kinds, err := s.readyStartKinds(l.Name)
			if err == nil && len(kinds) > 0 && kinds["cold"] == 0 {
				return nil
			}
			if _, _, err := s.RunOnce(ctx, l.Name, l.Probes[0].Code); err != nil {
				return err
			}
			continue
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s's snapshot (state %q): %w", l.Name, state, err)
		}
	}
}

// readyStartKinds counts how the server's live sandboxes of language
// name were made, from their bundles and runsc state.
func (s *Server) readyStartKinds(name string) (map[string]int, error) {
	return s.startKinds(func(config []byte) bool { return host.BundleLanguage(config) == name })
}

// startKinds counts how the server's live sandboxes whose bundle config
// match accepts were made, from their runsc state; a sandbox whose runsc
// state is not written yet is an error (it is still starting).
func (s *Server) startKinds(match func(config []byte) bool) (map[string]int, error) {
	ents, err := os.ReadDir(filepath.Join(s.state, "bundles"))
	if err != nil {
		return nil, err
	}
	kinds := map[string]int{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(s.state, "bundles", e.Name(), "config.json"))
		if err != nil || !match(b) {
			continue
		}
		kind, err := host.StartKindOf(filepath.Join(s.state, "runsc"), e.Name())
		if err != nil {
			return nil, err
		}
		kinds[kind]++
	}
	return kinds, nil
}

// OwnSandbox says whether the sandbox cgroup id is one of s's: its bundle
// is in s's state directory.
func (s *Server) OwnSandbox(id string) bool {
	_, err := os.Stat(s.state + "/bundles/" + id + "/config.json")
	return err == nil
}

// AwaitRestoredListing waits until the listing shows name's snapshot
// ready and restored from at least once, then until its pool is full.
func (s *Server) AwaitRestoredListing(ctx context.Context, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		ps, err := s.Pools(ctx)
		if err != nil {
			return err
		}
		p := ps[name]
		switch {
		case p.Pool.Snapshot == "failed" || p.Pool.Snapshot == "off":
			return fmt.Errorf("no pool of restored %s sandboxes: snapshot state %q", name, p.Pool.Snapshot)
		case p.Pool.Snapshot == "ready" && p.Pool.Restores > 0:
			return s.AwaitFull(ctx, name)
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s's snapshot (state %q): %w", name, p.Pool.Snapshot, err)
		}
	}
}

// AwaitRestoredTemplate waits until template name's pool is full and, if
// the template is snapshotted, holds only restored sandboxes: the pool
// first fills by cold starts while the snapshot is built, so runs cycle
// those out.
func (s *Server) AwaitRestoredTemplate(ctx context.Context, name string, timeout time.Duration) error {
	t, l, err := langs.ForTemplate(name)
	if err != nil {
		return err
	}
	if !t.Snapshot {
		return s.AwaitFull(ctx, name)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		states, err := s.Pools(ctx)
		if err != nil {
			return fmt.Errorf("waiting for a pool of restored %s sandboxes: %w", name, err)
		}
		switch st := states[name].Pool.Snapshot; st {
		case "failed", "off":
			return fmt.Errorf("no pool of restored %s sandboxes: snapshot state %q", name, st)
		case "ready":
			if err := s.AwaitFull(ctx, name); err != nil {
				return err
			}
			kinds, err := s.templateStartKinds(name)
			if err == nil && len(kinds) > 0 && kinds["cold"] == 0 {
				return nil
			}
			if _, _, err := s.RunBody(ctx, name, map[string]string{"template": name, "code": l.Probes[0].Code}); err != nil {
				return err
			}
			continue
		}
		if err := bench.Sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("waiting for %s's snapshot: %w", name, err)
		}
	}
}

// templateStartKinds counts how the server's live sandboxes of template
// name were made.
func (s *Server) templateStartKinds(name string) (map[string]int, error) {
	return s.startKinds(func(config []byte) bool { return host.BundleTemplate(config) == name })
}

// RestoreTimeout bounds the wait for a server's first restore: its
// snapshot may have to be built (a cold start with the warm-up, then a
// checkpoint).
const RestoreTimeout = 3 * time.Minute
